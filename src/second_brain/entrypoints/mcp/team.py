"""MCP tool for the team (api/team.py's capability): the shared teams the caller belongs to, as GET
/team/workspaces lists them for the dashboard, each with the workspace id the other tools take."""

from mcp.server.mcpserver import MCPServer

from ...app import operations as ops
from .render import as_json
from .tools import READS, Budget, Call


def register(mcp: MCPServer, call: Call, budget: Budget) -> None:
    @mcp.tool(structured_output=False, annotations=READS)
    async def list_teams() -> str:
        """The shared teams you belong to, with their workspace ids (for workspace "company")."""
        return as_json(await call(ops.list_teams))
