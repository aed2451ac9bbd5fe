"""REST routes for the nightly upkeep: GET /maintenance (each job's latest run), POST /maintenance/run (run now)."""

from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from ...app import operations as ops
from .context import Ctx
from .openapi import documented, errors, query

router = APIRouter()


@router.get("/maintenance", responses=errors(403))
def status(ctx: Ctx, request: Request) -> dict[str, Any]:
    return ops.maintenance_status(request.app.state.brain, ctx)


@router.post("/maintenance/run", responses=errors(400, 403, 404), openapi_extra=documented(
    None, query("job", "One job to run now (see GET /maintenance); omitted: every nightly job", "string")))
async def run(ctx: Ctx, request: Request) -> dict[str, Any]:
    return await run_in_threadpool(ops.run_maintenance, request.app.state.brain, ctx, request.query_params.get("job"))
