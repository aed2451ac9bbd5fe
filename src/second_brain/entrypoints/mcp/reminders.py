"""MCP tools for reminders (the twins of api/reminders.py's routes): what is due, snooze, clear. remember and append
set a reminder from `when` or from the note's own words; these read and change it."""

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ...app import operations as ops
from .render import as_json, render_due
from .tools import READS, TIME_WORDS, Budget, Call, MemoryId, changes, clamped, ranged

DAYS = (1, 366)
Until = Annotated[str | int, Field(description=f"When to bring it back: {TIME_WORDS}.")]


def register(mcp: MCPServer, call: Call, budget: Budget) -> None:
    @mcp.tool(structured_output=False, annotations=READS)
    async def due(days: Annotated[int, ranged("How far ahead, in days, 1-366 (default 2).", DAYS)] = 2) -> str:
        """What is due: every overdue reminder, then those coming up within `days`, soonest first, each with its
        memory's id, the time in the brain's time zone (ISO) and what kind it is (due, event, wake). Snooze one
        with snooze, take one away with clear_reminder."""
        answer = await call(ops.due, days)
        return clamped("days", days, DAYS) + render_due(answer, budget())

    @mcp.tool(structured_output=False, annotations=changes(idempotent=True))
    async def snooze(id: MemoryId, until: Until) -> str:
        """Move a memory's reminder to a later time (it sets one if the memory had none). Answers the time it was
        set to, in the brain's time zone."""
        return as_json(await call(ops.snooze, id, until))

    @mcp.tool(structured_output=False, annotations=changes(destructive=True, idempotent=True))
    async def clear_reminder(id: MemoryId) -> str:
        """Take a memory's reminder away (the memory stays); undoes a reminder remember set from the note's words."""
        return as_json(await call(ops.clear_anchor, id))
