"""REST routes for time anchors (due dates, events, wake-ups) and open loops."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import StrictStr

from ...app.time_anchors import parse_when
from ..operations import required
from .body import Body, json_body
from .memories import Ctx
from .params import int_param

router = APIRouter()
UPCOMING_MS = 48 * 3600 * 1000


class AnchorBody(Body):
    id: StrictStr | None = None
    until: StrictStr | None = None


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
    brain = request.app.state.brain
    until = parse_when(required(body.until, "until"), brain.memories.timezone, "until")
    memory = brain.memories.snooze(ctx, required(body.id, "id"), until)
    return {"ok": True, "id": memory.id, "when_at": memory.when_at, "when_kind": memory.when_kind}


@router.post("/due/clear")
def clear(ctx: Ctx, body: AnchorIn, request: Request) -> dict[str, Any]:
    memory = request.app.state.brain.memories.clear_anchor(ctx, required(body.id, "id"))
    return {"ok": True, "id": memory.id, "cleared": True}


@router.get("/loops")
def loops(ctx: Ctx, request: Request) -> dict[str, Any]:
    limit = int_param(request.query_params, "limit", 50, 1, 100)
    offset = int_param(request.query_params, "offset", 0, 0)
    found, total = request.app.state.brain.queries.loops(ctx, limit, offset)  # type: ignore[arg-type]
    return {"ok": True, "loops": found, "total": total, "limit": limit, "offset": offset}


@router.post("/loops/resolve")
def resolve(ctx: Ctx, body: LoopIn, request: Request) -> dict[str, Any]:
    action = required(body.action, "action")
    memory = request.app.state.brain.memories.resolve_loop(ctx, required(body.id, "id"), action)
    return {"ok": True, "id": memory.id, "action": action, "tags": list(memory.tags)}
