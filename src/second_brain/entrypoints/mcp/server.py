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
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, Icon, ToolAnnotations
from pydantic import ValidationError

from ... import __version__
from ...app import operations as ops
from ...app.brain import Brain
from ...app.handling import Context
from ...domain.errors import BrainError
from ...domain.identity import Identity
from . import conflicts, insights, links, memories, projects, reminders, team, timeline
from .arguments import argument_errors, unknown_arguments
from .render import ANSWERED, ZONE, agents_view, for_agents
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
# then reads), reminders, timeline, conflicts, team, projects, links; the prompts brief (insights, which has no
# tool) before changes_since (timeline).
CAPABILITIES: tuple[Register, ...] = (insights.register, memories.register, reminders.register, timeline.register,
                                      conflicts.register, team.register, projects.register, links.register)


class BrainMCPServer(MCPServer):
    """The SDK's server, with tool descriptions read as cleaned docstrings (no source indentation), a title on every
    tool, schemas that take no argument they do not name (`additionalProperties: false`), and rejected arguments
    answered in one sentence naming the argument and the rule (arguments.py): an unknown one with the argument it
    most likely means, before anything runs."""

    def add_tool(self, fn: Callable[..., Any], name: str | None = None, title: str | None = None,
                 description: str | None = None, annotations: ToolAnnotations | None = None,
                 icons: list[Icon] | None = None, meta: dict[str, Any] | None = None,
                 structured_output: bool | None = None) -> None:
        name = name or fn.__name__
        super().add_tool(fn, name, title or TITLES.get(name, name.replace("_", " ").capitalize()),
                         description or inspect.cleandoc(fn.__doc__ or ""), annotations, icons, meta,
                         structured_output)
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            tool.parameters["additionalProperties"] = False
            # Published without a model: the SDK advertises it and leaves the answer to `call_tool` below.
            tool.fn_metadata.output_schema = OUTPUTS.get(name, ANSWER)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None and (refused := unknown_arguments(name, arguments, tool.parameters.get("properties", {}))):
            raise ToolError(refused)
        ANSWERED.set(None)
        try:
            result = await super().call_tool(name, arguments, context)
            answered = ANSWERED.get()
            if isinstance(result, CallToolResult) and not result.is_error and answered is not None:
                result.structured_content = agents_view(answered if isinstance(answered, dict) else
                                                        {"items": answered})
            return result
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(argument_errors(name, exc.__cause__)) from exc.__cause__
            if isinstance(exc.__cause__, ToolError):  # the brain's own sentence (`call`), named by its tool
                raise ToolError(f"{name}: {exc.__cause__}") from exc.__cause__
            raise

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        """A prompt, or an invalid-params error (-32602) in one sentence for what the caller sent wrong: an
        argument missing or unknown, or a value the operation refuses (never "Internal server error")."""
        prompt = self._prompt_manager.get_prompt(name)
        if prompt is not None:
            takes = [a.name for a in prompt.arguments or ()]
            missing = [a.name for a in prompt.arguments or () if a.required and a.name not in (arguments or {})]
            refused = unknown_arguments(name, arguments or {}, takes) or (
                f"{name}: {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required." if missing
                else None)
            if refused:
                raise MCPError(INVALID_PARAMS, refused)
        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as exc:
            cause: BaseException | None = exc
            while cause is not None and not isinstance(cause, ToolError | BrainError):
                cause = cause.__cause__
            if cause is None:
                raise
            raise MCPError(INVALID_PARAMS, f"{name}: {cause}") from exc


# Every tool's answer is data as well as text: the operation's answer (a list under `items`), times in ISO 8601 in
# the brain's time zone. The reads that agents lean on most say their main fields.
ANSWER: dict[str, Any] = {"type": "object", "additionalProperties": True}
_RESULT = {"type": "object", "properties": {
    "id": {"type": "string"}, "content": {"type": "string"}, "score": {"type": "number"},
    "match": {"enum": ["strong", "partial", "weak"]}, "tags": {"type": "array", "items": {"type": "string"}},
    "created_at": {"type": "string", "description": "ISO 8601, in the brain's time zone"},
    "superseded_by": {"type": ["string", "null"]}, "conflicts_with": {"type": "array", "items": {"type": "string"}},
    "review": {"type": "array", "items": {"type": "string"},
               "description": "review items to settle with answer_conflict"}}}
_ENTRY = {"type": "object", "properties": {
    "id": {"type": "string"}, "content": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
    "when_at": {"type": ["string", "null"], "description": "its reminder, ISO 8601 in the brain's time zone"}}}
OUTPUTS: dict[str, dict[str, Any]] = {
    "recall": {"type": "object", "properties": {"results": {"type": "array", "items": _RESULT},
                                                "message": {"type": "string"}, "query_used": {"type": "string"}},
               "required": ["results"]},
    "list_recent": {"type": "object", "properties": {"items": {"type": "array", "items": _ENTRY}},
                    "required": ["items"]},
    "due": {"type": "object", "properties": {"overdue": {"type": "array", "items": _ENTRY},
                                             "upcoming": {"type": "array", "items": _ENTRY}},
            "required": ["overdue", "upcoming"]},
    "get": _ENTRY,
}

# What each tool is called in a client's list (the rest: its name in words).
TITLES = {"remember": "Remember a note", "append": "Add to a memory", "update": "Rewrite a memory",
          "set_status": "Set a memory's status", "forget": "Forget a memory", "share": "Share or unshare a memory",
          "recall": "Recall memories", "list_recent": "List recent memories", "get": "Read one memory",
          "timeline": "Audit trail", "conflicts": "Conflicts to review", "answer_conflict": "Answer a conflict",
          "list_teams": "List teams", "list_projects": "List projects", "link": "Link two memories",
          "unlink": "Unlink two memories", "connections": "A memory's connections", "due": "What is due",
          "snooze": "Snooze a reminder", "clear_reminder": "Clear a reminder"}


def build_mcp(brain: Brain, identity: Callable[[], Identity]) -> MCPServer:
    """The MCP server over one brain; `identity` names the caller of the tool being run."""
    mcp: MCPServer = BrainMCPServer("second-brain", title="Second Brain", version=__version__,
                                    instructions=INSTRUCTIONS)

    async def call(operation: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a (blocking) operation off the event loop; a brain error becomes the tool's error text. What the
        caller must be told (someone else replaced their token) heads every answer that is an object."""
        ctx = Context(identity(), f"mcp-{uuid.uuid4().hex}")
        ZONE.set(ops.time_zone(brain))  # the rest of this tool call says its times in the brain's zone
        try:
            result = await anyio.to_thread.run_sync(functools.partial(operation, brain, ctx, *args, **kwargs))
        except BrainError as exc:
            raise ToolError(for_agents(said(exc))) from exc
        result = ({"notice": ctx.identity.notice, **result} if ctx.identity.notice and isinstance(result, dict)
                  else result)
        ANSWERED.set(result)
        return result

    def budget() -> int:
        return ops.output_budget(brain)

    for register in CAPABILITIES:
        register(mcp, call, budget)
    return mcp
