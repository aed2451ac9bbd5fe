"""Every failure leaves the API in one envelope: {"ok": false, "error": "..."} with the documented status."""

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ...app.handling import CONFLICT_MESSAGE
from ...domain import errors as e
from ...domain.errors import BrainError
from ...domain.text import shorten
from ..statuses import status_of

log = logging.getLogger("second_brain.api")

STATUS_TEXT = {404: "Not found", 405: "Method not allowed", 413: "Request body too large"}


def envelope(status: int, error: str, **extra: object) -> JSONResponse:
    return JSONResponse({"ok": False, "error": error, **extra}, status_code=status)


def install(app: FastAPI) -> None:
    @app.exception_handler(BrainError)
    async def brain_error(_: Request, exc: BrainError) -> JSONResponse:
        if isinstance(exc, e.ConcurrencyConflict):  # the store's text names streams and versions: not for clients
            return envelope(status_of(exc), CONFLICT_MESSAGE)
        return envelope(status_of(exc), exc.message, **exc.details)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        return envelope(400, describe(exc))

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) and exc.status_code not in STATUS_TEXT else None
        response = envelope(exc.status_code, detail or STATUS_TEXT.get(exc.status_code, "Request failed"))
        response.headers.update(exc.headers or {})  # a 405's Allow, which RFC 9110 requires
        return response

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return envelope(500, f"Internal error: {type(exc).__name__}")


def describe(exc: RequestValidationError) -> str:
    """One readable sentence for the first problem FastAPI found (bodies are parsed by body.json_body)."""
    first = exc.errors()[0]
    return f"Invalid {'.'.join(shorten(str(part)) for part in first['loc'])}: {shorten(first['msg'], 200)}"
