"""REST routes for time anchors (due dates, events, wake-ups) and open loops."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import StrictInt, StrictStr

from ...app import operations as ops
from .body import Body, json_body
from .memories import Ctx
from .params import int_param

router = APIRouter()
UPCOMING_MS = 48 * 3600 * 1000


class AnchorBody(Body):
    id: StrictStr | None = None
    until: StrictStr | StrictInt | None = None  # ISO 8601 or Unix ms


class LoopBody(Body):
    id: StrictStr | None = None
    action: StrictStr | None = None


AnchorIn = Annotated[AnchorBody, Depends(json_body(AnchorBody))]
LoopIn = Annotated[LoopBody, Depends(json_body(LoopBody))]


@router.get("/due")
def due(ctx: Ctx, request: Request) -> dict[str, Any]:
    return {"ok": True, **request.app.state.brain.queries.due(ctx, UPCOMING_MS)}


@router.post("/due/snooze")
def snooze(ctx: Ctx, body: AnchorIn, request: Request) -> dict[str, Any]:
    return ops.snooze(request.app.state.brain, ctx, body.id, body.until)


@router.post("/due/clear")
def clear(ctx: Ctx, body: AnchorIn, request: Request) -> dict[str, Any]:
    return ops.clear_anchor(request.app.state.brain, ctx, body.id)


@router.get("/loops")
def loops(ctx: Ctx, request: Request) -> dict[str, Any]:
    limit = int_param(request.query_params, "limit", 50)
    offset = int_param(request.query_params, "offset", 0)
    return ops.loops(request.app.state.brain, ctx, limit, offset)  # type: ignore[arg-type]


@router.post("/loops/resolve")
def resolve(ctx: Ctx, body: LoopIn, request: Request) -> dict[str, Any]:
    return ops.resolve_loop(request.app.state.brain, ctx, body.id, body.action)
