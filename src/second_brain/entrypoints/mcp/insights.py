"""MCP prompt for the brain's overview (api/insights.py's GET /brief): a person picks "Brief me" from the client's
menu. The overview has no tools: GET /graph has no MCP twin."""

from mcp.server.mcpserver import MCPServer

from ...app import operations as ops
from .render import as_json
from .tools import Budget, Call


def register(mcp: MCPServer, call: Call, budget: Budget) -> None:
    @mcp.prompt(name="brief", title="Brief me")
    async def brief() -> str:
        """What came into the brain lately, what needs attention, and one older memory worth re-reading."""
        answer = await call(ops.brief)
        return ("Brief me on my second brain: what came in lately and from where, what needs my attention, and the "
                "older memory it suggests re-reading. Keep it short. Its brief, as JSON:\n\n" + as_json(answer))
