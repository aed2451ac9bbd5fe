"""The past: the audit feed and a memory's revisions. (Answers as of a past moment are the live operations
called with `as_of`: they read app/past/as_of.py.)"""

from dataclasses import replace
from typing import Any

from ...domain.events import memory_stream
from ...ports.event_store import EventMatch
from ..brain import Brain
from ..handling import Context
from ..past import revisions
from ..past import timeline as audit
from .inputs import actor_id, clamp, identifier, int64, moment_of


def timeline(brain: Brain, ctx: Context, *, memory_id: str | None = None, actor: str | None = None,
             types: list[str] | None = None, after: str | int | None = None, before: str | int | None = None,
             cursor: int | None = None, limit: int = audit.DEFAULT_LIMIT) -> dict[str, Any]:
    """The log newest first, as far as the caller may read it now (app/past/timeline.py says what shows)."""
    since, until = (moment_of(brain, value, name, ahead=False) if value not in (None, "") else None
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
