"""The FastAPI app factory: one brain in, one app out, no global state."""

import contextlib
import re
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Response
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ... import __version__
from ...app.indexing import Foreground
from ...bootstrap import Brain
from ...ports.blobs import BlobStore
from ...settings import Settings
from ..mcp import BearerGate, build_mcp, current_identity
from . import (
    chat,
    config,
    dashboard,
    digest,
    errors,
    extraction,
    insights,
    links,
    maintenance,
    memories,
    oauth,
    projects,
    push,
    reminders,
    team,
    timeline,
    transfer,
)

REQUEST_ID = re.compile(r"^[\w.:-]{1,128}$")
CORS_METHODS = ["GET", "POST", "OPTIONS"]


def create_app(brain: Brain, token: str | Callable[[], str], public_url: str | None = None,
               blobs: BlobStore | None = None, serve_oauth: bool = True) -> FastAPI:
    """The REST API and /mcp over one brain; `public_url` (else BRAIN_PUBLIC_URL) is where clients reach it.
    `token`: the owner's, or a function returning the current one. `blobs`: where backups too large for one
    request or response go (on Lambda). `serve_oauth`: whether MCP's OAuth flow is served here (on AWS it is the
    MCP function URL's, not API Gateway's)."""
    auth = oauth.authentication(brain.store, brain.team, token)
    issuer = oauth.issuer_of(brain.settings, public_url) if serve_oauth else None
    mcp = build_mcp(brain, current_identity)
    # Stateless JSON exchanges: no session to lose between requests, or between processes behind a balancer.
    mcp.streamable_http_app(json_response=True, stateless_http=True,
                            transport_security=transport_security(brain.settings, public_url))

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield

    app = FastAPI(title="Second Brain", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json", lifespan=lifespan)
    app.state.brain = brain
    app.state.auth = auth.rest
    app.state.blobs = blobs
    gate: ASGIApp = BearerGate(StreamableHTTPASGIApp(mcp.session_manager), auth.mcp)
    if issuer:
        gate = oauth.Challenge(gate, issuer)
        app.router.routes.extend(oauth.routes(auth.grants, issuer))
    app.router.routes.append(Route("/mcp", gate, methods=["GET", "POST", "DELETE"]))
    errors.install(app)
    app.include_router(memories.router)
    app.include_router(links.router)
    app.include_router(projects.router)
    app.include_router(reminders.router)
    app.include_router(chat.router)
    app.include_router(transfer.router)
    if blobs is not None:
        app.include_router(transfer.uploads)
    app.include_router(config.router)
    app.include_router(team.router)
    app.include_router(maintenance.router)
    app.include_router(extraction.router)
    app.include_router(push.router)
    app.include_router(insights.router)
    app.include_router(digest.router)
    app.include_router(timeline.router)
    app.include_router(dashboard.router)
    app.openapi = documented_400(app)  # type: ignore[method-assign]

    app.add_middleware(RequestScope, foreground=brain.foreground)
    app.add_middleware(
        EnvelopeCORS,
        allow_origins=brain.settings.cors_origins or ["*"],
        allow_methods=CORS_METHODS,
        allow_headers=["Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id"],
        expose_headers=["X-Request-Id", "Retry-After"],
    )
    return app


def documented_400(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """The schema without FastAPI's 422: errors.install answers invalid parameters 400, as the routes document."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            for operation in (op for path in schema["paths"].values() for op in path.values()):
                operation["responses"].pop("422", None)
            for name in ("HTTPValidationError", "ValidationError"):
                schema["components"]["schemas"].pop(name, None)
        return app.openapi_schema  # type: ignore[return-value]

    return openapi


class RequestScope:
    """Each HTTP request gets an id (the caller's X-Request-Id if well-formed, echoed back) and counts as foreground
    work while it runs, so background indexing yields the cores to it. Plain ASGI: no per-request task or copy."""

    def __init__(self, app: ASGIApp, foreground: Foreground) -> None:
        self.app = app
        self.foreground = foreground

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("x-request-id", "")
        request_id = given if REQUEST_ID.match(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)["X-Request-Id"] = request_id
            await send(message)

        with self.foreground.request():
            await self.app(scope, receive, send_with_id)


class EnvelopeCORS(CORSMiddleware):
    """The reference's CORS: any origin may call the API (`*`, never with credentials: a bearer token is not
    ambient, so an origin check would protect nothing and only break browser clients), with GET, POST and
    OPTIONS, and preflights need no token. BRAIN_CORS_ORIGINS narrows the origins; a refused preflight answers in
    the error envelope like every failure. /mcp keeps its own Origin and Host checks (DNS rebinding)."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code != 400:
            return response
        return JSONResponse({"ok": False, "error": bytes(response.body).decode()}, status_code=400,
                            headers={"Vary": "Origin"})


def transport_security(settings: Settings, public_url: str | None = None) -> TransportSecuritySettings:
    """Host and Origin checks on /mcp (DNS rebinding): local names, the bound host, and the public URL."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if settings.host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        hosts.append(f"{settings.host}:*")
        origins.append(f"http://{settings.host}:*")
    if public_url or settings.public_url:
        public = urlsplit(public_url or settings.public_url or "")
        hosts += [public.netloc, f"{public.hostname}:*"]
        origins += [f"{public.scheme}://{public.netloc}", f"{public.scheme}://{public.hostname}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)
