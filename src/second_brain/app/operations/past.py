"""The past: the audit feed and a memory's revisions. (Answers as of a past moment are the live operations
called with `as_of`: they read app/past/as_of.py.)"""

from dataclasses import replace
from typing import Any

from ...domain.events import memory_stream
from ...domain.text import shorten
from ...ports.event_store import EventMatch
from ..brain import Brain
from ..handling import Context
from ..past import revisions
from ..past import timeline as audit
from .inputs import actor_id, clamp, identifier, int64, moment_of, required, when_text


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


# What the brain writes about its own reading of a memory (its classification, each recall and open, a staleness
# check, a reminder pushed): what changed since a moment leaves them out unless asked (`changes`).
BOOKKEEPING = ("classified", "recalled", "opened", "staleness_judged", "reminder_pushed", "mirror_indexed",
               "integration_listed", "job_started", "job_finished", "capture_answered", "content_claimed",
               "content_released", "idempotency_expired", "vapid_key_generated", "signing_key_made",
               "client_registered", "code_issued", "code_redeemed", "token_issued", "sign_in_requested", "pair_issued")


def changes(brain: Brain, ctx: Context, since: str | int | None, everything: bool = False,
            limit: int = audit.MAX_LIMIT) -> dict[str, Any]:
    """What was saved, changed, linked or forgotten since a moment (newest first), with the first words of each
    memory an event is about (as far as the caller may read it now); `everything`: the bookkeeping too."""
    after = moment_of(brain, required(when_text(since, "since"), "since"), "since", ahead=False, any_integer=True)
    wanted = () if everything else tuple(n for n in audit.NAMES if n not in BOOKKEEPING)
    page = timeline(brain, ctx, types=list(wanted), after=after, limit=limit)
    ids = {item["stream"]["id"] for item in page["timeline"] if item["stream"]["kind"] == "memory"}
    rows = brain.queries.read_model.many(sorted(i for i in ids if i), ctx.identity.readable)
    page["first_words"] = {memory_id: shorten(" ".join(row.content.split()), FIRST_WORDS)
                           for memory_id, row in rows.items()}
    page["since"] = after
    return page


FIRST_WORDS = 80  # characters of a memory's text a change names it by, an ellipsis past them
