"""REST routes for backups: GET /export and POST /import, in the reference's version 3 format."""

from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from ...app.transfer import ImportPayload, parse_payload
from .body import json_object
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
    payload = parse_payload(await json_object(request, MAX_IMPORT_BYTES))
    limit = int_param(params, "limit", 40, 1, 1000)
    offset = int_param(params, "offset", 0, 0)
    edge_offset = int_param(params, "edge_offset", 0, 0)
    return await run_in_threadpool(request.app.state.brain.transfer.import_page, ctx, payload, limit, offset,
                                   edge_offset)
