"""REST routes for the memory graph: link, unlink, connections."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import StrictStr

from ...app import operations as ops
from .body import Body, json_body
from .context import Ctx
from .openapi import AS_OF, ID, documented, errors, query, requiring
from .params import text_param
from .schemas import LINK_TYPE, MEMORY_ID, optional, schema

router = APIRouter()


class LinkBody(Body):
    model_config = requiring("source_id", "target_id")
    source_id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None
    target_id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None
    type: Annotated[StrictStr | None, optional(LINK_TYPE)] = None  # absent: relates_to


LinkIn = Annotated[LinkBody, Depends(json_body(LinkBody))]


@router.post("/link", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(LinkBody))
def link(ctx: Ctx, body: LinkIn, request: Request) -> dict[str, Any]:
    return ops.link(request.app.state.brain, ctx, body.source_id, body.target_id, body.type)


@router.post("/unlink", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(LinkBody))
def unlink(ctx: Ctx, body: LinkIn, request: Request) -> dict[str, Any]:
    return ops.unlink(request.app.state.brain, ctx, body.source_id, body.target_id, body.type)


@router.get("/connections", responses=errors(400, 404), openapi_extra=documented(
    None, query("id", "The entry whose neighbours to list", required=True, **ID),
    query("type", "One relationship type", enum=LINK_TYPE["enum"]),
    AS_OF))
def connections(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    return ops.connections(request.app.state.brain, ctx, params.get("id"), text_param(params, "type"),
                           as_of=text_param(params, "as_of"))
