"""MCP tools for the memory lifecycle and its reads (the twins of api/memories.py's routes), and each memory as a
resource a client can attach."""

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import Field

from ...app import operations as ops
from .render import as_json, moment, render_entry, render_list, render_recall
from .tools import READS, TIME_WORDS, Budget, Call, MemoryId, Team, Workspace, changes, clamped, ranged

Tags = Annotated[list[str] | None, Field(description="Topic tags, e.g. [\"work\", \"pricing\"]. #hashtags in the "
                                                    "text become tags too.")]
Volatility = Annotated[Literal["durable", "state", "volatile"] | None, Field(
    description="How likely the fact is to stop being true: \"durable\" (a birthday), \"state\" (a job, an "
                "address) or \"volatile\" (a meeting time).")]
When = Annotated[str | int | None, Field(description=f"When it is due or happens: {TIME_WORDS}.")]
WhenKind = Annotated[Literal["due", "event", "wake"] | None, Field(
    description="What `when` is: \"due\" (a deadline), \"event\" (it happens then) or \"wake\" (bring it back "
                "then; the default). Needs `when`.")]
Project = Annotated[str | None, Field(description="A project slug (see list_projects).")]
After = Annotated[str | int | None, Field(description=f"Only memories written after this moment: {TIME_WORDS}.")]
Before = Annotated[str | int | None, Field(description=f"Only memories written before this moment: {TIME_WORDS}.")]
AsOf = Annotated[str | int | None, Field(description=f"Answer as the memory stood at this moment (what did I know "
                                                   f"then?): {TIME_WORDS}.")]
# The ranges of recall's topK and hops and of list_recent's n (its MCP cap), as the operations clamp them.
TOP_K, HOPS, RECENT = (1, 20), (0, 3), (1, 50)


def register(mcp: MCPServer, call: Call, budget: Budget) -> None:
    """The writing tools, then the reading ones, then the memory:// resource."""
    _writing_tools(mcp, call)
    _reading_tools(mcp, call, budget)
    _resources(mcp, call, budget)


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


def _reading_tools(mcp: MCPServer, call: Call, budget: Budget) -> None:
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
        window = await _window(call, after, before)  # first: the recall's answer is the one sent as data
        response = await call(ops.recall, query, topK, hops=hops, as_of=as_of, **chosen)
        return clamped("topK", topK, TOP_K) + clamped("hops", hops, HOPS) + window + render_recall(response, budget())

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
        window = await _window(call, after, before)
        entries = await call(ops.list_recent, n, most=RECENT[1], as_of=as_of, **chosen)
        return clamped("n", n, RECENT) + window + render_list(entries, budget())

    @mcp.tool(structured_output=False, annotations=READS)
    async def get(id: MemoryId, as_of: AsOf = None,
                  offset: Annotated[int, Field(description="Start the text at this character, as a previous "
                                                           "answer's marker says, for a text too long for one "
                                                           "reply.", ge=0)] = 0) -> str:
        """One memory in full: its whole text, tags, status, dates and history counts (with as_of: as it was
        then). A text longer than one reply comes in parts, each saying the offset of the next."""
        return render_entry(await call(ops.get, id, as_of=as_of), budget(), offset)


async def _window(call: Call, after: str | int | None, before: str | int | None) -> str:
    """The line saying back the moments `after` and `before` were read as, in the brain's time zone; "" if none."""
    if after is None and before is None:
        return ""
    read = await call(ops.moments, {"after": after, "before": before})
    bounds = [f"{name} {moment(read[name])}" for name in ("after", "before") if read[name] is not None]
    return f"Written {' and '.join(bounds)}.\n\n"


def _resources(mcp: MCPServer, call: Call, budget: Budget) -> None:
    """Each memory as a resource a client can attach (what GET /entry answers, as get shows it)."""

    @mcp.resource("memory://{id}", name="memory", title="A memory", mime_type="text/plain",
                  description="One memory in full, as get shows it: memory://<id>, the id from recall or list_recent.")
    async def memory(id: str) -> str:
        try:
            return render_entry(await call(ops.get, id), budget())
        except ToolError as exc:
            raise ResourceError(str(exc)) from exc
