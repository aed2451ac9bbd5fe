"""OAuth for MCP clients, over HTTP: the two bearer checks (the REST API's and /mcp's), where the brain is reached
(the issuer), the 401 challenge that tells a client where the flow is, and the flow's routes, made at their first
request (oauth_routes.py: they import the `mcp` package, which the REST API does not need to start)."""

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...app.team.oauth import OAuthIdentities, OAuthService, Standing
from ...app.team.service import TeamService
from ...domain.oauth import on_loopback
from ...ports.event_store import EventStore
from ...settings import Settings
from .auth import BearerAuth
from .oauth_paths import MCP_PATH, PATHS, RESOURCE_METADATA_PATH, ROUTED

if TYPE_CHECKING:
    from starlette.applications import Starlette

log = logging.getLogger("second_brain.oauth")


class Authentication(NamedTuple):
    """The REST API's bearer check (brain tokens only), /mcp's (brain tokens and the access tokens OAuth issued for
    it: they are bound to that resource, RFC 8707), and the OAuth bookkeeping behind the second."""

    rest: BearerAuth
    mcp: BearerAuth
    grants: OAuthService


def authentication(store: EventStore, team: TeamService, owner_token: str | Callable[[], str]) -> Authentication:
    """The consent page signs people in with a brain token (the owner's or a member's, never a token OAuth
    issued); a grant lasts while that person keeps the access they signed in with."""
    brain_tokens = BearerAuth(owner_token, team)
    grants = OAuthService(store, team.clock, lambda secret: brain_tokens.check(f"Bearer {secret}"),
                          Standing(team, owner_token))
    return Authentication(brain_tokens, BearerAuth(owner_token, team, oauth=OAuthIdentities(grants)), grants)


def issuer_of(settings: Settings, public_url: str | None = None) -> str | None:
    """Where the brain is reached (BRAIN_PUBLIC_URL, else the bound host), if OAuth may be served there: https, or
    plain http on a loopback host (RFC 8414 wants https; local clients are the exception the `mcp` package makes)."""
    public = urlsplit(public_url or settings.public_url or f"http://{settings.host}:{settings.port}")
    issuer = f"{public.scheme}://{public.netloc}"
    if public.scheme != "https" and not on_loopback(public.netloc):
        log.warning("OAuth for MCP is off: %s is neither https nor a loopback address (set BRAIN_PUBLIC_URL)", issuer)
        return None
    return issuer


def is_oauth_path(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in PATHS)


def resource_metadata_url(issuer: str) -> str:
    """Where /mcp's protected resource metadata is (RFC 9728 §3.1: the well-known path before the resource's)."""
    return issuer + RESOURCE_METADATA_PATH + MCP_PATH


def oauth_app(oauth: OAuthService, issuer: str) -> "Starlette":
    """The OAuth routes alone (the MCP function URL serves them without building the brain)."""
    from starlette.applications import Starlette

    from .oauth_routes import routes

    return Starlette(routes=routes(oauth, issuer))


def lazy_routes(oauth: OAuthService, issuer: str) -> list[BaseRoute]:
    """The flow's routes for the API's app, made (imported and built) at the first request to one of them."""
    flow = LazyFlow(lambda: oauth_app(oauth, issuer))
    return [Route(path, flow) for path in ROUTED]


class LazyFlow:
    """An ASGI app made at its first request, on a worker thread (the event loop goes on serving meanwhile)."""

    def __init__(self, make: Callable[[], ASGIApp]) -> None:
        self._make = make
        self._app: ASGIApp | None = None
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self._app
        if app is None:
            app = await anyio.to_thread.run_sync(self._made)
        await app(scope, receive, send)

    def _made(self) -> ASGIApp:
        with self._lock:
            if self._app is None:
                self._app = self._make()
            return self._app


def challenge(issuer: str | None, token_sent: bool) -> str:
    """A 401's WWW-Authenticate from /mcp: where a client discovers the OAuth flow (RFC 9728 §5.1), and, when a
    token came with the request, that it was refused (RFC 6750 §3.1)."""
    params = (['error="invalid_token"'] if token_sent else []) + (
        [f'resource_metadata="{resource_metadata_url(issuer)}"'] if issuer else [])
    return "Bearer " + ", ".join(params) if params else "Bearer"


class Challenge:
    """Every 401 from /mcp carries `challenge`."""

    def __init__(self, app: ASGIApp, issuer: str) -> None:
        self.app = app
        self.issuer = issuer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        header = challenge(self.issuer, "authorization" in Headers(scope=scope))

        async def send_challenge(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                MutableHeaders(scope=message)["WWW-Authenticate"] = header
            await send(message)

        await self.app(scope, receive, send_challenge)


