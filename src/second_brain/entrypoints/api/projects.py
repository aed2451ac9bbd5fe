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


class ProjectBody(Body):
    id: StrictStr | None = None
    name: StrictStr | None = None
    description: StrictStr | None = None
    aliases: list[StrictStr] | None = None
    status: StrictStr | None = None
    workspace: StrictStr | None = None


ProjectIn = Annotated[ProjectBody, Depends(json_body(ProjectBody))]


@router.get("/projects", responses=errors(400), openapi_extra=documented(
    None, query("workspace", "Restrict to one layer", enum=["personal", "company"]),
    query("include_archived", "`1`: archived projects too", **FLAG),
    query("counts", "`1`: a `count` per project", **FLAG)))
def list_projects(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    return ops.list_projects(request.app.state.brain, ctx, text_param(params, "workspace"),
                             flag_param(params, "include_archived"), flag_param(params, "counts"))


@router.post("/projects", status_code=201, responses=errors(400, 404, 409, 413, 503),
             openapi_extra=documented(ProjectBody))
def create_project(ctx: Ctx, body: ProjectIn, request: Request) -> JSONResponse:
    created = ops.create_project(request.app.state.brain, ctx, body.name, body.id, body.description or "",
                                 body.aliases, body.workspace)
    return JSONResponse(created, status_code=201)


@router.patch("/projects/{slug}", responses=errors(400, 404, 409, 413, 503), openapi_extra=documented(ProjectBody))
def update_project(slug: str, ctx: Ctx, body: ProjectIn, request: Request) -> dict[str, Any]:
    project = request.app.state.brain.projects.update(ctx, slug, body.name, body.description, body.aliases,
                                                      body.status)
    return {"ok": True, "project": project}


@router.delete("/projects/{slug}", responses=errors(400, 404, 409, 503))
def delete_project(slug: str, ctx: Ctx, request: Request) -> dict[str, Any]:
    request.app.state.brain.projects.delete(ctx, slug)
    return {"ok": True, "deleted": True}
