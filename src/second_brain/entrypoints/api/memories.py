"""REST routes for the memory lifecycle and its reads."""

from typing import Annotated, Any

from fastapi import APIRouter, BackgroundTasks, Depends, Request
from pydantic import StrictStr

from ...app.chat import insight
from ...app.memories import CaptureOutcome, Context
from ...app.recall.pipeline import RecallRequest
from ...app.time_anchors import parse_when
from ...domain.errors import InvalidInput, SemanticUnavailable
from ...domain.identity import Identity
from ...domain.projects import check_slug
from ...ports.read_model import Filters
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


def required(value: str | None, name: str) -> str:
    if value is None or not value.strip():
        raise InvalidInput(f"Missing or empty {name}")
    return value


def workspaces_for(ctx: Context, layer: str | None) -> tuple[str, ...]:
    """The readable workspaces, narrowed to one layer when the caller asks for it."""
    if layer is None:
        return ctx.identity.readable
    if layer == "personal":
        return (ctx.identity.personal_workspace,)
    if layer == "company":
        return ctx.identity.company_workspaces
    raise InvalidInput("workspace must be personal or company")


@router.post("/capture")
def capture(ctx: Ctx, body: CaptureIn, request: Request) -> dict[str, Any]:
    if body.workspace not in (None, "personal"):
        workspaces_for(ctx, body.workspace)  # rejects unknown layers
        raise InvalidInput("This brain has no company workspace yet: capture to personal")
    brain = request.app.state.brain
    content = required(body.content, "content")
    tags = list(body.tags or [])
    if body.project is not None:
        tags.append(f"project:{body.project.strip()}")
    # A project named on capture, or a literal project: tag, must be a valid slug; unknown ones are created.
    slugs = [check_slug(t.strip().lower().removeprefix("project:")) for t in tags
             if t.strip().lower().startswith("project:")]
    anchor = None
    if body.when is not None:
        anchor = (parse_when(body.when, brain.memories.timezone), body.when_kind or "wake")
    elif body.when_kind is not None:
        raise InvalidInput("when_kind requires when")
    outcome = brain.memories.capture(ctx, content, tags, body.source or "api", body.volatility, anchor)
    if outcome.verdict.action != "block":
        for slug in dict.fromkeys(slugs):
            brain.projects.ensure(ctx, slug)
    return capture_response(outcome)


def capture_response(outcome: CaptureOutcome) -> dict[str, Any]:
    """The reference's response for each outcome of a capture."""
    verdict = outcome.verdict
    score = round(verdict.score * 100, 1)
    match_id = verdict.target.id if verdict.target else None
    if verdict.action == "block":
        return {"ok": False, "duplicate": True, "matchId": match_id, "score": score,
                "message": "Near-exact duplicate detected — not stored"}
    if verdict.action == "merge":
        return {"ok": True, "id": outcome.id, "action": "merged", "tags": list(outcome.tags),
                "message": "Memories merged into a single combined entry"}
    if verdict.action == "replace":
        return {"ok": True, "id": outcome.id, "action": "replaced", "tags": list(outcome.tags),
                "message": "New memory replaced an outdated existing entry"}
    response: dict[str, Any] = {"ok": True, "id": outcome.id, "tags": list(outcome.tags)}
    if verdict.action == "flag":
        response |= {"warning": "similar", "matchId": match_id, "score": score,
                     "message": "Stored but similar entry exists — tagged as duplicate-candidate"}
    elif verdict.action == "contradiction":
        response |= {"resolved_conflict": match_id, "reason": verdict.reason}
    elif verdict.action == "keep_canonical":
        response |= {"status": "draft", "kept_canonical": match_id, "reason": verdict.reason}
    return response


@router.post("/append")
def append(ctx: Ctx, body: AppendIn, request: Request) -> dict[str, Any]:
    memory = request.app.state.brain.memories.append(
        ctx, required(body.id, "id"), required(body.addition, "addition"), body.volatility
    )
    return {"ok": True, "id": memory.id, "message": "Update appended successfully with timestamp"}


@router.post("/update")
def update(ctx: Ctx, body: UpdateIn, request: Request) -> dict[str, Any]:
    brain = request.app.state.brain
    memory = brain.memories.update(ctx, required(body.id, "id"), required(body.content, "content"), body.tags,
                                   body.volatility)
    # The keyword index already holds the new text; vectors are made now, or stay pending if that fails.
    vectors = brain.indexer.index_now(memory.id) if brain.indexer else 0
    response: dict[str, Any] = {"ok": True, "id": memory.id, "vectors": vectors}
    if not vectors:
        response["semantic_unavailable"] = True
    return response


@router.post("/forget")
def forget(ctx: Ctx, body: IdIn, request: Request) -> dict[str, Any]:
    brain = request.app.state.brain
    memory_id = required(body.id, "id").strip()
    vectors = brain.vectors.vector_count(memory_id)
    memory = brain.memories.forget(ctx, memory_id)
    return {"ok": True, "id": memory.id, "deletedVectors": vectors}


@router.post("/status")
def status(ctx: Ctx, body: StatusIn, request: Request) -> dict[str, Any]:
    memory = request.app.state.brain.memories.set_status(ctx, required(body.id, "id"), required(body.status, "status"))
    return {"ok": True, "id": memory.id, "status": body.status}


def filters(ctx: Context, request: Request) -> Filters:
    params = request.query_params
    actor = text_param(params, "actor")
    if actor is not None and actor.lower() in ("me", ctx.identity.actor_id, ctx.identity.name.lower()):
        actor = ctx.identity.actor_id
    kind = text_param(params, "kind")
    tag = text_param(params, "tag")
    project = text_param(params, "project")
    return Filters(
        workspaces=workspaces_for(ctx, text_param(params, "workspace")),
        tag=tag.lower() if tag else None,
        after=int_param(params, "after", None),
        before=int_param(params, "before", None),
        kind=kind if kind in ("episodic", "semantic") else None,  # unrecognised kinds are ignored
        actor=actor,
        any_tags=request.app.state.brain.projects.tags_for(ctx, project) if project else (),
    )


@router.get("/list")
def list_entries(ctx: Ctx, request: Request) -> list[dict[str, Any]]:
    n = int_param(request.query_params, "n", 20, 1, 100)
    return request.app.state.brain.queries.recent(ctx, filters(ctx, request), n)


@router.get("/entry")
def entry(ctx: Ctx, request: Request) -> dict[str, Any]:
    entry_id = required(request.query_params.get("id"), "id")
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
    query = required(params.get("query"), "query")
    recall_request = RecallRequest(
        query=query,
        top_k=int_param(params, "topK", 5, 1, 20),  # type: ignore[arg-type]
        filters=filters(ctx, request),
        full=flag_param(params, "full"),
        hops=int_param(params, "hops", 0, 0, 3),  # type: ignore[arg-type]
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
