"""Insights: the brief of what the brain has been doing, digests that compress low-signal memories, and the
patterns the nightly job proposed."""

from typing import Any

from ...domain.errors import BrainError, InvalidInput
from ...domain.text import MAX_TAG_CHARS, shorten
from ..brain import Brain
from ..handling import Context
from ..insights.digest import scopes_for
from ..insights.patterns import ACTIONS as PATTERN_ACTIONS
from ..insights.patterns import MAX_IDS as MAX_PATTERN_IDS
from .inputs import identifier, required


def brief(brain: Brain, ctx: Context) -> dict[str, Any]:
    """What the brain has been doing lately, in the caller's readable workspaces; `attention.conflicts`: the pairs
    waiting in GET /conflicts."""
    answer = brain.brief.brief(ctx)
    answer["attention"] = {**answer.get("attention", {}), "conflicts": brain.conflicts.count(ctx)}
    return answer


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
        assert tag is not None  # one of the two is given, never both
        scopes = scopes_for(ctx.identity, (tag,), tag, False)
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
