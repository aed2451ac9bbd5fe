"""REST route for extraction: GET /extract/dry-run previews the nightly verdicts without writing them."""

from typing import Any

from fastapi import APIRouter, Request

from ...app import operations as ops
from .context import Ctx
from .openapi import documented, errors, query
from .params import int_param

router = APIRouter()


@router.get("/extract/dry-run", responses=errors(400, 403), openapi_extra=documented(
    None, query("limit", "Captures to judge, clamped to 1-10", "integer", minimum=1, maximum=10, default=5)))
def dry_run(ctx: Ctx, request: Request) -> dict[str, Any]:
    limit = int_param(request.query_params, "limit", 5)
    return ops.extract_dry_run(request.app.state.brain, ctx, limit)
