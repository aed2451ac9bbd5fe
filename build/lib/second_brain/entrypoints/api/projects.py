"""REST routes for the project registry."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import StrictStr

from .. import operations as ops
from ..operations import required, workspaces_for
from .body import Body, json_body
from .memories import Ctx
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


@router.get("/projects")
def list_projects(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    return ops.list_projects(request.app.state.brain, ctx, text_param(params, "workspace"),
                             flag_param(params, "include_archived"), flag_param(params, "counts"))


@router.post("/projects", status_code=201)
def create_project(ctx: Ctx, body: ProjectIn, request: Request) -> JSONResponse:
    workspaces_for(ctx, body.workspace)  # validates the layer; projects land in the personal workspace for now
    project = request.app.state.brain.projects.create(
        ctx, required(body.name, "name"), body.id, body.description or "", body.aliases or []
    )
    return JSONResponse({"ok": True, "project": project}, status_code=201)


@router.patch("/projects/{slug}")
def update_project(slug: str, ctx: Ctx, body: ProjectIn, request: Request) -> dict[str, Any]:
    project = request.app.state.brain.projects.update(ctx, slug, body.name, body.description, body.aliases,
                                                      body.status)
    return {"ok": True, "project": project}


@router.delete("/projects/{slug}")
def delete_project(slug: str, ctx: Ctx, request: Request) -> dict[str, Any]:
    request.app.state.brain.projects.delete(ctx, slug)
    return {"ok": True, "deleted": True}
