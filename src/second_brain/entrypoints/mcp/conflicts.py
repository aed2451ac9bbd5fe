"""MCP tools for the review list (the twins of api/conflicts.py's routes): what remember decided about pairs of
memories, and a person's answer."""

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ...app import operations as ops
from .render import as_json
from .tools import EVENTS, READS, Budget, Call, changes, clamped, ranged


def register(mcp: MCPServer, call: Call, budget: Budget) -> None:
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
