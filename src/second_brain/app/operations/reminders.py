"""Reminders: time anchors (due dates, events, wake-ups), open loops, and push reminders to the caller's devices."""

from typing import Any

from ..brain import Brain
from ..handling import Context
from ..reminders.jobs import run_now
from .inputs import clamp, identifier, moment_of, required, when_text

UPCOMING_MS = 48 * 3600 * 1000  # what is "coming up": anchored within the next two days
DAY_MS = 86_400_000
MOST_DAYS_AHEAD = 366


def due(brain: Brain, ctx: Context, days: int | None = None) -> dict[str, Any]:
    """Anchored memories: the overdue ones, and those coming up within two days, or within `days` (ours, 1-366:
    the dashboard's agenda reads ahead)."""
    horizon = UPCOMING_MS if days is None else clamp(days, 1, MOST_DAYS_AHEAD) * DAY_MS
    return {"ok": True, **brain.queries.due(ctx, horizon)}


def snooze(brain: Brain, ctx: Context, memory_id: str | None, until: str | int | None) -> dict[str, Any]:
    when_at = moment_of(brain, required(when_text(until, "until"), "until"), "until", ahead=True)
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


# -- push ---------------------------------------------------------------------------------------------------------

def push_public_key(brain: Brain, ctx: Context) -> dict[str, Any]:
    """The brain's VAPID public key, which a browser subscribes with."""
    return brain.push.public_key(ctx)


def push_subscribe(brain: Brain, ctx: Context, endpoint: str | None, p256dh: str | None, auth: str | None,
                   content_free: bool | None = None) -> dict[str, Any]:
    """Register (or replace) one of the caller's devices."""
    return brain.push.subscribe(ctx, endpoint, p256dh, auth, content_free)


def push_unsubscribe(brain: Brain, ctx: Context, endpoint: str | None) -> dict[str, Any]:
    return brain.push.unsubscribe(ctx, endpoint)


def push_run(brain: Brain, ctx: Context) -> dict[str, Any]:
    """Send the due reminders now (admin only), as the hourly job would."""
    return run_now(brain.maintenance, ctx)


def push_test(brain: Brain, ctx: Context) -> dict[str, Any]:
    """A fixed notification to each of the caller's devices (admin only)."""
    return brain.push.test(ctx)
