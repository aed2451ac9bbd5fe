"""The MCP server: the brain's tools for AI clients, over streamable HTTP at /mcp and over stdio (`brain mcp`).

Every tool mirrors a REST route through `entrypoints/operations.py`: the same parameters, defaults,
limits and error messages. What differs is the output: text written for a model, bounded so a long
memory or a long result list cannot flood its context.
"""

import functools
import json
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Annotated, Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import __version__
from ..app.handling import Context
from ..app.recall.pipeline import RecallRequest
from ..bootstrap import Brain
from ..domain.errors import BrainError
from ..domain.identity import Identity
from . import operations as ops

LIST_SNIPPET_CHARS = 400
INSTRUCTIONS = (
    "Second Brain is the user's long-term memory. Use `recall` before answering anything that may depend on "
    "what the user told you before (preferences, decisions, people, projects, facts). Use `remember` to save "
    "something worth keeping: one self-contained fact or decision per note, in plain words, with a few topic "
    "tags. When a fact changes, `append` to the memory that holds it or `update` it, rather than saving a "
    "near-copy. Results marked [truncated …] are partial: call `get` with the id before quoting or acting on "
    "them. Ids are UUIDs returned by remember, recall and list_recent."
)

_identity: ContextVar[Identity | None] = ContextVar("mcp_identity", default=None)

Text = Annotated[str, Field(description="Plain text.")]
MemoryId = Annotated[str, Field(description="The memory's id (a UUID from remember, recall or list_recent).")]
Tags = Annotated[list[str] | None, Field(description="Topic tags, e.g. [\"work\", \"pricing\"]. #hashtags in the "
                                                    "text become tags too.")]
Volatility = Annotated[str | None, Field(description="How likely the fact is to stop being true: \"durable\" "
                                                     "(a birthday), \"state\" (a job, an address) or \"volatile\" "
                                                     "(a meeting time).")]
Workspace = Annotated[str | None, Field(description="\"personal\" or \"company\". Leave unset for the default.")]
Team = Annotated[str | None, Field(description="A team id from list_teams, with workspace \"company\".")]
Project = Annotated[str | None, Field(description="A project slug (see list_projects).")]
Millis = Annotated[int | None, Field(description="A time as Unix milliseconds.")]
LinkType = Annotated[str | None, Field(description="relates_to (default), supersedes, caused_by, decided, "
                                                   "about_person, part_of_project or follows.")]


def build_mcp(brain: Brain, identity: Callable[[], Identity]) -> MCPServer:
    """The MCP server over one brain; `identity` names the caller of the tool being run."""
    mcp: MCPServer = MCPServer("second-brain", title="Second Brain", version=__version__, instructions=INSTRUCTIONS)

    async def call(operation: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a (blocking) operation off the event loop; a brain error becomes the tool's error text."""
        ctx = Context(identity(), f"mcp-{uuid.uuid4().hex}")
        try:
            return await anyio.to_thread.run_sync(functools.partial(operation, brain, ctx, *args, **kwargs))
        except BrainError as exc:
            raise ToolError(exc.message) from exc

    @mcp.tool(structured_output=False)
    async def remember(content: Annotated[str, Field(description="The note, self-contained: it will be read "
                                                                  "later without this conversation.")],
                       tags: Tags = None, source: Annotated[str | None, Field(description="Where the note comes "
                                                                                         "from; default \"claude\".")] = None,
                       volatility: Volatility = None, workspace: Workspace = None, team: Team = None,
                       project: Annotated[str | None, Field(description="A project slug; an unknown one is "
                                                                       "created.")] = None,
                       when: Annotated[str | None, Field(description="When it is due or happens: ISO date or "
                                                                     "date-time, or Unix ms.")] = None,
                       when_kind: Annotated[str | None, Field(description="\"due\", \"event\" or \"wake\" "
                                                                          "(default).")] = None) -> str:
        """Save a note to long-term memory. Repeats are refused, near-duplicates flagged, and a note that
        contradicts an older one retires it (kept for audit). Returns the id and what happened."""
        return _json(await call(ops.capture, content, tags, source, workspace, volatility, project, when,
                                when_kind, default_source="claude"))

    @mcp.tool(structured_output=False)
    async def append(id: MemoryId, addition: Annotated[str, Field(description="The new information.")],
                     volatility: Volatility = None) -> str:
        """Add new information to an existing memory under a dated "[Update …]" label, keeping the original."""
        return _json(await call(ops.append, id, addition, volatility))

    @mcp.tool(structured_output=False)
    async def update(id: MemoryId, content: Annotated[str, Field(description="The memory's complete new text.")],
                     tags: Annotated[list[str] | None, Field(description="Replaces the memory's tags; omit to keep "
                                                                         "them.")] = None,
                     volatility: Volatility = None) -> str:
        """Replace a memory's whole text (for a correction). To add to it, use append instead."""
        return _json(await call(ops.update, id, content, tags, volatility))

    @mcp.tool(structured_output=False)
    async def set_status(id: MemoryId, status: Annotated[str, Field(description="\"canonical\" (confirmed, "
                                                                                "protected), \"draft\" or "
                                                                                "\"deprecated\" (out of recall, "
                                                                                "kept for audit).")]) -> str:
        """Set a memory's lifecycle status."""
        return _json(await call(ops.set_status, id, status))

    @mcp.tool(structured_output=False)
    async def recall(query: Annotated[str, Field(description="What to look for, in plain words; exact names, "
                                                             "codes and identifiers work too.")],
                     topK: Annotated[int, Field(description="How many memories, 1-20.")] = 5,  # noqa: N803
                     tag: Annotated[str | None, Field(description="Only memories with this tag.")] = None,
                     after: Millis = None, before: Millis = None,
                     kind: Annotated[str | None, Field(description="\"episodic\" (events) or \"semantic\" "
                                                                   "(facts).")] = None,
                     hops: Annotated[int | None, Field(description="Also follow links this many steps, 0-3 "
                                                                   "(default: the DEFAULT_HOPS setting).")] = None,
                     workspace: Workspace = None, team: Team = None, project: Project = None) -> str:
        """Search long-term memory by meaning and by exact words, best match first. Long memories come back
        shortened: call get on any result marked [truncated …] before relying on it."""
        def run(brain: Brain, ctx: Context) -> tuple[dict[str, Any], int]:
            chosen = ops.filters(brain, ctx, workspace=workspace, tag=tag, after=after, before=before, kind=kind,
                                 project=project)
            request = RecallRequest(ops.required(query, "query"), max(1, min(20, topK)), chosen, False,
                                    None if hops is None else max(0, min(3, hops)))
            response = brain.recall.recall(ctx, request)
            brain.memories.record_recalls(ctx, [r["id"] for r in response["results"]])
            return response

        return render_recall(await call(run), brain.config.value("RECALL_OUTPUT_BUDGET"))

    @mcp.tool(structured_output=False)
    async def list_recent(n: Annotated[int, Field(description="How many, 1-50.")] = 10,
                          tag: Annotated[str | None, Field(description="Only memories with this tag.")] = None,
                          after: Millis = None, before: Millis = None, workspace: Workspace = None,
                          team: Team = None,
                          actor: Annotated[str | None, Field(description="Only those written by this author "
                                                                         "(name or id; \"me\").")] = None,
                          project: Project = None) -> str:
        """The most recent memories, newest first."""
        def run(brain: Brain, ctx: Context) -> list[dict[str, Any]]:
            chosen = ops.filters(brain, ctx, workspace=workspace, tag=tag, after=after, before=before, actor=actor,
                                 project=project)
            return brain.queries.recent(ctx, chosen, max(1, min(50, n)))

        return render_list(await call(run), brain.config.value("RECALL_OUTPUT_BUDGET"))

    @mcp.tool(structured_output=False)
    async def get(id: MemoryId) -> str:
        """One memory in full: its whole text, tags, status, dates and history counts."""
        return render_entry(await call(lambda brain, ctx: brain.queries.entry(ctx, ops.required(id, "id"))))

    @mcp.tool(structured_output=False)
    async def forget(id: MemoryId) -> str:
        """Delete a memory for good: its text is erased everywhere. To retire it but keep it for audit, use
        set_status with "deprecated" instead."""
        return _json(await call(ops.forget, id))

    @mcp.tool(structured_output=False)
    async def link(source_id: MemoryId, target_id: MemoryId, type: LinkType = None) -> str:
        """Record a relationship between two memories (source supersedes / caused_by / decided / … target)."""
        return _json(await call(ops.link, source_id, target_id, type))

    @mcp.tool(structured_output=False)
    async def unlink(source_id: MemoryId, target_id: MemoryId, type: LinkType = None) -> str:
        """Remove the links between two memories, in either direction; omit type to remove all of them."""
        return _json(await call(ops.unlink, source_id, target_id, type))

    @mcp.tool(structured_output=False)
    async def connections(id: MemoryId, type: LinkType = None) -> str:
        """The memories linked to one memory (its 8 strongest neighbours), with how they are related."""
        return _json(await call(ops.connections, id, type))

    @mcp.tool(structured_output=False)
    async def share(id: MemoryId, workspace: Workspace = None, team: Team = None) -> str:
        """Move a memory between the personal and the company layer (not a copy)."""
        def run(brain: Brain, ctx: Context) -> None:
            ops.workspaces_for(ctx, workspace or "company")
            brain.queries.entry(ctx, ops.required(id, "id"))  # an unknown id is a clear error first
            raise ToolError("This brain has no company workspace yet: every memory stays in your personal layer")

        return await call(run)

    @mcp.tool(structured_output=False)
    async def list_teams() -> str:
        """The shared teams you belong to, with their workspace ids (for workspace "company")."""
        teams = [{"id": w, "name": w} for w in identity().company_workspaces]
        return _json({"ok": True, "teams": teams,
                      **({} if teams else {"message": "No shared teams: this brain has only your personal "
                                                      "workspace, so leave workspace unset."})})

    @mcp.tool(structured_output=False)
    async def list_projects(workspace: Workspace = None, team: Team = None,
                            include_archived: Annotated[bool, Field(description="Include archived ones.")] = False
                            ) -> str:
        """The projects you can file memories under (slug, name, description). Pass a slug as project to
        remember, recall or list_recent."""
        return _json(await call(ops.list_projects, workspace, include_archived, True))

    return mcp


def render_recall(response: dict[str, Any], budget: int) -> str:
    results = response["results"]
    if not results:
        return response.get("message", "Nothing found matching that query.")
    head = f"{len(results)} memor{'y' if len(results) == 1 else 'ies'} for \"{response['query_used']}\", best first"
    if response.get("semantic_unavailable"):
        head += " (semantic search is unavailable: exact words only)"
    blocks = [_block(n, r, f"score {r['score']}", r["content"], r["truncated"], r["full_length"])
              for n, r in enumerate(results, 1)]
    return _bounded(head + ":", blocks, budget)


def render_list(entries: list[dict[str, Any]], budget: int) -> str:
    if not entries:
        return "No memories match."
    blocks = []
    for n, entry in enumerate(entries, 1):
        content = entry["content"]
        cut = len(content) > LIST_SNIPPET_CHARS + 90
        blocks.append(_block(n, entry, _date(entry["created_at"]), content[:LIST_SNIPPET_CHARS] if cut else content,
                             cut, len(content)))
    return _bounded(f"{len(entries)} most recent, newest first:", blocks, budget)


def render_entry(entry: dict[str, Any]) -> str:
    lines = [
        f"id: {entry['id']}",
        f"tags: {', '.join(entry['tags']) or '(none)'}",
        f"source: {entry['source']} · saved {_date(entry['created_at'])} · updated {_date(entry['updated_at'])}",
        f"importance: {entry['importance_score']} · recalled {entry['recall_count']} times · contradictions won "
        f"{entry['contradiction_wins']}, lost {entry['contradiction_losses']}",
    ]
    if entry.get("when_at") is not None:
        lines.append(f"{entry['when_kind']}: {_date(entry['when_at'], with_time=True)}")
    return "\n".join(lines) + "\n\n" + entry["content"]


def _block(number: int, item: dict[str, Any], label: str, content: str, truncated: bool, full_length: int) -> str:
    tags = ", ".join(item["tags"])
    text = f"[{number}] id: {item['id']} · {label} · {_date(item['created_at'])}" + (f" · tags: {tags}" if tags else "")
    text += "\n" + content
    if truncated:
        text += f"\n[truncated · {full_length} chars total · get(\"{item['id']}\") for full text]"
    return text


def _bounded(head: str, blocks: list[str], budget: int) -> str:
    """The head and as many whole blocks as fit the budget (always at least one), and a count of the rest."""
    out, used = [head], len(head)
    for block in blocks:
        if len(out) > 1 and used + len(block) + 2 > budget:
            break
        out.append(block)
        used += len(block) + 2
    omitted = len(blocks) - (len(out) - 1)
    if omitted:
        out.append(f"{omitted} more match{'es' if omitted > 1 else ''} omitted to keep this reply short: "
                   "narrow the query or use a smaller topK.")
    return "\n\n".join(out)


def _date(ms: int, with_time: bool = False) -> str:
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC" if with_time else "%Y-%m-%d")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class BearerGate:
    """ASGI wrapper for /mcp: the REST API's bearer check, then the caller's identity for the tools."""

    def __init__(self, app: ASGIApp, authenticate: Callable[[Request], Identity]) -> None:
        self.app = app
        self.authenticate = authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            who = self.authenticate(Request(scope))
        except BrainError as exc:
            body = {"ok": False, "error": exc.message, **exc.details}
            await JSONResponse(body, status_code=exc.status, headers={"WWW-Authenticate": "Bearer"})(
                scope, receive, send)
            return
        token = _identity.set(who)
        try:
            await self.app(scope, receive, send)
        finally:
            _identity.reset(token)


def current_identity() -> Identity:
    """The identity BearerGate admitted for this request."""
    who = _identity.get()
    if who is None:
        raise ToolError("Unauthorized")
    return who
