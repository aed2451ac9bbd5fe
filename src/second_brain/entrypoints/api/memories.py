"""REST routes for the memory lifecycle and its reads."""

from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, Request
from pydantic import StrictStr

from ...app.chat import insight
from ...app.memories import Context
from ...app.recall.pipeline import RecallRequest
from ...domain.errors import SemanticUnavailable
from ...domain.identity import Identity
from ...ports.read_model import Filters
from .. import operations as ops
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
    when: StrictStr | None = None
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


def filters(ctx: Context, request: Request) -> Filters:
    params = request.query_params
    return ops.filters(
        request.app.state.brain, ctx, workspace=text_param(params, "workspace"), tag=text_param(params, "tag"),
        after=int_param(params, "after", None), before=int_param(params, "before", None),
        kind=text_param(params, "kind"), actor=text_param(params, "actor"), project=text_param(params, "project"),
    )


@router.get("/list")
def list_entries(ctx: Ctx, request: Request) -> list[dict[str, Any]]:
    n = int_param(request.query_params, "n", 20, 1, 100)
    return request.app.state.brain.queries.recent(ctx, filters(ctx, request), n)


@router.get("/entry")
def entry(ctx: Ctx, request: Request) -> dict[str, Any]:
    entry_id = ops.required(request.query_params.get("id"), "id")
    return {"ok": True, "entry": request.app.state.brain.queries.entry(ctx, entry_id)}


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
    recall_request = RecallRequest(
        query=query,
        top_k=int_param(params, "topK", 5, 1, 20),  # type: ignore[arg-type]
        filters=filters(ctx, request),
        full=flag_param(params, "full"),
        hops=int_param(params, "hops", None, 0, 3),  # unset: the DEFAULT_HOPS setting
    )
    brain = request.app.state.brain
    response = brain.recall.recall(ctx, recall_request)
    response["insight"] = insight(brain.llm, query, response["results"])  # REST only: MCP recall never synthesises
    background.add_task(brain.memories.record_recalls, ctx, [r["id"] for r in response["results"]])
    return response


@router.post("/vectorize-pending")
def vectorize_pending(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Embed memories that have no vectors yet, now, instead of waiting for the background worker."""
    limit = int_param(request.query_params, "limit", 50, 1, 500)
    brain = request.app.state.brain
    if brain.indexer is None:
        raise SemanticUnavailable("Semantic search is unavailable: no embedder is loaded (see the server log)")
    report = brain.indexer.run_once(limit)  # type: ignore[arg-type]
    return {"ok": True, "vectorized": report.vectorized, "failed": report.failed, "remaining": report.remaining}
