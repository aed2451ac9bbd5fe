"""REST routes for the review list: what capture decided about pairs of memories, and a person's answer."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import StrictStr

from ...app import operations as ops
from .body import Body, json_body
from .context import Ctx
from .openapi import documented, errors, query, requiring
from .params import int_param
from .schemas import CONFLICT, KEEP, schema

router = APIRouter()


class AnswerBody(Body):
    model_config = requiring("conflict", "keep")
    conflict: Annotated[StrictStr | None, schema(CONFLICT)] = None
    keep: Annotated[StrictStr | None, schema(KEEP)] = None


AnswerIn = Annotated[AnswerBody, Depends(json_body(AnswerBody))]


@router.get("/conflicts", responses=errors(400), openapi_extra=documented(
    None, query("limit", "Items per answer, clamped to 1-100", "integer", minimum=1, maximum=100, default=20)))
def conflicts(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Pairs of memories capture decided about in the last 30 days (retired, kept as a draft, flagged as similar
    or as a possible update, merged, replaced) that wait for an answer, newest first."""
    return ops.conflicts(request.app.state.brain, ctx, int_param(request.query_params, "limit", 20))


@router.post("/conflicts/answer", responses=errors(400, 403, 404, 409, 413, 503),
             openapi_extra=documented(AnswerBody))
def answer(ctx: Ctx, body: AnswerIn, request: Request) -> dict[str, Any]:
    """Keep both memories of an item, the newer or the older. Keep both undoes what capture did automatically:
    the older memory gets back its text, tags and status, and a note that was merged in is stored on its own."""
    return ops.answer_conflict(request.app.state.brain, ctx, body.conflict, body.keep)
