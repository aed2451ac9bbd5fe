"""REST routes for compression and patterns: GET /digest (on demand, what the nightly job does) and
POST /patterns/resolve (answering the patterns the nightly job proposed)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field, StrictStr

from ...app import operations as ops
from .body import Body, json_body
from .context import Ctx
from .openapi import documented, errors, query
from .params import text_param

router = APIRouter()


class ResolveBody(Body):
    id: StrictStr | None = None
    ids: Annotated[list[StrictStr], Field(max_length=100)] | None = None  # more is a 400 before any is read
    action: StrictStr | None = None  # confirm | dismiss


ResolveIn = Annotated[ResolveBody, Depends(json_body(ResolveBody))]


@router.get("/digest", responses=errors(400, 404, 409, 503), openapi_extra=documented(
    None, query("tag", "The tag to compress (required unless project is given)"),
    query("project", "The project slug to compress (required unless tag is given); unknown: 404 with "
                     "`known_projects`")))
def digest(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    return ops.digest(request.app.state.brain, ctx, text_param(params, "tag"), text_param(params, "project"))


@router.post("/patterns/resolve", responses=errors(400, 403, 404, 409, 413, 503),
             openapi_extra=documented(ResolveBody))
def resolve(ctx: Ctx, body: ResolveIn, request: Request) -> dict[str, Any]:
    return ops.resolve_patterns(request.app.state.brain, ctx, body.id, body.ids, body.action)
