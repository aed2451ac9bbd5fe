"""REST routes for runtime settings: GET /config, PATCH /config (admin), DELETE /config/:key (admin)."""

from typing import Annotated, Any
from zoneinfo import available_timezones

from fastapi import APIRouter, Path, Request
from starlette.concurrency import run_in_threadpool

from ...app import operations as ops
from ...app.config import SETTINGS, Setting
from .body import json_object
from .context import Ctx
from .openapi import errors

router = APIRouter()


def setting_schema(setting: Setting) -> dict[str, Any]:
    """What one setting takes, from its own range, choices and type (TIMEZONE: the zones this machine knows)."""
    described = setting.describe()
    schema: dict[str, Any] = {"type": described["type"], "description": described["description"]}
    if setting.low is not None:
        schema["minimum"] = setting.low
    if setting.high is not None:
        schema["maximum"] = setting.high
    if setting.choices:
        schema["enum"] = list(setting.choices)
    if setting.key == "TIMEZONE":
        schema["enum"] = sorted(available_timezones())
    return schema


CHANGES = {"type": "object", "additionalProperties": False, "description": "Setting name: new value. Checked "
           "together too: RECENCY_FLOOR_VOLATILE <= RECENCY_FLOOR <= RECENCY_FLOOR_DURABLE and "
           "CANDIDATE_SCORE_THRESHOLD < DUPLICATE_FLAG_THRESHOLD < DUPLICATE_BLOCK_THRESHOLD, with the current values",
           "properties": {setting.key: setting_schema(setting) for setting in SETTINGS}}
Key = Annotated[str, Path(json_schema_extra={"enum": [setting.key for setting in SETTINGS]})]  # else a 404


@router.get("/config", responses=errors())
def get_config(ctx: Ctx, request: Request) -> dict[str, Any]:
    return ops.get_config(request.app.state.brain, ctx)


@router.patch("/config", responses=errors(400, 403, 413), openapi_extra={"requestBody": {"required": True, "content": {
    "application/json": {"schema": CHANGES}}}})
async def patch_config(ctx: Ctx, request: Request) -> dict[str, Any]:
    values = await json_object(request)
    return await run_in_threadpool(ops.patch_config, request.app.state.brain, ctx, values)


@router.delete("/config/{key}", responses=errors(400, 403, 404))  # 400: the default breaks a rule with the others
def reset_config(key: Key, ctx: Ctx, request: Request) -> dict[str, Any]:
    return ops.reset_config(request.app.state.brain, ctx, key)
