"""The FastAPI app factory: one brain in, one app out, no global state."""

import re
import uuid
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse

from ... import __version__
from ...bootstrap import Brain
from . import chat, errors, links, memories, projects, reminders
from .auth import BearerAuth

REQUEST_ID = re.compile(r"^[\w.:-]{1,128}$")
SHELL = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Second Brain</title></head>
<body><h1>Second Brain</h1><p>Version {version}. The API is served here; send a bearer token.</p></body></html>
"""


def create_app(brain: Brain, token: str) -> FastAPI:
    app = FastAPI(title="Second Brain", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.brain = brain
    app.state.auth = BearerAuth(token, brain.owner)
    errors.install(app)
    app.include_router(memories.router)
    app.include_router(links.router)
    app.include_router(projects.router)
    app.include_router(reminders.router)
    app.include_router(chat.router)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def shell() -> str:
        return SHELL.format(version=__version__)

    @app.middleware("http")
    async def request_id(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        given = request.headers.get("x-request-id", "")
        request.state.request_id = given if REQUEST_ID.match(given) else uuid.uuid4().hex
        response = await call_next(request)
        response.headers["X-Request-Id"] = request.state.request_id
        return response

    app.add_middleware(
        CORSMiddleware,
        allow_origins=["*"],
        allow_methods=["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
        allow_headers=["Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id"],
    )
    return app
