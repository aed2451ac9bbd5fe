"""REST routes for backups: GET /export and POST /import, in the reference's version 3 format."""

import ctypes
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from ...app.handling import Context
from ...app.transfer import ImportPayload, Transfer, parse_payload
from .body import parse_object, read_body
from .context import Ctx
from .openapi import documented, errors, query
from .params import int_param

router = APIRouter()
MAX_IMPORT_BYTES = 512 * 1024 * 1024  # a whole backup is resent with every page


@router.get("/export", responses=errors())
def export(ctx: Ctx, request: Request) -> dict[str, Any]:
    return request.app.state.brain.transfer.export(ctx)


@router.post("/import", responses=errors(400, 413, 503), openapi_extra=documented(
    ImportPayload, query("limit", "Rows per call, clamped to 1-1000", "integer", minimum=1, maximum=1000, default=40),
    query("offset", "Entry offset to resume from", "integer", minimum=0, default=0),
    query("edge_offset", "Edge offset to resume from", "integer", minimum=0, default=0)))
async def import_backup(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    limit = int_param(params, "limit", 40, 1, 1000)
    offset = int_param(params, "offset", 0, 0)
    edge_offset = int_param(params, "edge_offset", 0, 0)
    raw = await read_body(request, MAX_IMPORT_BYTES)
    # A whole backup comes with every page: parsing it off the event loop keeps other requests answering.
    try:
        return await run_in_threadpool(_import_page, request.app.state.brain.transfer, ctx, raw, limit, offset,
                                       edge_offset)
    finally:
        del raw
        release_freed_memory()


def _import_page(transfer: Transfer, ctx: Context, raw: bytearray, limit: int, offset: int,
                 edge_offset: int) -> dict[str, Any]:
    return transfer.import_page(ctx, parse_payload(parse_object(raw)), limit, offset, edge_offset)


def release_freed_memory() -> None:
    """Hand the memory a large payload's objects were freed from back to the system: glibc keeps it otherwise,
    and a 100k-memory backup parsed once per page would leave the server holding hundreds of MB."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _libc() -> Any:
    libc = ctypes.CDLL(None)  # the symbols already loaded: glibc's malloc_trim where there is one
    return libc if hasattr(libc, "malloc_trim") else None  # not glibc (macOS, musl): nothing to trim


_LIBC = _libc()
