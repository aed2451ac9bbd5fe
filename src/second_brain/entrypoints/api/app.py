"""The FastAPI app factory: one brain in, one app out, no global state."""

import contextlib
import logging
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
from fastapi import FastAPI, Response
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ... import __version__
from ...app import operations as ops
from ...app.memories.indexing import Foreground
from ...bootstrap import Brain
from ...ports.blobs import BlobStore
from ...settings import Settings
from ..mcp import BearerGate
from . import (
    chat,
    config,
    conflicts,
    dashboard,
    digest,
    errors,
    extraction,
    insights,
    integrations,
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
log = logging.getLogger("second_brain.api")
CORS_METHODS = ["GET", "POST", "OPTIONS"]


def create_app(brain: Brain, token: str | Callable[[], str], public_url: str | None = None,
               blobs: BlobStore | None = None, serve_oauth: bool = True) -> FastAPI:
    """The REST API and /mcp over one brain; `public_url` (else BRAIN_PUBLIC_URL) is where clients reach it.
    `token`: the owner's, or a function returning the current one. `blobs`: where backups too large for one
    request or response go (on Lambda). `serve_oauth`: whether MCP's OAuth flow is served here (on AWS it is the
    MCP function URL's, not API Gateway's)."""
    auth = oauth.authentication(brain.store, brain.team, token)
    issuer = oauth.issuer_of(brain.settings, public_url) if serve_oauth else None
    mcp = McpEndpoint(lambda: mcp_server(brain), lambda server: mcp_sessions(server, brain.settings, public_url))

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Sync routes and MCP tools run on AnyIO's worker threads: a few at once. Sixteen clients on AnyIO's 40
        # threads had every request compete for the interpreter, and a thread holding the database's write lock
        # waited its turn among them (each append held it 17-24 ms instead of 2): 46 requests/s, captures' p99
        # 4 s; with 4 at once 58/s and 0.37 s (bench/load.py).
        anyio.to_thread.current_default_thread_limiter().total_tokens = request_threads(brain.settings)
        async with mcp.running():
            yield

    app = FastAPI(title="Second Brain", version=__version__, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json", lifespan=lifespan)
    app.state.brain = brain
    app.state.auth = auth.rest
    app.state.blobs = blobs
    gate: ASGIApp = BearerGate(mcp, auth.mcp)
    if issuer:
        gate = oauth.Challenge(gate, issuer)
        app.router.routes.extend(oauth.lazy_routes(auth.grants, issuer))
    app.router.routes.append(Route("/mcp", gate, methods=["GET", "POST", "DELETE"]))
    errors.install(app)
    app.include_router(memories.router)
    app.include_router(links.router)
    app.include_router(projects.router)
    app.include_router(reminders.router)
    app.include_router(conflicts.router)
    app.include_router(chat.router)
    app.include_router(transfer.router)
    if blobs is not None:
        app.include_router(transfer.uploads)
    app.include_router(config.router)
    app.include_router(team.router)
    app.include_router(maintenance.router)
    app.include_router(extraction.router)
    app.include_router(push.router)
    app.include_router(integrations.router)
    app.include_router(insights.router)
    app.include_router(digest.router)
    app.include_router(timeline.router)
    app.include_router(dashboard.router)
    app.openapi = documented_400(app)  # type: ignore[method-assign]  # FastAPI's way to change the schema it serves
    app.openapi = integrations.documented_kinds(app, lambda: ops.connector_specs(brain))  # type: ignore[method-assign]

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
        schema = app.openapi_schema
        if schema is None:
            schema = generate()  # kept as app.openapi_schema: changed in place, made once
            for operation in (op for path in schema["paths"].values() for op in path.values()):
                operation["responses"].pop("422", None)
            for name in ("HTTPValidationError", "ValidationError"):
                schema["components"]["schemas"].pop(name, None)
        return schema

    return openapi


def request_threads(settings: Settings) -> int:
    """How many sync requests run at once: BRAIN_REQUEST_THREADS, else twice the cores and at least 4 (a request
    waiting on a model or a remote server holds one)."""
    return settings.request_threads or max(4, 2 * (os.cpu_count() or 1))


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


def mcp_server(brain: Brain) -> Any:
    """The MCP tools over `brain`."""
    from ..mcp import build_mcp, current_identity

    return build_mcp(brain, current_identity)


def mcp_sessions(server: Any, settings: Settings, public_url: str | None) -> Any:
    """A new session manager for `server`'s tools, as stateless JSON exchanges over streamable HTTP (no session to
    lose between requests, or between processes behind a balancer). A session manager runs once: each run of the
    app (on Lambda, each invocation) needs its own."""
    server.streamable_http_app(json_response=True, stateless_http=True,
                               transport_security=transport_security(settings, public_url))
    # Each stateless exchange ends a session of its own, which the SDK logs at INFO ("Terminating session: None"):
    # a line per MCP request, drowning the server's own log.
    logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)
    return server.session_manager


class McpEndpoint:
    """/mcp, made off the start-up path: importing the `mcp` package and building the tools takes half a second,
    which GET /count and every other REST request need not wait for. While the app runs (`running`, in its
    lifespan), a task makes the server on a worker thread (the first time only) and then runs a new session
    manager for it; a request that comes before it is made waits for it; one that comes after it failed to be
    made is answered 503."""

    def __init__(self, make: Callable[[], Any],
                 sessions: Callable[[Any], Any] = lambda server: server.session_manager) -> None:
        self._make = make
        self._sessions = sessions
        self._server: Any = None
        self._app: ASGIApp | None = None
        self._ready: anyio.Event | None = None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        self._app = None  # the last run's session manager has stopped
        self._ready, stop = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._serve, stop)
            try:
                yield
            finally:
                stop.set()

    async def _serve(self, stop: anyio.Event) -> None:
        assert self._ready is not None
        try:
            if self._server is None:
                self._server = await anyio.to_thread.run_sync(self._make)
            sessions = self._sessions(self._server)
            from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
        except Exception:  # the REST API serves on; /mcp says it cannot
            log.exception("the MCP endpoint could not be made")
            self._ready.set()
            return
        async with sessions.run():
            self._app = StreamableHTTPASGIApp(sessions)
            self._ready.set()
            await stop.wait()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._ready is None:
            raise RuntimeError("McpEndpoint is served only inside its running() context (the app's lifespan)")
        await self._ready.wait()
        if self._app is None:
            await JSONResponse({"ok": False, "error": "The MCP endpoint is unavailable: see the server log"},
                               status_code=503)(scope, receive, send)
            return
        await self._app(scope, receive, send)


def transport_security(settings: Settings, public_url: str | None = None) -> Any:
    """Host and Origin checks on /mcp (DNS rebinding): local names, the bound host, and the public URL."""
    from mcp.server.transport_security import TransportSecuritySettings

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
