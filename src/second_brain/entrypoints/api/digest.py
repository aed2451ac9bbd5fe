"""REST routes for compression and patterns: GET /digest (on demand, what the nightly job does) and
POST /patterns/resolve (answering the patterns the nightly job proposed)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field, StrictStr

from ...app import operations as ops
from ...app.insights.patterns import MAX_IDS
from .body import Body, json_body
from .context import Ctx
from .openapi import documented, errors, requiring, together
from .params import text_param
from .schemas import MEMORY_ID, PATTERN_ACTION, SLUG, TEXT, optional, schema

router = APIRouter()


IDS = {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_IDS,
       "description": "Each answered on its own: an id that cannot be resolved is a failed result, not a 400"}


class ResolveBody(Body):
    # One pattern (`id`) or several (`ids`), never both.
    model_config = requiring("action", oneOf=[
        {"required": ["id"], "properties": {"id": {"type": "string"}, "ids": {"type": "null"}}},
        {"required": ["ids"], "properties": {"ids": {"type": "array"}, "id": {"type": "null"}}}])
    id: Annotated[StrictStr | None, optional(MEMORY_ID)] = None
    ids: Annotated[Annotated[list[StrictStr], Field(max_length=MAX_IDS)] | None,  # more: a 400 before any is read
                   optional(IDS)] = None
    action: Annotated[StrictStr | None, schema(PATTERN_ACTION)] = None


ResolveIn = Annotated[ResolveBody, Depends(json_body(ResolveBody))]


@router.get("/digest", responses=errors(400, 404, 409, 503), openapi_extra=documented(None, together(
    "topic", "What to compress, one of: `tag`, or `project` (a slug; unknown: 404 with `known_projects`)",
    {"tag": TEXT, "project": SLUG}, required=True, minProperties=1, maxProperties=1)))
def digest(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    return ops.digest(request.app.state.brain, ctx, text_param(params, "tag"), text_param(params, "project"))


@router.post("/patterns/resolve", responses=errors(400, 403, 404, 409, 413, 503),
             openapi_extra=documented(ResolveBody))
def resolve(ctx: Ctx, body: ResolveIn, request: Request) -> dict[str, Any]:
    return ops.resolve_patterns(request.app.state.brain, ctx, body.id, body.ids, body.action)
