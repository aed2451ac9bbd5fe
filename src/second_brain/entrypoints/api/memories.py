"""REST routes for the memory lifecycle and its reads."""

from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, Request
from pydantic import StrictInt, StrictStr

from ...app import operations as ops
from ...app.memories import Context
from ...domain.identity import Identity
from .body import Body, json_body
from .params import flag_param, int_param, text_param

router = APIRouter()


class CaptureBody(Body):
    content: StrictStr | None = None
    tags: list[StrictStr] | None = None
    source: StrictStr | None = None
    workspace: StrictStr | None = None
    volatility: StrictStr | None = None
    project: StrictStr | None = None
    when: StrictStr | StrictInt | None = None  # ISO 8601 or Unix ms
    when_kind: StrictStr | None = None


class AppendBody(Body):
    id: StrictStr | None = None
    addition: StrictStr | None = None
    volatility: StrictStr | None = None


class UpdateBody(Body):
    id: StrictStr | None = None
    content: StrictStr | None = None
    tags: list[StrictStr] | None = None
    volatility: StrictStr | None = None


class IdBody(Body):
    id: StrictStr | None = None


class StatusBody(Body):
    id: StrictStr | None = None
    status: StrictStr | None = None


def context(request: Request) -> Context:
    identity: Identity = request.app.state.auth(request)
    return Context(identity, request.state.request_id)


Ctx = Annotated[Context, Depends(context)]
CaptureIn = Annotated[CaptureBody, Depends(json_body(CaptureBody))]
AppendIn = Annotated[AppendBody, Depends(json_body(AppendBody))]
UpdateIn = Annotated[UpdateBody, Depends(json_body(UpdateBody))]
IdIn = Annotated[IdBody, Depends(json_body(IdBody))]
StatusIn = Annotated[StatusBody, Depends(json_body(StatusBody))]




@router.post("/capture")
def capture(ctx: Ctx, body: CaptureIn, request: Request) -> dict[str, Any]:
    return ops.capture(request.app.state.brain, ctx, body.content, body.tags, body.source, body.workspace,
                       body.volatility, body.project, body.when, body.when_kind,
                       idempotency_key=request.headers.get("idempotency-key"))


@router.post("/append")
def append(ctx: Ctx, body: AppendIn, request: Request) -> dict[str, Any]:
    return ops.append(request.app.state.brain, ctx, body.id, body.addition, body.volatility)


@router.post("/update")
def update(ctx: Ctx, body: UpdateIn, request: Request) -> dict[str, Any]:
    return ops.update(request.app.state.brain, ctx, body.id, body.content, body.tags, body.volatility)


@router.post("/forget")
def forget(ctx: Ctx, body: IdIn, request: Request) -> dict[str, Any]:
    return ops.forget(request.app.state.brain, ctx, body.id)


@router.post("/status")
def status(ctx: Ctx, body: StatusIn, request: Request) -> dict[str, Any]:
    return ops.set_status(request.app.state.brain, ctx, body.id, body.status)


def filter_args(request: Request) -> dict[str, Any]:
    """The filters every read takes from its query string."""
    params = request.query_params
    return {"workspace": text_param(params, "workspace"), "tag": text_param(params, "tag"),
            "after": int_param(params, "after", None), "before": int_param(params, "before", None),
            "kind": text_param(params, "kind"), "actor": text_param(params, "actor"),
            "project": text_param(params, "project")}


@router.get("/list")
def list_entries(ctx: Ctx, request: Request) -> list[dict[str, Any]]:
    n = int_param(request.query_params, "n", 20)
    return ops.list_recent(request.app.state.brain, ctx, n, most=100, **filter_args(request))  # type: ignore[arg-type]


@router.get("/entry")
def entry(ctx: Ctx, request: Request) -> dict[str, Any]:
    return {"ok": True, "entry": ops.get(request.app.state.brain, ctx, request.query_params.get("id"))}


@router.get("/count")
def count(ctx: Ctx, request: Request) -> dict[str, Any]:
    return {"count": request.app.state.brain.queries.count(ctx)}


@router.get("/tags")
def tags(ctx: Ctx, request: Request) -> list[Any]:
    return request.app.state.brain.queries.tags(ctx, flag_param(request.query_params, "counts"))


@router.get("/stats")
def stats(ctx: Ctx, request: Request) -> dict[str, Any]:
    return request.app.state.brain.queries.stats(ctx)


@router.get("/recall")
def recall(ctx: Ctx, request: Request, background: BackgroundTasks) -> dict[str, Any]:
    params = request.query_params
    query = ops.required(params.get("query"), "query")
    # REST alone adds the model's insight (MCP recall never synthesises) and counts recalls after answering.
    return ops.recall(request.app.state.brain, ctx, query, int_param(params, "topK", 5),  # type: ignore[arg-type]
                      hops=int_param(params, "hops", None), full=flag_param(params, "full"), insight=True,
                      defer=background.add_task, **filter_args(request))


@router.post("/vectorize-pending")
def vectorize_pending(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Embed memories that have no vectors yet, now, instead of waiting for the background worker."""
    limit = int_param(request.query_params, "limit", 50)
    return ops.vectorize_pending(request.app.state.brain, ctx, limit)  # type: ignore[arg-type]
