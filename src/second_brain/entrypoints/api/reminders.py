"""REST routes for time anchors (due dates, events, wake-ups) and open loops."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import StrictInt, StrictStr

from ...app import operations as ops
from .body import Body, json_body
from .context import Ctx
from .openapi import documented, errors, query, requiring
from .params import int_param
from .schemas import COUNT_RANGE, LOOP_ACTION, MEMORY_ID, WHEN, schema

router = APIRouter()


class AnchorBody(Body):
    model_config = requiring("id", "until")
    id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None
    until: Annotated[StrictStr | StrictInt | None, schema(WHEN)] = None  # ISO 8601 or Unix ms, in the future


class MemoryBody(Body):
    model_config = requiring("id")
    id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None


class LoopBody(Body):
    model_config = requiring("id", "action")
    id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None
    action: Annotated[StrictStr | None, schema(LOOP_ACTION)] = None


AnchorIn = Annotated[AnchorBody, Depends(json_body(AnchorBody))]
MemoryIn = Annotated[MemoryBody, Depends(json_body(MemoryBody))]
LoopIn = Annotated[LoopBody, Depends(json_body(LoopBody))]


@router.get("/due", responses=errors(400), openapi_extra=documented(
    None, query("days", "Ours, beyond the reference: read `upcoming` this many days ahead instead of the next 48 "
                        "hours, clamped to 1-366", "integer", minimum=1, maximum=366)))
def due(ctx: Ctx, request: Request) -> dict[str, Any]:
    return ops.due(request.app.state.brain, ctx, int_param(request.query_params, "days", None))


@router.post("/due/snooze", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(AnchorBody))
def snooze(ctx: Ctx, body: AnchorIn, request: Request) -> dict[str, Any]:
    return ops.snooze(request.app.state.brain, ctx, body.id, body.until)


@router.post("/due/clear", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(MemoryBody))
def clear(ctx: Ctx, body: MemoryIn, request: Request) -> dict[str, Any]:
    return ops.clear_anchor(request.app.state.brain, ctx, body.id)


@router.get("/loops", responses=errors(400), openapi_extra=documented(
    None, query("limit", "Loops per page, clamped to 1-100", "integer", minimum=1, maximum=100, default=50),
    query("offset", "Loops to skip", "integer", **COUNT_RANGE, default=0)))
def loops(ctx: Ctx, request: Request) -> dict[str, Any]:
    limit = int_param(request.query_params, "limit", 50)
    offset = int_param(request.query_params, "offset", 0)
    return ops.loops(request.app.state.brain, ctx, limit, offset)


@router.post("/loops/resolve", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(LoopBody))
def resolve(ctx: Ctx, body: LoopIn, request: Request) -> dict[str, Any]:
    return ops.resolve_loop(request.app.state.brain, ctx, body.id, body.action)
