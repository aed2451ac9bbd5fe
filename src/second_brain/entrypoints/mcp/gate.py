"""The bearer check in front of /mcp, and the identity it admitted for the tools of this request."""

from collections.abc import Callable
from contextvars import ContextVar

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ...domain.errors import BrainError
from ...domain.identity import Identity
from ..statuses import status_of

_identity: ContextVar[Identity | None] = ContextVar("mcp_identity", default=None)


class BearerGate:
    """ASGI wrapper for /mcp: the REST API's bearer check, then the caller's identity for the tools."""

    def __init__(self, app: ASGIApp, authenticate: Callable[[Request], Identity]) -> None:
        self.app = app
        self.authenticate = authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            who = self.authenticate(Request(scope))
        except BrainError as exc:
            body = {"ok": False, "error": exc.message, **exc.details}
            sent = "authorization" in Headers(scope=scope)
            await JSONResponse(body, status_code=status_of(exc), headers={
                "WWW-Authenticate": 'Bearer error="invalid_token"' if sent else "Bearer"})(scope, receive, send)
            return
        token = _identity.set(who)
        try:
            await self.app(scope, receive, send)
        finally:
            _identity.reset(token)


def current_identity() -> Identity:
    """The identity BearerGate admitted for this request."""
    who = _identity.get()
    if who is None:
        from mcp.server.mcpserver.exceptions import ToolError

        raise ToolError("Unauthorized")
    return who
