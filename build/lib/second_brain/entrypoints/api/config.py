"""REST routes for runtime settings: GET /config, PATCH /config (admin), DELETE /config/:key (admin)."""

from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from .body import json_object
from .memories import Ctx

router = APIRouter()


@router.get("/config")
def get_config(ctx: Ctx, request: Request) -> dict[str, Any]:
    return request.app.state.brain.config.view()


@router.patch("/config")
async def patch_config(ctx: Ctx, request: Request) -> dict[str, Any]:
    values = await json_object(request)
    return await run_in_threadpool(request.app.state.brain.config.patch, ctx, values)


@router.delete("/config/{key}")
def reset_config(key: str, ctx: Ctx, request: Request) -> dict[str, Any]:
    return request.app.state.brain.config.reset(ctx, key)
