"""The MCP entry point: tools (server.py), their rendering (render.py) and the bearer gate (gate.py)."""

from .gate import BearerGate, current_identity
from .server import build_mcp

__all__ = ["BearerGate", "build_mcp", "current_identity"]
