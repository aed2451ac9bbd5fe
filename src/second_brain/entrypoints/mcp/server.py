"""The MCP server: the brain's tools for AI clients, over streamable HTTP at /mcp and over stdio (`brain mcp`).

Every tool calls the same operation (app/operations/) as its REST route: the same parameters, defaults, limits,
`as_of` and error messages. What differs is the output, rendered for a model by `render.py`.
"""

import functools
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ... import __version__
from ...app import operations as ops
from ...app.brain import Brain
from ...app.handling import Context
from ...domain.errors import BrainError
from ...domain.identity import Identity
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
Tags = Annotated[list[str] | None, Field(description="Topic tags, e.g. [\"work\", \"pricing\"]. #hashtags in the "
                                                    "text become tags too.")]
Volatility = Annotated[str | None, Field(description="How likely the fact is to stop being true: \"durable\" "
                                                     "(a birthday), \"state\" (a job, an address) or \"volatile\" "
                                                     "(a meeting time).")]
Workspace = Annotated[str | None, Field(description="\"personal\" or \"company\". Leave unset for the default.")]
Team = Annotated[str | None, Field(description="A team id from list_teams, with workspace \"company\".")]
Project = Annotated[str | None, Field(description="A project slug (see list_projects).")]
Millis = Annotated[int | None, Field(description="A time as Unix milliseconds.")]
AsOf = Annotated[str | int | None, Field(description="Answer as the memory stood at this moment: ISO date or "
                                                   "date-time, or Unix ms (what did I know then?).")]
LinkType = Annotated[str | None, Field(description="relates_to (default), supersedes, caused_by, decided, "
                                                   "about_person, part_of_project or follows.")]

Call = Callable[..., Any]


def build_mcp(brain: Brain, identity: Callable[[], Identity]) -> MCPServer:
    """The MCP server over one brain; `identity` names the caller of the tool being run."""
    mcp: MCPServer = MCPServer("second-brain", title="Second Brain", version=__version__, instructions=INSTRUCTIONS)

    async def call(operation: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a (blocking) operation off the event loop; a brain error becomes the tool's error text. What the
        caller must be told (someone else replaced their token) heads every answer that is an object."""
        ctx = Context(identity(), f"mcp-{uuid.uuid4().hex}")
        try:
            result = await anyio.to_thread.run_sync(functools.partial(operation, brain, ctx, *args, **kwargs))
        except BrainError as exc:
            raise ToolError(exc.message) from exc
        return {"notice": ctx.identity.notice, **result} if ctx.identity.notice and isinstance(result, dict) else result

    def budget() -> int:
        return ops.output_budget(brain)

    _writing_tools(mcp, call)
    _reading_tools(mcp, call, budget)
    _graph_tools(mcp, call)
    return mcp


def _writing_tools(mcp: MCPServer, call: Call) -> None:
    @mcp.tool(structured_output=False)
    async def remember(content: Annotated[str, Field(description="The note, self-contained: it will be read "
                                                                  "later without this conversation.")],
                       tags: Tags = None,
                       source: Annotated[str | None, Field(description="Where the note comes from; default "
                                                                       "\"claude\".")] = None,
                       volatility: Volatility = None, workspace: Workspace = None, team: Team = None,
                       project: Annotated[str | None, Field(description="A project slug; an unknown one is "
                                                                       "created.")] = None,
                       when: Annotated[str | int | None, Field(description="When it is due or happens: ISO date "
                                                                           "or date-time, or Unix ms.")] = None,
                       when_kind: Annotated[str | None, Field(description="\"due\", \"event\" or \"wake\" "
                                                                          "(default).")] = None,
                       force: Annotated[bool, Field(description="Store it even if it repeats a stored memory "
                                                                "(after a refusal).")] = False) -> str:
        """Save a note to long-term memory. Repeats are refused, near-duplicates flagged, and a note that changes
        a fact of an older one retires it (kept for audit). Returns the id, what happened and how to undo it
        (answer_conflict); a time named in the words ("tomorrow at 10") becomes its reminder."""
        return as_json(await call(ops.capture, content, tags, source, workspace, volatility, project, when,
                                  when_kind, default_source="claude", team=team, force=force))

    @mcp.tool(structured_output=False)
    async def append(id: MemoryId, addition: Annotated[str, Field(description="The new information.")],
                     volatility: Volatility = None) -> str:
        """Add new information to an existing memory under a dated "[Update …]" label, keeping the original."""
        return as_json(await call(ops.append, id, addition, volatility))

    @mcp.tool(structured_output=False)
    async def update(id: MemoryId, content: Annotated[str, Field(description="The memory's complete new text.")],
                     tags: Annotated[list[str] | None, Field(description="Replaces the memory's tags; omit to keep "
                                                                         "them.")] = None,
                     volatility: Volatility = None) -> str:
        """Replace a memory's whole text (for a correction). To add to it, use append instead."""
        return as_json(await call(ops.update, id, content, tags, volatility))

    @mcp.tool(structured_output=False)
    async def set_status(id: MemoryId, status: Annotated[str, Field(description="\"canonical\" (confirmed, "
                                                                                "protected), \"draft\" or "
                                                                                "\"deprecated\" (out of recall, "
                                                                                "kept for audit).")]) -> str:
        """Set a memory's lifecycle status."""
        return as_json(await call(ops.set_status, id, status))

    @mcp.tool(structured_output=False)
    async def forget(id: MemoryId) -> str:
        """Delete a memory for good: its text is erased everywhere. To retire it but keep it for audit, use
        set_status with "deprecated" instead."""
        return as_json(await call(ops.forget, id))

    @mcp.tool(structured_output=False)
    async def share(id: MemoryId, workspace: Workspace = None, team: Team = None) -> str:
        """Move a memory between the personal and the company layer (not a copy)."""
        return as_json(await call(ops.share, id, workspace, team))


def _reading_tools(mcp: MCPServer, call: Call, budget: Callable[[], int]) -> None:
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
                     workspace: Workspace = None, team: Team = None, project: Project = None,
                     as_of: AsOf = None) -> str:
        """Search long-term memory by meaning and by exact words, best match first. Long memories come back
        shortened: call get on any result marked [truncated …] before relying on it. With as_of: what the
        memory would have answered then."""
        chosen = {"tag": tag, "after": after, "before": before, "kind": kind, "workspace": workspace,
                  "project": project, "team": team}
        response = await call(ops.recall, query, topK, hops=hops, as_of=as_of, **chosen)
        return render_recall(response, budget())

    @mcp.tool(structured_output=False)
    async def list_recent(n: Annotated[int, Field(description="How many, 1-50.")] = 10,
                          tag: Annotated[str | None, Field(description="Only memories with this tag.")] = None,
                          after: Millis = None, before: Millis = None, workspace: Workspace = None,
                          team: Team = None,
                          actor: Annotated[str | None, Field(description="Only those written by this author "
                                                                         "(name or id; \"me\").")] = None,
                          project: Project = None, as_of: AsOf = None) -> str:
        """The most recent memories, newest first (with as_of: as the list stood then)."""
        chosen = {"tag": tag, "after": after, "before": before, "actor": actor, "workspace": workspace,
                  "project": project, "team": team}
        entries = await call(ops.list_recent, n, most=50, as_of=as_of, **chosen)
        return render_list(entries, budget())

    @mcp.tool(structured_output=False)
    async def get(id: MemoryId, as_of: AsOf = None) -> str:
        """One memory in full: its whole text, tags, status, dates and history counts (with as_of: as it was
        then)."""
        return render_entry(await call(ops.get, id, as_of=as_of))

    @mcp.tool(structured_output=False)
    async def timeline(id: Annotated[str | None, Field(description="Only this memory's events (and its links').")]
                       = None,
                       actor: Annotated[str | None, Field(description="Only events by this author: a name, a user "
                                                                      "id, \"me\" or \"system\".")] = None,
                       type: Annotated[list[str] | None, Field(description="Only these events, e.g. [\"updated\", "
                                                                           "\"link_created\"].")] = None,
                       after: AsOf = None, before: AsOf = None,
                       cursor: Annotated[int | None, Field(description="Continue from a previous answer's "
                                                                       "cursor.")] = None,
                       limit: Annotated[int, Field(description="How many events, 1-100.")] = 20) -> str:
        """The audit trail: who changed what and when, newest first, as far as you may read it (no one else's
        private content)."""
        page = await call(ops.timeline, memory_id=id, actor=actor, types=type, after=after, before=before,
                          cursor=cursor, limit=min(limit, 100))
        return render_timeline(page)

    @mcp.tool(structured_output=False)
    async def conflicts(limit: Annotated[int, Field(description="How many, 1-100.")] = 20) -> str:
        """Pairs of memories that may say different things about one subject, waiting for your answer: what
        remember did automatically in the last 30 days (an older memory retired, a note merged or replaced into
        one, a newcomer kept as a draft) and pairs it kept side by side as a possible update or as similar. Answer
        each with answer_conflict."""
        return as_json(await call(ops.conflicts, limit))

    @mcp.tool(structured_output=False)
    async def answer_conflict(conflict: Annotated[str, Field(description="The item, from conflicts or from "
                                                                         "remember's answer (\"<id>@<n>\").")],
                              keep: Annotated[Literal["both", "newer", "older"], Field(
                                  description="both: keep the two (undoes a retirement, merge or replacement), "
                                              "newer: retire the older, older: retire the newer.")]) -> str:
        """Answer a conflict: keep both memories, the newer or the older. Keeping both undoes what remember did
        automatically, exactly; the answer shows in both memories' timelines."""
        return as_json(await call(ops.answer_conflict, conflict, keep))

    @mcp.tool(structured_output=False)
    async def list_teams() -> str:
        """The shared teams you belong to, with their workspace ids (for workspace "company")."""
        return as_json(await call(ops.list_teams))

    @mcp.tool(structured_output=False)
    async def list_projects(workspace: Workspace = None, team: Team = None,
                            include_archived: Annotated[bool, Field(description="Include archived ones.")] = False
                            ) -> str:
        """The projects you can file memories under (slug, name, description). Pass a slug as project to
        remember, recall or list_recent."""
        return as_json(await call(ops.list_projects, workspace, include_archived, True, team))


def _graph_tools(mcp: MCPServer, call: Call) -> None:
    @mcp.tool(structured_output=False)
    async def link(source_id: MemoryId, target_id: MemoryId, type: LinkType = None) -> str:
        """Record a relationship between two memories (source supersedes / caused_by / decided / … target)."""
        return as_json(await call(ops.link, source_id, target_id, type))

    @mcp.tool(structured_output=False)
    async def unlink(source_id: MemoryId, target_id: MemoryId, type: LinkType = None) -> str:
        """Remove the links between two memories, in either direction; omit type to remove all of them."""
        return as_json(await call(ops.unlink, source_id, target_id, type))

    @mcp.tool(structured_output=False)
    async def connections(id: MemoryId, type: LinkType = None) -> str:
        """The memories linked to one memory (its 8 strongest neighbours), with how they are related."""
        return as_json(await call(ops.connections, id, type))
