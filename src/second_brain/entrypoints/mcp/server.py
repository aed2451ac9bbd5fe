"""The MCP server: the brain's tools for AI clients, over streamable HTTP at /mcp and over stdio (`brain mcp`).

Every tool calls the same operation (app/operations/) as its REST route: the same parameters, defaults, limits,
`as_of` and error messages. What differs is the output, rendered for a model by `render.py`. The tools live one
module per capability, named as the REST module holding their routes (memories.py beside api/memories.py, ...);
this module only assembles them.
"""

import functools
import inspect
import uuid
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Icon, ToolAnnotations
from pydantic import ValidationError

from ... import __version__
from ...app import operations as ops
from ...app.brain import Brain
from ...app.handling import Context
from ...domain.errors import BrainError
from ...domain.identity import Identity
from . import conflicts, insights, links, memories, projects, team, timeline
from .arguments import argument_errors
from .tools import Register, said

INSTRUCTIONS = (
    "Second Brain is the user's long-term memory. Use `recall` before answering anything that may depend on "
    "what the user told you before (preferences, decisions, people, projects, facts). Use `remember` to save "
    "something worth keeping: one self-contained fact or decision per note, in plain words, with a few topic "
    "tags. When a fact changes, `append` to the memory that holds it or `update` it, rather than saving a "
    "near-copy. Results marked [truncated …] are partial: call `get` with the id before quoting or acting on "
    "them. Ids are UUIDs returned by remember, recall and list_recent."
)

# Each capability's tools, resources and prompts, in the order clients list them: the tools as memories (writes,
# then reads), timeline, conflicts, team, projects, links; the prompts brief (insights, which has no tool) before
# changes_since (timeline).
CAPABILITIES: tuple[Register, ...] = (insights.register, memories.register, timeline.register, conflicts.register,
                                      team.register, projects.register, links.register)


class BrainMCPServer(MCPServer):
    """The SDK's server, with tool descriptions read as cleaned docstrings (no source indentation) and rejected
    arguments answered in one sentence naming the argument and the rule (arguments.py)."""

    def add_tool(self, fn: Callable[..., Any], name: str | None = None, title: str | None = None,
                 description: str | None = None, annotations: ToolAnnotations | None = None,
                 icons: list[Icon] | None = None, meta: dict[str, Any] | None = None,
                 structured_output: bool | None = None) -> None:
        super().add_tool(fn, name, title, description or inspect.cleandoc(fn.__doc__ or ""), annotations, icons, meta,
                         structured_output)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(argument_errors(name, exc.__cause__)) from exc.__cause__
            raise


def build_mcp(brain: Brain, identity: Callable[[], Identity]) -> MCPServer:
    """The MCP server over one brain; `identity` names the caller of the tool being run."""
    mcp: MCPServer = BrainMCPServer("second-brain", title="Second Brain", version=__version__,
                                    instructions=INSTRUCTIONS)

    async def call(operation: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a (blocking) operation off the event loop; a brain error becomes the tool's error text. What the
        caller must be told (someone else replaced their token) heads every answer that is an object."""
        ctx = Context(identity(), f"mcp-{uuid.uuid4().hex}")
        try:
            result = await anyio.to_thread.run_sync(functools.partial(operation, brain, ctx, *args, **kwargs))
        except BrainError as exc:
            raise ToolError(said(exc)) from exc
        return {"notice": ctx.identity.notice, **result} if ctx.identity.notice and isinstance(result, dict) else result

    def budget() -> int:
        return ops.output_budget(brain)

    for register in CAPABILITIES:
        register(mcp, call, budget)
    return mcp
