"""The MCP server: the brain's tools for AI clients, over streamable HTTP at /mcp and over stdio (`brain mcp`).

Every tool calls the same operation (app/operations/) as its REST route: the same parameters, defaults, limits,
`as_of` and error messages. What differs is the output, rendered for a model by `render.py`.
"""

import functools
import inspect
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import Icon, ToolAnnotations
from pydantic import Field, ValidationError

from ... import __version__
from ...app import operations as ops
from ...app.brain import Brain
from ...app.handling import Context
from ...domain.errors import BrainError
from ...domain.identity import Identity
from .arguments import argument_errors
from .render import as_json, render_entry, render_list, render_recall, render_timeline

INSTRUCTIONS = (
    "Second Brain is the user's long-term memory. Use `recall` before answering anything that may depend on "
    "what the user told you before (preferences, decisions, people, projects, facts). Use `remember` to save "
    "something worth keeping: one self-contained fact or decision per note, in plain words, with a few topic "
    "tags. When a fact changes, `append` to the memory that holds it or `update` it, rather than saving a "
    "near-copy. Results marked [truncated …] are partial: call `get` with the id before quoting or acting on "
    "them. Ids are UUIDs returned by remember, recall and list_recent."
)

MemoryId = Annotated[str, Field(description="The memory's id (a UUID from remember, recall or list_recent).")]
SourceId = Annotated[str, Field(description="The id of the memory the link goes from.")]
TargetId = Annotated[str, Field(description="The id of the memory the link goes to.")]
Tags = Annotated[list[str] | None, Field(description="Topic tags, e.g. [\"work\", \"pricing\"]. #hashtags in the "
                                                    "text become tags too.")]
Volatility = Annotated[Literal["durable", "state", "volatile"] | None, Field(
    description="How likely the fact is to stop being true: \"durable\" (a birthday), \"state\" (a job, an "
                "address) or \"volatile\" (a meeting time).")]
Workspace = Annotated[Literal["personal", "company"] | None, Field(
    description="\"personal\" or \"company\". Leave unset for the default.")]
When = Annotated[str | int | None, Field(description="When it is due or happens: ISO date or date-time, or Unix ms.")]
WhenKind = Annotated[Literal["due", "event", "wake"] | None, Field(
    description="What `when` is: \"due\" (a deadline), \"event\" (it happens then) or \"wake\" (bring it back "
                "then; the default). Needs `when`.")]
Team = Annotated[str | None, Field(description="A team id from list_teams, with workspace \"company\".")]
Project = Annotated[str | None, Field(description="A project slug (see list_projects).")]
After = Annotated[int | None, Field(description="Only memories written after this moment, in Unix ms.")]
Before = Annotated[int | None, Field(description="Only memories written before this moment, in Unix ms.")]
EventsAfter = Annotated[str | int | None, Field(description="Only events after this moment: ISO date or date-time, "
                                                          "or Unix ms.")]
EventsBefore = Annotated[str | int | None, Field(description="Only events before this moment: ISO date or date-time, "
                                                           "or Unix ms.")]
AsOf = Annotated[str | int | None, Field(description="Answer as the memory stood at this moment: ISO date or "
                                                   "date-time, or Unix ms (what did I know then?).")]
LINK_TYPES = Literal["relates_to", "supersedes", "caused_by", "decided", "about_person", "part_of_project", "follows"]
LinkType = Annotated[LINK_TYPES | None, Field(description="The relationship the source has to the target; "
                                                          "relates_to when omitted.")]
LinkTypeToRemove = Annotated[LINK_TYPES | None, Field(description="Only links of this type; omit to remove every "
                                                                  "link between the two.")]
LinkTypeShown = Annotated[LINK_TYPES | None, Field(description="Only links of this type; omit for every type.")]
# The ranges of the tools' whole-number parameters, stated in their schemas and told when a value was clamped:
# the clamps the operations apply (recall's topK and hops, list_recent's MCP cap, the audit feed's and conflicts'
# limits).
TOP_K, HOPS, RECENT, EVENTS = (1, 20), (0, 3), (1, 50), (1, 100)


def said(error: BrainError) -> str:
    """A brain error as the tool's error text: its message, and what REST sends beside it that helps the caller
    recover (an unknown project's `known_projects`)."""
    if "known_projects" not in error.details:
        return error.message
    known = list(error.details["known_projects"])  # type: ignore[call-overload]
    return f"{error.message}. " + (f"Known projects: {', '.join(known)}." if known else "There are no projects yet.")


def ranged(description: str, bounds: tuple[int, int]) -> Any:
    """A whole-number parameter whose schema states its range. A value outside it is not refused (the reference's
    tools clamp, and its clients rely on that): the operation clamps it and the answer begins by saying so."""
    return Field(description=description, json_schema_extra={"minimum": bounds[0], "maximum": bounds[1]})


def clamped(name: str, value: int | None, bounds: tuple[int, int]) -> str:
    """The line telling the caller a value of theirs was clamped (as the operation clamps it), or ""."""
    low, high = bounds
    if value is None or low <= value <= high:
        return ""
    return f"Note: {name} {value} is outside {low}-{high}, so {ops.clamp(value, low, high)} was used.\n\n"


# What each tool does to the brain, for clients that ask before calling (the brain is a closed world: no tool
# reaches anything outside it).
READS = ToolAnnotations(readOnlyHint=True, openWorldHint=False)


def changes(destructive: bool = False, idempotent: bool = False) -> ToolAnnotations:
    return ToolAnnotations(readOnlyHint=False, destructiveHint=destructive, idempotentHint=idempotent,
                           openWorldHint=False)


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

Call = Callable[..., Any]


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

    _writing_tools(mcp, call)
    _reading_tools(mcp, call, budget)
    _graph_tools(mcp, call)
    _resources_and_prompts(mcp, call, budget)
    return mcp


def _writing_tools(mcp: MCPServer, call: Call) -> None:
    @mcp.tool(structured_output=False, annotations=changes())
    async def remember(content: Annotated[str, Field(description="The note, self-contained: it will be read "
                                                                  "later without this conversation.")],
                       tags: Tags = None,
                       source: Annotated[str | None, Field(description="Where the note comes from; default "
                                                                       "\"claude\".")] = None,
                       volatility: Volatility = None, workspace: Workspace = None, team: Team = None,
                       project: Annotated[str | None, Field(description="A project slug; an unknown one is "
                                                                       "created.")] = None,
                       when: When = None, when_kind: WhenKind = None,
                       force: Annotated[bool, Field(description="Store it even if it repeats a stored memory "
                                                                "(after a refusal).")] = False) -> str:
        """Save a note to long-term memory. Repeats are refused, near-duplicates flagged, and a note that changes
        a fact of an older one retires it (kept for audit). Returns the id, what happened and how to undo it
        (answer_conflict); a time named in the words ("tomorrow at 10") becomes its reminder."""
        return as_json(await call(ops.capture, content, tags, source, workspace, volatility, project, when,
                                  when_kind, default_source="claude", team=team, force=force))

    @mcp.tool(structured_output=False, annotations=changes())
    async def append(id: MemoryId, addition: Annotated[str, Field(description="The new information.")],
                     volatility: Volatility = None, when: When = None, when_kind: WhenKind = None) -> str:
        """Add new information to an existing memory under a dated "[Update …]" label, keeping the original.
        With when, the memory's reminder moves to that time."""
        return as_json(await call(ops.append, id, addition, volatility, when, when_kind))

    @mcp.tool(structured_output=False, annotations=changes(destructive=True, idempotent=True))
    async def update(id: MemoryId, content: Annotated[str, Field(description="The memory's complete new text.")],
                     tags: Annotated[list[str] | None, Field(description="Replaces the memory's tags; omit to keep "
                                                                         "them.")] = None,
                     volatility: Volatility = None) -> str:
        """Replace a memory's whole text (for a correction). To add to it, use append instead."""
        return as_json(await call(ops.update, id, content, tags, volatility))

    @mcp.tool(structured_output=False, annotations=changes(idempotent=True))
    async def set_status(id: MemoryId, status: Annotated[Literal["canonical", "draft", "deprecated"], Field(
            description="\"canonical\" (confirmed, protected), \"draft\" or \"deprecated\" (out of recall, "
                        "kept for audit).")]) -> str:
        """Set a memory's lifecycle status."""
        return as_json(await call(ops.set_status, id, status))

    @mcp.tool(structured_output=False, annotations=changes(destructive=True, idempotent=True))
    async def forget(id: MemoryId) -> str:
        """Delete a memory for good: its text is erased everywhere. To retire it but keep it for audit, use
        set_status with "deprecated" instead."""
        return as_json(await call(ops.forget, id))

    @mcp.tool(structured_output=False, annotations=changes(idempotent=True))
    async def share(id: MemoryId, workspace: Workspace = None, team: Team = None) -> str:
        """Move a memory between the personal and the company layer (not a copy)."""
        return as_json(await call(ops.share, id, workspace, team))


def _reading_tools(mcp: MCPServer, call: Call, budget: Callable[[], int]) -> None:
    @mcp.tool(structured_output=False, annotations=READS)
    async def recall(query: Annotated[str, Field(description="What to look for, in plain words; exact names, "
                                                             "codes and identifiers work too.")],
                     topK: Annotated[int, ranged("How many memories, 1-20.", TOP_K)] = 5,  # noqa: N803
                     tag: Annotated[str | None, Field(description="Only memories with this tag.")] = None,
                     after: After = None, before: Before = None,
                     kind: Annotated[Literal["episodic", "semantic"] | None, Field(
                         description="\"episodic\" (events) or \"semantic\" (facts).")] = None,
                     hops: Annotated[int | None, ranged("Also follow links this many steps, 0-3 (default: the "
                                                        "DEFAULT_HOPS setting).", HOPS)] = None,
                     workspace: Workspace = None, team: Team = None, project: Project = None,
                     as_of: AsOf = None) -> str:
        """Search long-term memory by meaning and by exact words, best match first. Long memories come back
        shortened: call get on any result marked [truncated …] before relying on it. With as_of: what the
        memory would have answered then."""
        chosen = {"tag": tag, "after": after, "before": before, "kind": kind, "workspace": workspace,
                  "project": project, "team": team}
        response = await call(ops.recall, query, topK, hops=hops, as_of=as_of, **chosen)
        return clamped("topK", topK, TOP_K) + clamped("hops", hops, HOPS) + render_recall(response, budget())

    @mcp.tool(structured_output=False, annotations=READS)
    async def list_recent(n: Annotated[int, ranged("How many, 1-50.", RECENT)] = 10,
                          tag: Annotated[str | None, Field(description="Only memories with this tag.")] = None,
                          after: After = None, before: Before = None, workspace: Workspace = None,
                          team: Team = None,
                          actor: Annotated[str | None, Field(description="Only those written by this author "
                                                                         "(name or id; \"me\").")] = None,
                          project: Project = None, as_of: AsOf = None) -> str:
        """The most recent memories, newest first (with as_of: as the list stood then)."""
        chosen = {"tag": tag, "after": after, "before": before, "actor": actor, "workspace": workspace,
                  "project": project, "team": team}
        entries = await call(ops.list_recent, n, most=RECENT[1], as_of=as_of, **chosen)
        return clamped("n", n, RECENT) + render_list(entries, budget())

    @mcp.tool(structured_output=False, annotations=READS)
    async def get(id: MemoryId, as_of: AsOf = None,
                  offset: Annotated[int, Field(description="Start the text at this character, as a previous "
                                                           "answer's marker says, for a text too long for one "
                                                           "reply.", ge=0)] = 0) -> str:
        """One memory in full: its whole text, tags, status, dates and history counts (with as_of: as it was
        then). A text longer than one reply comes in parts, each saying the offset of the next."""
        return render_entry(await call(ops.get, id, as_of=as_of), budget(), offset)

    @mcp.tool(structured_output=False, annotations=READS)
    async def timeline(id: Annotated[str | None, Field(description="Only this memory's events (and its links').")]
                       = None,
                       actor: Annotated[str | None, Field(description="Only events by this author: a name, a user "
                                                                      "id, \"me\" or \"system\".")] = None,
                       type: Annotated[list[str] | None, Field(description="Only these events, e.g. [\"updated\", "
                                                                           "\"link_created\"].")] = None,
                       after: EventsAfter = None, before: EventsBefore = None,
                       cursor: Annotated[int | None, Field(description="Continue from a previous answer's "
                                                                       "cursor.")] = None,
                       limit: Annotated[int, ranged("How many events, 1-100.", EVENTS)] = 20) -> str:
        """The audit trail: who changed what and when, newest first, as far as you may read it (no one else's
        private content)."""
        page = await call(ops.timeline, memory_id=id, actor=actor, types=type, after=after, before=before,
                          cursor=cursor, limit=limit)
        return clamped("limit", limit, EVENTS) + render_timeline(page, budget())

    @mcp.tool(structured_output=False, annotations=READS)
    async def conflicts(limit: Annotated[int, ranged("How many, 1-100.", EVENTS)] = 20) -> str:
        """Pairs of memories that may say different things about one subject, waiting for your answer: what
        remember did automatically in the last 30 days (an older memory retired, a note merged or replaced into
        one, a newcomer kept as a draft) and pairs it kept side by side as a possible update or as similar. Answer
        each with answer_conflict."""
        answer = await call(ops.conflicts, limit)
        note = clamped("limit", limit, EVENTS).strip()
        return as_json({"note": note, **answer} if note else answer)

    @mcp.tool(structured_output=False, annotations=changes())
    async def answer_conflict(conflict: Annotated[str, Field(description="The item, from conflicts or from "
                                                                         "remember's answer (\"<id>@<n>\").")],
                              keep: Annotated[Literal["both", "newer", "older"], Field(
                                  description="both: keep the two (undoes a retirement, merge or replacement), "
                                              "newer: retire the older, older: retire the newer.")]) -> str:
        """Answer a conflict: keep both memories, the newer or the older. Keeping both undoes what remember did
        automatically, exactly; the answer shows in both memories' timelines."""
        return as_json(await call(ops.answer_conflict, conflict, keep))

    @mcp.tool(structured_output=False, annotations=READS)
    async def list_teams() -> str:
        """The shared teams you belong to, with their workspace ids (for workspace "company")."""
        return as_json(await call(ops.list_teams))

    @mcp.tool(structured_output=False, annotations=READS)
    async def list_projects(workspace: Workspace = None, team: Team = None,
                            include_archived: Annotated[bool, Field(description="Include archived ones.")] = False
                            ) -> str:
        """The projects you can file memories under (slug, name, description). Pass a slug as project to
        remember, recall or list_recent."""
        return as_json(await call(ops.list_projects, workspace, include_archived, True, team))


def _graph_tools(mcp: MCPServer, call: Call) -> None:
    @mcp.tool(structured_output=False, annotations=changes(idempotent=True))
    async def link(source_id: SourceId, target_id: TargetId, type: LinkType = None) -> str:
        """Record a relationship between two memories (source supersedes / caused_by / decided / … target)."""
        return as_json(await call(ops.link, source_id, target_id, type))

    @mcp.tool(structured_output=False, annotations=changes(destructive=True, idempotent=True))
    async def unlink(source_id: SourceId, target_id: TargetId, type: LinkTypeToRemove = None) -> str:
        """Remove the links between two memories, in either direction; omit type to remove all of them."""
        return as_json(await call(ops.unlink, source_id, target_id, type))

    @mcp.tool(structured_output=False, annotations=READS)
    async def connections(id: MemoryId, type: LinkTypeShown = None) -> str:
        """The memories linked to one memory (its 8 strongest neighbours), with how they are related."""
        return as_json(await call(ops.connections, id, type))


def _resources_and_prompts(mcp: MCPServer, call: Call, budget: Callable[[], int]) -> None:
    """What the server advertises beside its tools: each memory as a resource a client can attach, and prompts a
    person picks from the client's menu."""

    @mcp.resource("memory://{id}", name="memory", title="A memory", mime_type="text/plain",
                  description="One memory in full, as get shows it: memory://<id>, the id from recall or list_recent.")
    async def memory(id: str) -> str:
        try:
            return render_entry(await call(ops.get, id), budget())
        except ToolError as exc:
            raise ResourceError(str(exc)) from exc

    @mcp.prompt(name="brief", title="Brief me")
    async def brief() -> str:
        """What came into the brain lately, what needs attention, and one older memory worth re-reading."""
        answer = await call(ops.brief)
        return ("Brief me on my second brain: what came in lately and from where, what needs my attention, and the "
                "older memory it suggests re-reading. Keep it short. Its brief, as JSON:\n\n" + as_json(answer))

    @mcp.prompt(name="changes_since", title="What changed since")
    async def changes_since(since: Annotated[str, Field(description="ISO date or date-time, or Unix ms.")]) -> str:
        """What was saved, changed, linked or forgotten since a moment, from the audit trail."""
        page = await call(ops.timeline, after=since, limit=100)
        return (f"Tell me what changed in my second brain since {since}, grouped by what matters, from its audit "
                f"trail:\n\n{render_timeline(page, budget())}")
