"""Conflicts to review: the pairs capture decided about in the last 30 days, and a person's answer to each (keep
both, the newer or the older); "keep both" of an automatic outcome undoes it."""

from typing import Any

from ..brain import Brain
from ..handling import Context
from .inputs import clamp, required


def conflicts(brain: Brain, ctx: Context, limit: int = 20) -> dict[str, Any]:
    """The items waiting for an answer, newest first, and how many there are."""
    limit = clamp(limit, 1, 100)
    items, total = brain.conflicts.pending(ctx, limit)
    return {"ok": True, "conflicts": items, "total": total, "limit": limit}


def answer_conflict(brain: Brain, ctx: Context, conflict: str | None, keep: str | None) -> dict[str, Any]:
    """Keep both memories of an item, the newer or the older; the answer shows in both memories' timelines."""
    return brain.conflicts.answer(ctx, required(conflict, "conflict"), required(keep, "keep"))
