"""One function per operation where the contract adds rules to a service call: REST routes and MCP tools call
these and only translate their protocol's input and output (the Lambda API handler serves the same REST app).

Each takes plain values (already read from a query string, a JSON body or tool arguments) and applies the
rules the contract sets: required fields, workspaces, project slugs, `when`, limits, idempotency keys.
"""

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..domain.errors import BrainError, InvalidInput, NotFound, SemanticUnavailable
from ..domain.events import memory_stream
from ..domain.projects import check_slug
from ..domain.text import INT64, MAX_ID_CHARS, MAX_TAG_CHARS, check_source, shorten
from ..ports.event_store import EventMatch
from ..ports.read_model import Filters
from .past import revisions
from .past import timeline as audit
from .brain import Brain
from .recall.chat import insight as synthesise
from .insights.digest import scopes_for
from .graph.view import DEFAULT_LIMIT as GRAPH_LIMIT
from .graph.view import MAX_LIMIT as GRAPH_MAX_LIMIT
from .handling import Context, require_admin
from .memories.service import CaptureOutcome
from .insights.patterns import ACTIONS as PATTERN_ACTIONS
from .insights.patterns import MAX_IDS as MAX_PATTERN_IDS
from .recall.pipeline import RecallRequest
from .reminders.time_anchors import parse_when


def required(value: str | None, name: str) -> str:
    if value is None or not value.strip():
        raise InvalidInput(f"Missing or empty {name}")
    return value


def identifier(value: str | None, name: str = "id") -> str:
    """A required memory id; one longer than any id can be is not found, and not echoed whole."""
    value = required(value, name)
    if len(value.strip()) > MAX_ID_CHARS:
        raise NotFound(f"No entry found with ID: {shorten(value.strip())}")
    return value


def int64(value: int | None, name: str) -> int | None:
    """A value no store can hold (past signed 64 bits) is refused by name; limits within it are clamped."""
    if value is not None and not INT64[0] <= value <= INT64[1]:
        raise InvalidInput(f"{name} must fit in a signed 64-bit integer")
    return value


def when_text(value: str | int | None, name: str) -> str | None:
    """A `when` or `until` as parse_when reads it: ISO 8601, or Unix ms as a number (within 64 bits) or digits."""
    if isinstance(value, int):
        int64(value, name)
    return None if value is None else str(value)


def clamp(value: int, low: int, high: int) -> int:
    """Out-of-range limits are clamped, as the reference does, not refused."""
    return max(low, min(high, value))


def workspaces_for(ctx: Context, layer: str | None, team: str | None = None) -> tuple[str, ...]:
    """The readable workspaces, narrowed to one layer (and, for the company layer, one team) when asked."""
    if layer is None and team is None:
        return ctx.identity.readable
    if layer == "personal" and team is None:
        return (ctx.identity.personal_workspace,)
    if layer == "company" or (layer is None and team is not None):
        if team is None:
            return ctx.identity.company_workspaces
        if team.strip() not in ctx.identity.company_workspaces:
            raise NotFound(f"No team found with ID: {shorten(team.strip())}")
        return (team.strip(),)
    if layer == "personal":
        raise InvalidInput("team goes with workspace company")
    raise InvalidInput("workspace must be personal or company")


def capture_workspace(brain: Brain, ctx: Context, layer: str | None, team: str | None = None) -> str:
    """Where a capture lands: the layer asked for, else the caller's default (their own, else the team's)."""
    if layer is None and team is None:
        layer = brain.team.default_layer(ctx)
        if not ctx.identity.company_workspaces:  # a company default, for someone in no team
            layer = "personal"
    if layer == "company" and not ctx.identity.company_workspaces:
        raise InvalidInput("You belong to no team: capture to personal")
    return workspaces_for(ctx, layer or "company", team)[0]


def filters(brain: Brain, ctx: Context, *, workspace: str | None = None, tag: str | None = None,
            after: int | None = None, before: int | None = None, kind: str | None = None,
            actor: str | None = None, project: str | None = None, team: str | None = None) -> Filters:
    if actor is not None:
        actor = actor_id(ctx, actor)
    return Filters(
        workspaces=workspaces_for(ctx, workspace, team),
        tag=tag.lower() if tag else None,
        after=int64(after, "after"),
        before=int64(before, "before"),
        kind=kind if kind in ("episodic", "semantic") else None,  # the spec: an unrecognised kind is ignored
        actor=actor,
        any_tags=brain.projects.tags_for(ctx, project) if project else (),
    )


def actor_id(ctx: Context, actor: str) -> str:
    """`me`, an id or a roster name (any case) as the author's id; an unknown one matches nobody."""
    wanted = actor.strip().lower()
    if wanted in ("me", ctx.identity.actor_id.lower(), ctx.identity.name.lower()):
        return ctx.identity.actor_id
    return next((key for key, name in ctx.identity.roster.items() if wanted in (key.lower(), name.lower())), actor)


# -- the memory lifecycle ----------------------------------------------------------------------------------------

def capture(brain: Brain, ctx: Context, content: str | None, tags: list[str] | None = None,
            source: str | None = None, workspace: str | None = None, volatility: str | None = None,
            project: str | None = None, when: str | int | None = None, when_kind: str | None = None,
            default_source: str = "api", idempotency_key: str | None = None, team: str | None = None
            ) -> dict[str, Any]:
    target = capture_workspace(brain, ctx, workspace, team)
    content = required(content, "content")
    tags = list(tags or [])
    if project is not None:
        tags.append(f"project:{project.strip()}")
    # A project named on capture, or a literal project: tag, must be a valid slug; unknown ones are created.
    slugs = [check_slug(t.strip().lower().removeprefix("project:")) for t in tags
             if t.strip().lower().startswith("project:")]
    anchor = None
    if when is not None:
        anchor = (parse_when(when_text(when, "when"), brain.memories.timezone), when_kind or "wake")
    elif when_kind is not None:
        raise InvalidInput("when_kind requires when")
    if idempotency_key is not None and not 1 <= len(idempotency_key.strip()) <= 255:
        raise InvalidInput("Idempotency-Key must be 1 to 255 characters")
    if source is not None:
        check_source(source)
    outcome = brain.memories.capture(ctx, content, tags, source or default_source, volatility, anchor,
                                     idempotency_key.strip() if idempotency_key else None, projects=slugs,
                                     workspace=target)
    response = capture_response(outcome)
    return response | landed(brain, ctx, target, stored=outcome.verdict.action != "block")


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


def append(brain: Brain, ctx: Context, memory_id: str | None, addition: str | None,
           volatility: str | None = None) -> dict[str, Any]:
    memory = brain.memories.append(ctx, identifier(memory_id), required(addition, "addition"), volatility)
    return {"ok": True, "id": memory.id, "message": "Update appended successfully with timestamp"}


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


def list_teams(brain: Brain, ctx: Context) -> dict[str, Any]:
    return {"ok": True, "teams": [{**team, "workspace_id": team["id"]} for team in brain.team.teams(ctx)]}


# -- reads --------------------------------------------------------------------------------------------------------

def recall(brain: Brain, ctx: Context, query: str | None, top_k: int = 5, *, tag: str | None = None,
           after: int | None = None, before: int | None = None, kind: str | None = None, actor: str | None = None,
           hops: int | None = None, workspace: str | None = None, project: str | None = None, full: bool = False,
           insight: bool = False, team: str | None = None,
           defer: Callable[..., None] | None = None) -> dict[str, Any]:
    """Search by meaning and by words; each memory returned counts one recall (later, through `defer`,
    when the caller can answer first)."""
    request = recall_request(brain, ctx, query, top_k, hops, full, workspace=workspace, tag=tag, after=after,
                             before=before, kind=kind, actor=actor, project=project, team=team)
    response = brain.recall.recall(ctx, request)
    if insight:
        response["insight"] = synthesise(brain.llm, query, response["results"])
    (defer or _now)(brain.memories.record_recalls, ctx, [r["id"] for r in response["results"]])
    return response


def recall_request(brain: Brain, ctx: Context, query: str | None, top_k: int, hops: int | None, full: bool,
                   **filter_args: Any) -> RecallRequest:
    chosen = filters(brain, ctx, **filter_args)
    return RecallRequest(required(query, "query"), clamp(top_k, 1, 20), chosen, full,
                         None if hops is None else clamp(hops, 0, 3))


def _now(task: Callable[..., object], *args: object) -> None:
    task(*args)


def list_recent(brain: Brain, ctx: Context, n: int = 20, *, most: int = 100, tag: str | None = None,
                after: int | None = None, before: int | None = None, kind: str | None = None,
                actor: str | None = None, workspace: str | None = None, project: str | None = None,
                team: str | None = None) -> list[dict[str, Any]]:
    """The newest memories first; `most` is the protocol's cap on n."""
    chosen = filters(brain, ctx, workspace=workspace, tag=tag, after=after, before=before, kind=kind, actor=actor,
                     project=project, team=team)
    return brain.queries.recent(ctx, chosen, clamp(n, 1, most))


def get(brain: Brain, ctx: Context, memory_id: str | None,
        defer: Callable[..., None] | None = None) -> dict[str, Any]:
    """One memory in full; opening it counts as a use (later, through `defer`, when the caller can answer first)."""
    entry = brain.queries.entry(ctx, identifier(memory_id))
    (defer or _now)(brain.memories.record_open, ctx, entry["id"])
    return entry


def brief(brain: Brain, ctx: Context) -> dict[str, Any]:
    """What the brain has been doing lately, in the caller's readable workspaces."""
    return brain.brief.brief(ctx)


def vectorize_pending(brain: Brain, ctx: Context, limit: int = 50) -> dict[str, Any]:
    """Embed memories that have no vectors yet, now, instead of waiting for the background worker."""
    if brain.indexer is None:
        raise SemanticUnavailable("Semantic search is unavailable: no embedder is loaded (see the server log)")
    report = brain.indexer.run_once(clamp(limit, 1, 500))
    return {"ok": True, "vectorized": report.vectorized, "failed": report.failed, "remaining": report.remaining}


# -- the graph ------------------------------------------------------------------------------------------------------

def link(brain: Brain, ctx: Context, source_id: str | None, target_id: str | None,
         link_type: str | None = None) -> dict[str, Any]:
    source_id, target_id, link_type = brain.links.link(
        ctx, identifier(source_id, "source_id"), identifier(target_id, "target_id"), link_type or "relates_to")
    return {"ok": True, "source_id": source_id, "target_id": target_id, "type": link_type}


def unlink(brain: Brain, ctx: Context, source_id: str | None, target_id: str | None,
           link_type: str | None = None) -> dict[str, Any]:
    deleted = brain.links.unlink(ctx, required(source_id, "source_id"), required(target_id, "target_id"), link_type)
    return {"ok": True, "deleted": deleted}


def connections(brain: Brain, ctx: Context, memory_id: str | None, link_type: str | None = None) -> dict[str, Any]:
    memory_id = identifier(memory_id).strip()
    return {"ok": True, "id": memory_id, "connections": brain.links.connections(ctx, memory_id, link_type)}


def graph(brain: Brain, ctx: Context, seed: str | None = None, limit: int | None = None,
          workspace: str | None = None, team: str | None = None, project: str | None = None) -> dict[str, Any]:
    """Nodes and edges for a dashboard: around `seed`, else the best-connected memories (of `project`)."""
    if limit is not None and limit < 1:
        raise InvalidInput("limit must be at least 1")
    chosen = filters(brain, ctx, workspace=workspace, team=team, project=project)
    seed = identifier(seed, "seed").strip() if seed is not None else None
    return brain.graph.graph(ctx, chosen, seed, clamp(limit or GRAPH_LIMIT, 1, GRAPH_MAX_LIMIT))


# -- projects and reminders ---------------------------------------------------------------------------------------

def list_projects(brain: Brain, ctx: Context, workspace: str | None = None, include_archived: bool = False,
                  counts: bool = False, team: str | None = None) -> dict[str, Any]:
    return {"projects": brain.projects.list(ctx, workspaces_for(ctx, workspace, team), include_archived, counts)}


def create_project(brain: Brain, ctx: Context, name: str | None, slug: str | None = None, description: str = "",
                   aliases: list[str] | None = None, workspace: str | None = None,
                   team: str | None = None) -> dict[str, Any]:
    target = capture_workspace(brain, ctx, workspace, team)
    project = brain.projects.create(ctx, required(name, "name"), slug, description, aliases or [], target)
    return {"ok": True, "project": project}


def snooze(brain: Brain, ctx: Context, memory_id: str | None, until: str | int | None) -> dict[str, Any]:
    when_at = parse_when(required(when_text(until, "until"), "until"), brain.memories.timezone, "until")
    memory = brain.memories.snooze(ctx, identifier(memory_id), when_at)
    return {"ok": True, "id": memory.id, "when_at": memory.when_at, "when_kind": memory.when_kind}


def clear_anchor(brain: Brain, ctx: Context, memory_id: str | None) -> dict[str, Any]:
    memory = brain.memories.clear_anchor(ctx, identifier(memory_id))
    return {"ok": True, "id": memory.id, "cleared": True}


def loops(brain: Brain, ctx: Context, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    limit, offset = clamp(limit, 1, 100), max(0, offset)
    found, total = brain.queries.loops(ctx, limit, offset)
    return {"ok": True, "loops": found, "total": total, "limit": limit, "offset": offset}


def resolve_loop(brain: Brain, ctx: Context, memory_id: str | None, action: str | None) -> dict[str, Any]:
    action = required(action, "action")
    memory = brain.memories.resolve_loop(ctx, identifier(memory_id), action)
    return {"ok": True, "id": memory.id, "action": action, "tags": list(memory.tags)}


def digest(brain: Brain, ctx: Context, tag: str | None, project: str | None) -> dict[str, Any]:
    """Compress a tag's or a project's low-signal memories into one digest now (the nightly job's compression);
    `error` in the answer when too few are eligible or it was compressed within the day."""
    tag = shorten(tag.strip().lower(), MAX_TAG_CHARS) if tag and tag.strip() else None  # longer: no tag has it
    project = project.strip() if project and project.strip() else None
    if tag is None and project is None:
        raise InvalidInput("Missing tag or project")
    if tag is not None and project is not None:
        raise InvalidInput("tag and project are mutually exclusive: give one of them")
    if project is not None:
        row = brain.projects.row(ctx, project)
        scopes = scopes_for(ctx.identity, (f"project:{row.slug}", *row.aliases), row.slug, True, (row.workspace,))
    else:
        scopes = scopes_for(ctx.identity, (tag,), tag, False)  # type: ignore[arg-type]
    return brain.digests.for_caller(ctx, scopes).answer()


def resolve_patterns(brain: Brain, ctx: Context, memory_id: str | None, ids: list[str] | None,
                     action: str | None) -> dict[str, Any]:
    """Confirm or dismiss one proposed pattern (`id`), or up to 100 (`ids`, each answered on its own)."""
    action = required(action, "action").strip()
    if action not in PATTERN_ACTIONS:
        raise InvalidInput("action must be confirm or dismiss")
    if memory_id is not None and ids is not None:
        raise InvalidInput("id and ids are mutually exclusive: give one of them")
    if ids is None:
        memory = brain.patterns.resolve(ctx, identifier(memory_id), action)
        return {"ok": True, "id": memory.id, "action": action, "tags": list(memory.tags)}
    if not 1 <= len(ids) <= MAX_PATTERN_IDS:
        raise InvalidInput(f"ids must hold 1 to {MAX_PATTERN_IDS} ids")
    results: list[dict[str, Any]] = []
    for one in ids:
        try:
            memory = brain.patterns.resolve(ctx, identifier(one), action)
            results.append({"id": memory.id, "ok": True, "tags": list(memory.tags)})
        except BrainError as exc:
            results.append({"id": shorten(one.strip()), "ok": False, "error": exc.message})
    return {"ok": True, "action": action, "resolved": sum(r["ok"] for r in results), "results": results}


def maintenance_status(brain: Brain, ctx: Context) -> dict[str, Any]:
    """Every maintenance job, its schedule and its latest run (admin only: the runs span every workspace)."""
    require_admin(ctx)
    return {"ok": True, "jobs": brain.maintenance.status()}


def run_maintenance(brain: Brain, ctx: Context, job: str | None) -> dict[str, Any]:
    """Run one job now, or every nightly job; the summaries of the runs."""
    require_admin(ctx)
    names = [job.strip()] if job is not None and job.strip() else None
    until = time.monotonic() + brain.settings.maintenance_request_seconds  # a request must answer in time
    return {"ok": True, "runs": brain.maintenance.run(names, until=until)}


def extract_dry_run(brain: Brain, ctx: Context, limit: int = 5) -> dict[str, Any]:
    """The verdicts the nightly extraction would reach on its next captures in the caller's workspaces (admin
    only); nothing is written."""
    require_admin(ctx)
    limit = clamp(limit, 1, 10)
    job = brain.maintenance.jobs.get("extraction")
    if job is None:
        raise NotFound("No maintenance job named 'extraction'")
    verdicts = job.preview(brain.maintenance.state(job.name).cursor, ctx.identity.readable, limit)  # type: ignore[attr-defined]
    return {"ok": True, "verdicts": verdicts, "limit": limit}


# -- the audit trail ------------------------------------------------------------------------------------------------

def timeline(brain: Brain, ctx: Context, *, memory_id: str | None = None, actor: str | None = None,
             types: list[str] | None = None, after: str | int | None = None, before: str | int | None = None,
             cursor: int | None = None, limit: int = audit.DEFAULT_LIMIT) -> dict[str, Any]:
    """The log newest first, as far as the caller may read it now (app/past/timeline.py says what shows)."""
    since, until = (parse_when(text, brain.memories.timezone, name) if (text := when_text(value, name)) else None
                    for value, name in ((after, "after"), (before, "before")))
    match = EventMatch(types=audit.stored_types(types or ()), actor=actor_id(ctx, actor) if actor else None,
                             since=since, until=until)
    if memory_id is not None:
        memory_id = identifier(memory_id).strip()
        match = replace(match, streams=(memory_stream(memory_id),), naming=memory_id)
    return audit.Timeline(brain.store, brain.queries.read_model, ctx).page(
        int64(cursor, "cursor"), clamp(limit, 1, audit.MAX_LIMIT), match, memory_id)


def entry_revisions(brain: Brain, ctx: Context, memory_id: str | None) -> list[dict[str, Any]]:
    """Each revision of a memory the caller can read: its text then, the diff from the one before, tags, status."""
    return revisions.entry_revisions(brain.store, brain.queries.read_model, ctx, identifier(memory_id))
