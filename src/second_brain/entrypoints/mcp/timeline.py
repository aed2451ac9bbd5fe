"""MCP tool for the audit feed (the twin of api/timeline.py's route), and the prompt that reads it: what changed
since a moment."""

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ...app import operations as ops
from .render import moment, render_changes, render_timeline
from .tools import EVENTS, READS, TIME_WORDS, Budget, Call, clamped, ranged

EventsAfter = Annotated[str | int | None, Field(description=f"Only events after this moment: {TIME_WORDS}.")]
EventsBefore = Annotated[str | int | None, Field(description=f"Only events before this moment: {TIME_WORDS}.")]


def register(mcp: MCPServer, call: Call, budget: Budget) -> None:
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

    @mcp.prompt(name="changes_since", title="What changed since")
    async def changes_since(since: Annotated[str, Field(description=f"Since when: {TIME_WORDS}.")],
                            everything: Annotated[str | None, Field(description="\"yes\" to include the "
                                                                                "bookkeeping too (classified, "
                                                                                "recalled, opened).")] = None) -> str:
        """What was saved, changed, linked or forgotten since a moment, one sentence each with the memory's first
        words, from the audit trail."""
        if everything not in (None, "", "yes", "no"):
            raise ToolError(f"everything must be \"yes\" or \"no\" (got {everything[:40]!r})")
        page = await call(ops.changes, since, everything == "yes")
        return (f"Tell me what changed in my second brain since {moment(page['since'])}, grouped by what matters, "
                f"from its audit trail:\n\n{render_changes(page, budget())}")
