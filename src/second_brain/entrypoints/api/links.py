"""REST routes for the memory graph: link, unlink, connections."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import StrictStr

from .body import Body, json_body
from .memories import Ctx, required
from .params import text_param

router = APIRouter()


class LinkBody(Body):
    source_id: StrictStr | None = None
    target_id: StrictStr | None = None
    type: StrictStr | None = None


LinkIn = Annotated[LinkBody, Depends(json_body(LinkBody))]


@router.post("/link")
def link(ctx: Ctx, body: LinkIn, request: Request) -> dict[str, Any]:
    source_id, target_id, link_type = request.app.state.brain.links.link(
        ctx, required(body.source_id, "source_id"), required(body.target_id, "target_id"), body.type or "relates_to"
    )
    return {"ok": True, "source_id": source_id, "target_id": target_id, "type": link_type}


@router.post("/unlink")
def unlink(ctx: Ctx, body: LinkIn, request: Request) -> dict[str, Any]:
    deleted = request.app.state.brain.links.unlink(
        ctx, required(body.source_id, "source_id"), required(body.target_id, "target_id"), body.type
    )
    return {"ok": True, "deleted": deleted}


@router.get("/connections")
def connections(ctx: Ctx, request: Request) -> dict[str, Any]:
    entry_id = required(request.query_params.get("id"), "id").strip()
    found = request.app.state.brain.links.connections(ctx, entry_id, text_param(request.query_params, "type"))
    return {"ok": True, "id": entry_id, "connections": found}
