"""The MCP entry point: the server (server.py), its tools one module per capability as the REST routes are
(memories.py, timeline.py, conflicts.py, team.py, projects.py, links.py, insights.py; what they share in tools.py),
their rendering (render.py) and the bearer gate (gate.py). The tools are imported when first asked for: the `mcp`
package takes half a second to import, which a server starting to answer REST requests need not wait for."""

from typing import Any

from .gate import BearerGate, current_identity

__all__ = ["BearerGate", "build_mcp", "current_identity"]


def __getattr__(name: str) -> Any:
    if name == "build_mcp":
        from .server import build_mcp

        return build_mcp
    raise AttributeError(name)
