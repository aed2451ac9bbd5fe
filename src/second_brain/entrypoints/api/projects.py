"""REST routes for the project registry."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse
from pydantic import StrictStr

from ...app import operations as ops
from .body import Body, json_body
from .context import Ctx
from .openapi import FLAG, SCOPE, documented, errors, link, linked, query, requiring
from .params import flag_param, text_param
from .schemas import (
    ALIASES,
    DESCRIPTION,
    LAYER,
    PROJECT_NAME,
    PROJECT_STATUS,
    SLUG,
    TEAM_ID,
    TEAM_IN_COMPANY,
    optional,
    schema,
)

router = APIRouter()
# Without an `id`, the slug is made from the name: it needs a letter or digit to make one of.
SLUG_FROM_NAME = {"anyOf": [{"required": ["id"], "properties": {"id": {"type": "string"}}},
                            {"properties": {"name": {"pattern": "[A-Za-z0-9]"}}}]}
PROJECT = "$response.body#/project/id"


class NewProjectBody(Body):
    model_config = requiring("name", allOf=[TEAM_IN_COMPANY, SLUG_FROM_NAME])
    id: Annotated[StrictStr | None, optional(SLUG)] = None
    name: Annotated[StrictStr | None, schema(PROJECT_NAME)] = None
    description: Annotated[StrictStr | None, optional(DESCRIPTION)] = None
    aliases: Annotated[list[StrictStr] | None, optional(ALIASES)] = None
    workspace: Annotated[StrictStr | None, optional(LAYER)] = None
    team: Annotated[StrictStr | None, optional(TEAM_ID)] = None


class ProjectChangesBody(Body):
    name: Annotated[StrictStr | None, optional(PROJECT_NAME)] = None
    description: Annotated[StrictStr | None, optional(DESCRIPTION)] = None
    aliases: Annotated[list[StrictStr] | None, optional(ALIASES)] = None
    status: Annotated[StrictStr | None, optional(PROJECT_STATUS)] = None


NewProjectIn = Annotated[NewProjectBody, Depends(json_body(NewProjectBody))]
ProjectChangesIn = Annotated[ProjectChangesBody, Depends(json_body(ProjectChangesBody))]
Slug = Annotated[str, Path(json_schema_extra=SLUG)]  # described only: an unknown slug is a 404, like any other


@router.get("/projects", responses=errors(400, 404), openapi_extra=documented(
    None, SCOPE, query("include_archived", "`1`: archived projects too", **FLAG),
    query("counts", "`1`: a `count` per project", **FLAG)))
def list_projects(ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    return ops.list_projects(request.app.state.brain, ctx, text_param(params, "workspace"),
                             flag_param(params, "include_archived"), flag_param(params, "counts"),
                             text_param(params, "team"))


@router.post("/projects", status_code=201, responses={**errors(400, 404, 409, 413, 503), **linked(
    201, "The project created", {
        "Update": link("/projects/{slug}", "patch", "Change the project", {"slug": PROJECT}),
        "Delete": link("/projects/{slug}", "delete", "Delete the project", {"slug": PROJECT}),
        "List": link("/list", "get", "Its memories", {"project": PROJECT}),
        "Graph": link("/graph", "get", "Its graph", {"project": PROJECT}),
        "Capture": link("/capture", "post", "A memory in it", body={"project": PROJECT})})},
             openapi_extra=documented(NewProjectBody))
def create_project(ctx: Ctx, body: NewProjectIn, request: Request) -> JSONResponse:
    created = ops.create_project(request.app.state.brain, ctx, body.name, body.id, body.description or "",
                                 body.aliases, body.workspace, body.team)
    return JSONResponse(created, status_code=201)


@router.patch("/projects/{slug}", responses=errors(400, 404, 409, 413, 503),
              openapi_extra=documented(ProjectChangesBody, SCOPE))
def update_project(slug: Slug, ctx: Ctx, body: ProjectChangesIn, request: Request) -> dict[str, Any]:
    params = request.query_params
    return ops.update_project(request.app.state.brain, ctx, slug, body.name, body.description, body.aliases,
                              body.status, workspace=text_param(params, "workspace"), team=text_param(params, "team"))


@router.delete("/projects/{slug}", responses=errors(400, 404, 409, 503), openapi_extra=documented(None, SCOPE))
def delete_project(slug: Slug, ctx: Ctx, request: Request) -> dict[str, Any]:
    params = request.query_params
    return ops.delete_project(request.app.state.brain, ctx, slug, workspace=text_param(params, "workspace"),
                              team=text_param(params, "team"))
