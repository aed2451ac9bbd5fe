"""REST routes for the dashboard's overview: the brief (its MCP twin is the `brief` prompt, mcp/insights.py)
and the graph (which has none)."""

from typing import Any

from fastapi import APIRouter, Request

from ...app import operations as ops
from .context import Ctx
from .openapi import ID, SCOPE, documented, errors, query
from .params import int_param, text_param
from .schemas import POSITIVE_RANGE, SLUG

router = APIRouter()


@router.get("/brief", responses=errors())
def brief(ctx: Ctx, request: Request) -> dict[str, Any]:
    return ops.brief(request.app.state.brain, ctx)


@router.get("/graph", responses=errors(400, 404), openapi_extra=documented(
    None, query("seed", "Centre the graph on this readable memory", **ID),
    query("limit", "Most nodes, at least 1 (more than 500 is clamped)", "integer",
          **POSITIVE_RANGE, default=100),
    SCOPE,
    query("project", "Start from this project's memories; unknown: 404 with `known_projects`",
          pattern=SLUG["pattern"])))
def graph(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    return ops.graph(request.app.state.brain, ctx, text_param(params, "seed"), int_param(params, "limit", None),
                     text_param(params, "workspace"), text_param(params, "team"), text_param(params, "project"))
