"""REST routes for the memory lifecycle and its reads."""

from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, Request
from pydantic import StrictBool, StrictInt, StrictStr

from ...app import operations as ops
from ...app.operations.inputs import required
from ...app.operations.memories import LIST_OFFSET_MOST
from ...ports.read_model import LIST_ORDERS
from .body import Body, json_body
from .context import Ctx
from .openapi import (
    AS_OF,
    FILTERS,
    FLAG,
    ID,
    TEXT_QUERY,
    documented,
    errors,
    link,
    linked,
    memory_links,
    query,
    requiring,
)
from .params import flag_param, int_param, text_param
from .schemas import (
    CAPTURE_PROJECT,
    CAPTURE_TAGS,
    CONTENT,
    FORCE,
    LAYER,
    MEMORY_ID,
    NOT_BLANK,
    SOURCE,
    STATUS,
    TAGS,
    TEAM_ID,
    TEAM_IN_COMPANY,
    VOLATILITY,
    WHEN,
    WHEN_KIND,
    optional,
    schema,
)

router = APIRouter()
# `when_kind` says what `when` is, so it needs one.
KIND_NEEDS_WHEN = {"anyOf": [{"properties": {"when_kind": {"type": "null"}}},
                             {"required": ["when"], "properties": {"when": {"not": {"type": "null"}}}}]}
IDEMPOTENCY_KEY = {"name": "Idempotency-Key", "in": "header", "required": False, "schema": {
    "type": "string", "minLength": 1, "maxLength": 255, "pattern": NOT_BLANK}, "description": "Send a retry with the "
    "same key: the note is stored once, and the retry gets the first answer (409 if its request differs)"}


class CaptureBody(Body):
    model_config = requiring("content", allOf=[TEAM_IN_COMPANY, KIND_NEEDS_WHEN])
    content: Annotated[StrictStr | None, schema(CONTENT)] = None
    tags: Annotated[list[StrictStr] | None, optional(CAPTURE_TAGS)] = None
    source: Annotated[StrictStr | None, optional(SOURCE)] = None
    workspace: Annotated[StrictStr | None, optional(LAYER)] = None
    volatility: Annotated[StrictStr | None, optional(VOLATILITY)] = None
    project: Annotated[StrictStr | None, optional(CAPTURE_PROJECT)] = None
    when: Annotated[StrictStr | StrictInt | None, optional(WHEN)] = None  # ISO 8601 or Unix ms
    when_kind: Annotated[StrictStr | None, optional(WHEN_KIND)] = None
    team: Annotated[StrictStr | None, optional(TEAM_ID)] = None
    force: Annotated[StrictBool | None, optional(FORCE)] = None


class ShareBody(Body):
    model_config = requiring("id")
    id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None
    workspace: Annotated[StrictStr | None, optional(LAYER)] = None  # absent: company
    team: Annotated[StrictStr | None, optional(TEAM_ID)] = None  # ignored with workspace personal


class AppendBody(Body):
    model_config = requiring("id", "addition")
    id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None
    addition: Annotated[StrictStr | None, schema(CONTENT)] = None
    volatility: Annotated[StrictStr | None, optional(VOLATILITY)] = None


class UpdateBody(Body):
    model_config = requiring("id", "content")
    id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None
    content: Annotated[StrictStr | None, schema(CONTENT)] = None
    tags: Annotated[list[StrictStr] | None, optional(TAGS)] = None
    volatility: Annotated[StrictStr | None, optional(VOLATILITY)] = None


class IdBody(Body):
    model_config = requiring("id")
    id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None


class TagsBody(Body):
    model_config = requiring("id")
    id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None
    add: Annotated[list[StrictStr] | None, optional({**TAGS, "description": "Topic tags to add. " + TAGS[
        "description"]})] = None
    remove: Annotated[list[StrictStr] | None, optional({**TAGS, "description": "Topic tags to take off"})] = None


class StatusBody(Body):
    model_config = requiring("id", "status")
    id: Annotated[StrictStr | None, schema(MEMORY_ID)] = None
    status: Annotated[StrictStr | None, schema(STATUS)] = None


CaptureIn = Annotated[CaptureBody, Depends(json_body(CaptureBody))]
TagsIn = Annotated[TagsBody, Depends(json_body(TagsBody))]
AppendIn = Annotated[AppendBody, Depends(json_body(AppendBody))]
UpdateIn = Annotated[UpdateBody, Depends(json_body(UpdateBody))]
IdIn = Annotated[IdBody, Depends(json_body(IdBody))]
StatusIn = Annotated[StatusBody, Depends(json_body(StatusBody))]
ShareIn = Annotated[ShareBody, Depends(json_body(ShareBody))]

@router.post("/capture", responses={**errors(400, 404, 409, 413, 503), **linked(
    200, "Stored (`id`), folded into a stored memory, or refused as a repeat (`ok` false, `matchId`)",
    memory_links("/id"))}, openapi_extra=documented(CaptureBody, IDEMPOTENCY_KEY))
def capture(ctx: Ctx, body: CaptureIn, request: Request) -> dict[str, Any]:
    return ops.capture(request.app.state.brain, ctx, body.content, body.tags, body.source, body.workspace,
                       body.volatility, body.project, body.when, body.when_kind,
                       idempotency_key=request.headers.get("idempotency-key"), team=body.team,
                       force=bool(body.force))


@router.post("/share", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(ShareBody))
def share(ctx: Ctx, body: ShareIn, request: Request) -> dict[str, Any]:
    """Move one memory between your personal layer and a company workspace (a move, not a copy)."""
    return ops.share(request.app.state.brain, ctx, body.id, body.workspace, body.team)


@router.post("/append", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(AppendBody))
def append(ctx: Ctx, body: AppendIn, request: Request) -> dict[str, Any]:
    return ops.append(request.app.state.brain, ctx, body.id, body.addition, body.volatility)


@router.post("/update", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(UpdateBody))
def update(ctx: Ctx, body: UpdateIn, request: Request) -> dict[str, Any]:
    return ops.update(request.app.state.brain, ctx, body.id, body.content, body.tags, body.volatility)


@router.post("/forget", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(IdBody))
def forget(ctx: Ctx, body: IdIn, request: Request) -> dict[str, Any]:
    return ops.forget(request.app.state.brain, ctx, body.id)


@router.post("/status", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(StatusBody))
def status(ctx: Ctx, body: StatusIn, request: Request) -> dict[str, Any]:
    return ops.set_status(request.app.state.brain, ctx, body.id, body.status)


@router.post("/tags", responses=errors(400, 403, 404, 409, 413, 503), openapi_extra=documented(TagsBody),
             summary="Ours, beyond the reference: add and remove a memory's topic tags (the brain's own stay)")
def retag(ctx: Ctx, body: TagsIn, request: Request) -> dict[str, Any]:
    return ops.retag(request.app.state.brain, ctx, body.id, body.add, body.remove)


def filter_args(request: Request) -> dict[str, Any]:
    """The filters every read takes from its query string."""
    params = request.query_params
    return {"workspace": text_param(params, "workspace"), "tag": text_param(params, "tag"),
            "after": text_param(params, "after"), "before": text_param(params, "before"),
            "kind": text_param(params, "kind"), "actor": text_param(params, "actor"),
            "project": text_param(params, "project"), "team": text_param(params, "team")}


@router.get("/list", responses={**errors(400, 404), **linked(200, "The newest memories first", {
    **memory_links("/0/id"), "LinkTwo": link("/link", "post", "A link between the two newest memories", body={
        "source_id": "$response.body#/0/id", "target_id": "$response.body#/1/id"})})}, openapi_extra=documented(
    None, query("n", "Entries to return, clamped to 1-100", "integer", minimum=1, maximum=100, default=20), *FILTERS,
    AS_OF, query("sort", "Ours, beyond the reference: `newest` first (the default), `oldest` first, `updated` (most "
                 "recently changed first) or `important` (then newest); not with `as_of`", "string",
                 enum=list(LIST_ORDERS), default="newest"),
    query("offset", "Ours, beyond the reference: entries to skip, 0-9900; not with `as_of`", "integer", minimum=0,
          maximum=LIST_OFFSET_MOST, default=0)))
def list_entries(ctx: Ctx, request: Request) -> list[dict[str, Any]]:
    params = request.query_params
    return ops.list_recent(request.app.state.brain, ctx, int_param(params, "n", 20), most=100,
                           as_of=text_param(params, "as_of"), sort=text_param(params, "sort"),
                           offset=int_param(params, "offset", 0), **filter_args(request))


@router.get("/entry", responses=errors(400, 404), openapi_extra=documented(
    None, query("id", "The entry id", required=True, **ID), AS_OF,
    query("diff", "`1`: add `revisions`, each version of the memory with the text changes between them", **FLAG)))
def entry(ctx: Ctx, request: Request, background: BackgroundTasks) -> dict[str, Any]:
    params = request.query_params
    return {"ok": True, "entry": ops.get(request.app.state.brain, ctx, params.get("id"), defer=background.add_task,
                                         as_of=text_param(params, "as_of"), diff=flag_param(params, "diff"))}


@router.get("/count", responses=errors())
def count(ctx: Ctx, request: Request) -> dict[str, Any]:
    return ops.count(request.app.state.brain, ctx)


@router.get("/tags", responses=errors(),
            openapi_extra=documented(None, query("counts", "`1`: `{tag, count}` objects", **FLAG)))
def tags(ctx: Ctx, request: Request) -> list[Any]:
    return ops.tags(request.app.state.brain, ctx, flag_param(request.query_params, "counts"))


@router.get("/stats", responses=errors())
def stats(ctx: Ctx, request: Request) -> dict[str, Any]:
    return ops.stats(request.app.state.brain, ctx)


@router.get("/recall", responses=errors(400, 404, 503), openapi_extra=documented(
    None, query("query", "Natural-language search query", required=True, **TEXT_QUERY),
    query("topK", "Most results, clamped to 1-20", "integer", minimum=1, maximum=20, default=5),
    query("hops", "Graph expansion depth, clamped to 0-3", "integer", minimum=0, maximum=3),
    query("full", "`1`: complete contents instead of snippets", **FLAG), *FILTERS, AS_OF))
def recall(ctx: Ctx, request: Request, background: BackgroundTasks) -> dict[str, Any]:
    params = request.query_params
    query = required(params.get("query"), "query")  # named first, before any other parameter is read
    # REST alone adds the model's insight (MCP recall never synthesises) and counts recalls after answering.
    return ops.recall(request.app.state.brain, ctx, query, int_param(params, "topK", 5),
                      hops=int_param(params, "hops", None), full=flag_param(params, "full"), insight=True,
                      as_of=text_param(params, "as_of"), defer=background.add_task, **filter_args(request))


@router.post("/vectorize-pending", responses=errors(400, 503), openapi_extra=documented(
    None, query("limit", "Entries to embed, clamped to 1-500", "integer", minimum=1, maximum=500, default=50)))
def vectorize_pending(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Embed memories that have no vectors yet, now, instead of waiting for the background worker."""
    limit = int_param(request.query_params, "limit", 50)
    return ops.vectorize_pending(request.app.state.brain, ctx, limit)
