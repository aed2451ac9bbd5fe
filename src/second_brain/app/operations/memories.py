"""Memories: capture and the lifecycle (append, update, forget, status, share), reading them (one, the newest,
counts, tags, stats), as they are or, with `as_of`, as they were; and embedding what waits for its vectors."""

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from ...domain.errors import InvalidInput, SemanticUnavailable
from ...domain.extraction import Anchor
from ...domain.projects import check_slug
from ...domain.text import check_source
from ...ports.read_model import LIST_ORDERS
from ..brain import Brain
from ..handling import Context
from ..memories.service import CaptureOutcome
from ..past import as_of as past
from .inputs import (
    at_once,
    capture_workspace,
    clamp,
    filters,
    identifier,
    moment_of,
    required,
    workspaces_for,
)
from .past import entry_revisions


def capture(brain: Brain, ctx: Context, content: str | None, tags: list[str] | None = None,
            source: str | None = None, workspace: str | None = None, volatility: str | None = None,
            project: str | None = None, when: str | int | None = None, when_kind: str | None = None,
            default_source: str = "api", idempotency_key: str | None = None, team: str | None = None,
            force: bool = False) -> dict[str, Any]:
    """Store a note (or fold it into what is stored, as the triage decides); `force` stores it as new whatever it
    resembles: "store it anyway" after a repeat was refused."""
    target = capture_workspace(brain, ctx, workspace, team)
    content = required(content, "content")
    tags = list(tags or [])
    if project is not None:
        tags.append(f"project:{project.strip()}")
    # A project named on capture, or a literal project: tag, must be a valid slug; unknown ones are created.
    slugs = [check_slug(t.strip().lower().removeprefix("project:")) for t in tags
             if t.strip().lower().startswith("project:")]
    anchor = time_anchor(brain, when, when_kind)
    if idempotency_key is not None and not 1 <= len(idempotency_key.strip()) <= 255:
        raise InvalidInput("Idempotency-Key must be 1 to 255 characters")
    if source is not None:
        check_source(source)
    outcome = brain.memories.capture(ctx, content, tags, source or default_source, volatility, anchor,
                                     idempotency_key.strip() if idempotency_key else None, projects=slugs,
                                     workspace=target, force=force)
    response = capture_response(outcome)
    if outcome.reminder is not None:
        response["reminder"] = reminder_view(outcome.reminder, outcome.id, brain.memories.timezone)
    return response | landed(brain, ctx, target, stored=outcome.verdict.action != "block")


def reminder_view(anchor: Anchor, memory_id: str, tz: ZoneInfo) -> dict[str, Any]:
    """A reminder the note's own words set, said as a person would read it, with how to take it back."""
    moment = datetime.fromtimestamp(anchor.when_at / 1000, tz)
    said = f"{moment:%a} {moment.day} {moment:%b}, {moment:%H:%M}"
    return {"when_at": anchor.when_at, "when_kind": anchor.when_kind, "when": moment.isoformat(),
            "from_words": anchor.evidence, "commitment": anchor.commitment,
            "message": f"Reminder set for {said} ({tz.key}), from \"{anchor.evidence}\". To undo: POST /due/clear "
                       f"with {{\"id\": \"{memory_id}\"}}."}


def landed(brain: Brain, ctx: Context, workspace: str, stored: bool = True) -> dict[str, Any]:
    """Where a capture went (or, blocked, would have gone), named in every answer: a note that names no workspace
    lands by a default someone else may have set, and who can read it is the first thing its author must know."""
    if workspace == ctx.identity.personal_workspace:
        return {"workspace": "personal"} | (
            {"visibility": "Saved in your personal workspace: only you can read it"} if stored else {})
    name = brain.team.state().workspaces.get(workspace, workspace)
    return {"workspace": "company", "team": workspace} | (
        {"visibility": f"Shared with the team {name}: every member of it can read it"} if stored else {})


def capture_response(outcome: CaptureOutcome) -> dict[str, Any]:
    """The reference's response for each outcome of a capture."""
    verdict = outcome.verdict
    score = round(verdict.score * 100, 1)
    match_id = outcome.match_id
    if verdict.action == "block":
        return {"ok": False, "duplicate": True, "matchId": match_id, "score": score,
                "message": "Near-exact duplicate detected — not stored",
                "undo": "To store it anyway, send the same capture again with \"force\": true."}
    if verdict.action == "merge":
        return {"ok": True, "id": outcome.id, "action": "merged", "tags": list(outcome.tags),
                "message": "Memories merged into a single combined entry", **undo_of(outcome)}
    if verdict.action == "replace":
        return {"ok": True, "id": outcome.id, "action": "replaced", "tags": list(outcome.tags),
                "message": "New memory replaced an outdated existing entry", **undo_of(outcome)}
    response: dict[str, Any] = {"ok": True, "id": outcome.id, "tags": list(outcome.tags)}
    if verdict.action == "flag":
        response |= {"warning": "similar", "matchId": match_id, "score": score,
                     "message": "Stored but similar entry exists — tagged as duplicate-candidate"}
    elif verdict.action == "contradiction":
        response |= {"resolved_conflict": match_id, "reason": verdict.reason}
    elif verdict.action == "keep_canonical":
        response |= {"status": "draft", "kept_canonical": match_id, "reason": verdict.reason}
    elif verdict.action == "doubt":
        response |= {"warning": "possible_update", "matchId": match_id, "reason": verdict.reason,
                     "message": "Stored beside a memory it may update: both are kept until you answer it "
                                "(GET /conflicts)"}
    return response | undo_of(outcome)


def undo_of(outcome: CaptureOutcome) -> dict[str, Any]:
    """What undoes a capture's automatic outcome, as data and in words."""
    if not outcome.undo:
        return {}
    return {"conflict": outcome.undo,
            "undo": f"To undo, POST /conflicts/answer with {{\"conflict\": \"{outcome.undo}\", \"keep\": \"both\"}} "
                    "(MCP: answer_conflict)."}


def append(brain: Brain, ctx: Context, memory_id: str | None, addition: str | None,
           volatility: str | None = None, when: str | int | None = None,
           when_kind: str | None = None) -> dict[str, Any]:
    """Add to a memory; `when` (the MCP tool's, as on remember) also sets its reminder, in the same batch."""
    memory_id, addition = identifier(memory_id), required(addition, "addition")
    anchor = time_anchor(brain, when, when_kind)
    memory = brain.memories.append(ctx, memory_id, addition, volatility, anchor)
    response = {"ok": True, "id": memory.id, "message": "Update appended successfully with timestamp"}
    if anchor is not None:
        moment = datetime.fromtimestamp(anchor[0] / 1000, brain.memories.timezone)
        response["reminder"] = {"when_at": anchor[0], "when_kind": anchor[1], "when": moment.isoformat()}
    return response


def time_anchor(brain: Brain, when: str | int | None, when_kind: str | None) -> tuple[int, str] | None:
    """`when` and `when_kind` as a time anchor (when_at, kind); when_kind alone is refused."""
    if when is not None:
        return moment_of(brain, when, "when", ahead=True), when_kind or "wake"
    if when_kind is not None:
        raise InvalidInput("when_kind requires when")
    return None


def update(brain: Brain, ctx: Context, memory_id: str | None, content: str | None, tags: list[str] | None = None,
           volatility: str | None = None) -> dict[str, Any]:
    memory = brain.memories.update(ctx, identifier(memory_id), required(content, "content"), tags, volatility)
    # The keyword index already holds the new text; vectors are made now, or stay pending if that fails.
    vectors = brain.indexer.index_now(memory.id) if brain.indexer else 0
    response: dict[str, Any] = {"ok": True, "id": memory.id, "vectors": vectors}
    if not vectors:
        response["semantic_unavailable"] = True
    return response


def forget(brain: Brain, ctx: Context, memory_id: str | None) -> dict[str, Any]:
    memory_id = identifier(memory_id).strip()
    vectors = brain.vectors.vector_count(memory_id)
    memory = brain.memories.forget(ctx, memory_id)
    return {"ok": True, "id": memory.id, "deletedVectors": vectors}


def retag(brain: Brain, ctx: Context, memory_id: str | None, add: list[str] | None, remove: list[str] | None,
          ) -> dict[str, Any]:
    """Ours, beyond the reference: topic tags added and removed without resending the text (`/update` replaces
    both); the memory's tags after the change."""
    memory = brain.memories.retag(ctx, identifier(memory_id), add or [], remove or [])
    return {"ok": True, "id": memory.id, "tags": list(memory.tags)}


def set_status(brain: Brain, ctx: Context, memory_id: str | None, status: str | None) -> dict[str, Any]:
    memory = brain.memories.set_status(ctx, identifier(memory_id), required(status, "status"))
    return {"ok": True, "id": memory.id, "status": status}


def share(brain: Brain, ctx: Context, memory_id: str | None, workspace: str | None = None,
          team: str | None = None) -> dict[str, Any]:
    """Move one memory between the personal and the company layer (the same memory: id, history, links)."""
    layer = workspace or "company"
    target = workspaces_for(ctx, layer, team if layer == "company" else None)
    if not target:
        raise InvalidInput("You belong to no team: there is no company layer to share to")
    memory_id = identifier(memory_id).strip()
    status = brain.memories.share(ctx, memory_id, target[0], brain.team.note_share, brain.team.home_of)
    return {"ok": True, "id": memory_id, "status": status, "workspace": layer}


# -- reads --------------------------------------------------------------------------------------------------------

LIST_OFFSET_MOST = 9_900  # OpenSearch pages no further than 10,000 hits (its max_result_window), less a page


def list_recent(brain: Brain, ctx: Context, n: int = 20, *, most: int = 100, tag: str | None = None,
                after: str | int | None = None, before: str | int | None = None, kind: str | None = None,
                actor: str | None = None, workspace: str | None = None, project: str | None = None,
                team: str | None = None, as_of: str | int | None = None, sort: str | None = None, offset: int = 0,
                ) -> list[dict[str, Any]]:
    """The newest memories first (with `as_of`: as the list stood then); `most` is the protocol's cap on n. Ours
    beyond the reference: `sort` (LIST_ORDERS) and `offset` (at most LIST_OFFSET_MOST), for the present only."""
    order = sort or "newest"
    if order not in LIST_ORDERS:
        raise InvalidInput(f"sort must be one of {', '.join(LIST_ORDERS)}")
    if not 0 <= offset <= LIST_OFFSET_MOST:
        raise InvalidInput(f"offset must be between 0 and {LIST_OFFSET_MOST}")
    if as_of is not None:
        if order != "newest" or offset:
            raise InvalidInput("as_of lists the newest first from the start: it cannot be combined with sort or "
                               "offset")
        return past.list_recent(brain, ctx, n, as_of, most=most, workspace=workspace, tag=tag, after=after,
                                before=before, kind=kind, actor=actor, project=project, team=team)
    chosen = filters(brain, ctx, workspace=workspace, tag=tag, after=after, before=before, kind=kind, actor=actor,
                     project=project, team=team)
    return brain.queries.recent(ctx, chosen, clamp(n, 1, most), order, offset)


def get(brain: Brain, ctx: Context, memory_id: str | None, defer: Callable[..., None] | None = None, *,
        as_of: str | int | None = None, diff: bool = False) -> dict[str, Any]:
    """One memory in full, with `diff` each of its revisions too. Opening it counts as a use (later, through
    `defer`, when the caller can answer first); with `as_of` it is shown as it was then, which is an audit, not
    a use: nothing is counted."""
    if as_of is not None:
        return past.entry(brain, ctx, memory_id, as_of, diff)
    entry = brain.queries.entry(ctx, identifier(memory_id))
    (defer or at_once)(brain.memories.record_open, ctx, entry["id"])
    if diff:
        entry = {**entry, "revisions": entry_revisions(brain, ctx, entry["id"])}
    return entry


def count(brain: Brain, ctx: Context) -> dict[str, Any]:
    """How many memories the caller can read."""
    return {"count": brain.queries.count(ctx)}


def tags(brain: Brain, ctx: Context, counts: bool = False) -> list[Any]:
    """The tags of the caller's memories, most used first; with `counts`, as `{tag, count}`."""
    return brain.queries.tags(ctx, counts)


def stats(brain: Brain, ctx: Context) -> dict[str, Any]:
    """The reference's figures, and (ours) the models this brain runs on."""
    return {**brain.queries.stats(ctx), "models": models(brain)}


def models(brain: Brain) -> dict[str, str | None]:
    """Each model by its id, None where there is none: without an embedder recall works by words alone, without
    a reranker results keep the fused order, without a language model chat and insights say so."""
    reranker = brain.recall.rerank.reranker
    return {"embedder": brain.recall.embedder.model_id if brain.recall.embedder else None,
            "reranker": reranker.model_id if reranker else None,
            "language_model": None if brain.llm.model_id == "none" else brain.llm.model_id}


# -- vectors --------------------------------------------------------------------------------------------------------

def vectorize_pending(brain: Brain, ctx: Context, limit: int = 50) -> dict[str, Any]:
    """Embed memories that have no vectors yet, now, instead of waiting for the background worker."""
    if brain.indexer is None:
        raise SemanticUnavailable("Semantic search is unavailable: no embedder is loaded (see the server log)")
    report = brain.indexer.run_once(clamp(limit, 1, 500))
    return {"ok": True, "vectorized": report.vectorized, "failed": report.failed, "remaining": report.remaining}


def embed_pending(brain: Brain, batch: int = 256) -> Iterator[tuple[int, int]] | None:
    """Embed every memory waiting for its vectors, pass after pass while a pass makes progress; None without an
    embedder. Each pass gives (memories still waiting, memories waiting at the start); the last is the last."""
    if brain.indexer is None:
        return None
    return _passes(brain, batch, brain.vectors.pending_count())


def _passes(brain: Brain, batch: int, waiting: int) -> Iterator[tuple[int, int]]:
    assert brain.indexer is not None
    while True:
        report = brain.indexer.run_once(batch)
        yield report.remaining, waiting
        if not (report.remaining and report.vectorized):
            return
