"""REST routes for the project registry."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import StrictStr

from ...app import operations as ops
from .body import Body, json_body
from .context import Ctx
from .openapi import FLAG, documented, errors, query
from .params import flag_param, text_param

router = APIRouter()
SCOPE = (query("workspace", "Restrict to one layer", enum=["personal", "company"]),
         query("team", "With workspace=company, one team (an id from GET /team/workspaces)"))


class ProjectBody(Body):
    id: StrictStr | None = None
    name: StrictStr | None = None
    description: StrictStr | None = None
    aliases: list[StrictStr] | None = None
    status: StrictStr | None = None
    workspace: StrictStr | None = None
    team: StrictStr | None = None


ProjectIn = Annotated[ProjectBody, Depends(json_body(ProjectBody))]


@router.get("/projects", responses=errors(400, 404), openapi_extra=documented(
    None, *SCOPE, query("include_archived", "`1`: archived projects too", **FLAG),
    query("counts", "`1`: a `count` per project", **FLAG)))
def list_projects(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    return ops.list_projects(request.app.state.brain, ctx, text_param(params, "workspace"),
                             flag_param(params, "include_archived"), flag_param(params, "counts"),
                             text_param(params, "team"))


@router.post("/projects", status_code=201, responses=errors(400, 404, 409, 413, 503),
             openapi_extra=documented(ProjectBody))
def create_project(ctx: Ctx, body: ProjectIn, request: Request) -> JSONResponse:
    created = ops.create_project(request.app.state.brain, ctx, body.name, body.id, body.description or "",
                                 body.aliases, body.workspace, body.team)
    return JSONResponse(created, status_code=201)


@router.patch("/projects/{slug}", responses=errors(400, 404, 409, 413, 503),
              openapi_extra=documented(ProjectBody, *SCOPE))
def update_project(slug: str, ctx: Ctx, body: ProjectIn, request: Request) -> dict[str, Any]:
    project = request.app.state.brain.projects.update(ctx, slug, body.name, body.description, body.aliases,
                                                      body.status, scope=scope(ctx, request))
    return {"ok": True, "project": project}


@router.delete("/projects/{slug}", responses=errors(400, 404, 409, 503), openapi_extra=documented(None, *SCOPE))
def delete_project(slug: str, ctx: Ctx, request: Request) -> dict[str, Any]:
    request.app.state.brain.projects.delete(ctx, slug, scope=scope(ctx, request))
    return {"ok": True, "deleted": True}


def scope(ctx: Ctx, request: Request) -> tuple[str, ...] | None:
    """The workspaces `workspace` and `team` in the query string narrow a slug to (None: every readable one)."""
    params = request.query_params
    layer, team = text_param(params, "workspace"), text_param(params, "team")
    return None if layer is None and team is None else ops.workspaces_for(ctx, layer, team)
