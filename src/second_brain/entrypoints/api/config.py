"""REST routes for runtime settings: GET /config, PATCH /config (admin), DELETE /config/:key (admin)."""

from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from .body import json_object
from .context import Ctx
from .openapi import errors

router = APIRouter()


@router.get("/config", responses=errors())
def get_config(ctx: Ctx, request: Request) -> dict[str, Any]:
    return request.app.state.brain.config.view()


@router.patch("/config", responses=errors(400, 403, 413), openapi_extra={"requestBody": {"required": True, "content": {
    "application/json": {"schema": {"type": "object", "description": "Setting name: new value"}}}}})
async def patch_config(ctx: Ctx, request: Request) -> dict[str, Any]:
    values = await json_object(request)
    return await run_in_threadpool(request.app.state.brain.config.patch, ctx, values)


@router.delete("/config/{key}", responses=errors(403, 404))
def reset_config(key: str, ctx: Ctx, request: Request) -> dict[str, Any]:
    return request.app.state.brain.config.reset(ctx, key)
