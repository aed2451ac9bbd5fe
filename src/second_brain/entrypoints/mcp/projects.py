"""MCP tool for the project registry (the twin of api/projects.py's GET /projects)."""

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from ...app import operations as ops
from .render import as_json
from .tools import READS, Budget, Call, Team, Workspace


def register(mcp: MCPServer, call: Call, budget: Budget) -> None:
    @mcp.tool(structured_output=False, annotations=READS)
    async def list_projects(workspace: Workspace = None, team: Team = None,
                            include_archived: Annotated[bool, Field(description="Include archived ones.")] = False
                            ) -> str:
        """The projects you can file memories under (slug, name, description). Pass a slug as project to
        remember, recall or list_recent."""
        return as_json(await call(ops.list_projects, workspace, include_archived, True, team))
