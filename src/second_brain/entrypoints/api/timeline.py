"""REST route for the audit feed: the log newest first, scoped to what the caller can read now."""

from typing import Any

from fastapi import APIRouter, Request

from ...app import operations as ops
from ...app.past.timeline import DEFAULT_LIMIT, MAX_LIMIT
from .context import Ctx
from .openapi import ID, documented, errors, query
from .params import int_param, text_param
from .schemas import COUNT_RANGE, MOMENT, TIMELINE_TYPE

router = APIRouter()
TIME = "ISO 8601 (without an offset: the brain's TIMEZONE) or Unix ms"


@router.get("/timeline", responses=errors(400, 404), openapi_extra=documented(
    None,
    query("limit", f"Events per page, clamped to 1-{MAX_LIMIT}", "integer", minimum=1, maximum=MAX_LIMIT,
          default=DEFAULT_LIMIT),
    query("cursor", "Continue below this log position: the `next_cursor` of the page before", "integer",
          **COUNT_RANGE),
    query("id", "Only this memory's events and those of the edges touching it", **ID),
    query("actor", "Only events by this author: a roster name, user id, `me` or `system`"),
    query("type", "Only these events (repeat, or separate with commas): `created`, `appended`, `updated`, "
          "`link_created`, ...", "array", items=TIMELINE_TYPE),
    query("after", f"Only events at/after this moment: {TIME}", pattern=MOMENT["pattern"]),
    query("before", f"Only events at/before this moment: {TIME}", pattern=MOMENT["pattern"])))
def timeline(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    types = [name for value in params.getlist("type") for name in value.split(",")]
    return ops.timeline(
        request.app.state.brain, ctx, memory_id=params.get("id"), actor=text_param(params, "actor"), types=types,
        after=text_param(params, "after"), before=text_param(params, "before"),
        cursor=int_param(params, "cursor", None, low=0), limit=int_param(params, "limit", DEFAULT_LIMIT))
