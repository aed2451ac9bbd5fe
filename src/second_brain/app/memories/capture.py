"""Capture: a new note judged against what is stored (domain/capture.py decides), its text claimed and, with an
idempotency key, its answer recorded, all in one atomic append."""

import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast

from ...domain import commands as c
from ...domain.capture import STORE, Action, CaptureDecision, Verdict, decide_capture, request_digest
from ...domain.conflicts import item_name
from ...domain.errors import AlreadyExists, NotFound
from ...domain.events import (
    CaptureAnswered,
    ContentClaimed,
    ContradictionLost,
    Envelope,
    IdempotencyExpired,
    MemoryCaptured,
    MemoryRevised,
    memory_of,
)
from ...domain.extraction import Anchor
from ...domain.memory import Memory, decide, validate
from ..handling import Context, envelopes, retrying
from .consequences import Consequences
from .projects import ProjectService
from .streams import MemoryStreams


@dataclass(frozen=True)
class CaptureOutcome:
    id: str  # the new memory, or the one the note was merged into, replaced or blocked by
    tags: tuple[str, ...]
    verdict: Verdict
    reminder: Anchor | None = None  # a time the note's own words named, set as its reminder
    undo: str = ""  # the review item that undoes what the capture did to another memory (domain/conflicts.py)

    @property
    def match_id(self) -> str | None:
        return self.verdict.match_id or None


class Capturing:
    def __init__(self, streams: MemoryStreams, new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
                 projects: ProjectService | None = None, consequences: Consequences | None = None) -> None:
        self.streams = streams
        self.new_id = new_id
        self.projects = projects  # creates the unknown projects a capture names, in the capture's append
        self.consequences = consequences or Consequences()  # what follows a capture's append

    def capture(
        self, ctx: Context, content: str, tags: list[str], source: str, volatility: str | None = None,
        anchor: tuple[int, str] | None = None, idempotency_key: str | None = None, projects: Sequence[str] = (),
        workspace: str | None = None, force: bool = False,
    ) -> CaptureOutcome:
        """Store a new note, or fold it into what is stored, as the triage decides; one atomic append.

        Every capture that stores claims its text's stream in the same append: an identical capture racing it
        loses that stream, retries, and is blocked as a repeat of the memory that won.
        With an idempotency key, the answer is recorded in that same append, on the key's own stream: a
        retry (or a racing duplicate) of the request loses the race for that stream and returns the answer
        the first one got, so the note is never stored twice.
        `force` stores the note as new whatever it resembles: a person's "store it anyway" after a block, or a
        note a merge took in, stored again on its own when the merge is undone.
        """
        if projects and self.projects is None:
            raise TypeError("a capture that names projects needs the ProjectService")
        streams = self.streams
        memory_id = self.new_id()
        command = c.Capture(content, tuple(tags), source, workspace or ctx.identity.personal_workspace, volatility)
        captured = decide(command, Memory(memory_id))[0]
        if not isinstance(captured, MemoryCaptured):
            raise TypeError(f"a capture decided {captured!r} first")
        if anchor is not None:
            validate(c.SetTimeAnchor(anchor[0], anchor[1], 0))
        key_stream = idempotency_stream(ctx.identity.actor_id, idempotency_key) if idempotency_key else None
        request_hash = request_digest((captured.content, captured.tags, captured.source, anchor), streams.content_key)
        said = streams.said_when(captured) if anchor is None else None

        def attempt() -> tuple[CaptureOutcome, list[Envelope]]:
            key_history = streams.store.read_stream(key_stream) if key_stream else []
            if answered(key_history):
                return self._replayed(ctx, key_history[-1].event, request_hash), []
            text_stream, claims, holders = streams.claims(captured.workspace, captured.content)
            triage = streams.triage
            verdict = STORE if force else (
                streams.repeat(ctx, holders, captured)
                or (triage.assess(captured.content, captured.workspace) if triage else STORE))
            matched = streams.as_judged(ctx, verdict)
            may_change = matched is None or ctx.identity.can_edit(matched.workspace, matched.actor)
            reminder = said if verdict.action not in ("merge", "replace", "block") else None  # a new memory's words
            note = captured
            if reminder is not None and reminder.commitment and "task" not in captured.tags:
                note = replace(captured, tags=(*captured.tags, "task"))  # an open loop, as the nightly job makes it
            when = anchor if reminder is None else (reminder.when_at, reminder.when_kind)
            decision = decide_capture(memory_id, note, when, verdict, matched, may_change)
            outcome = CaptureOutcome(decision.memory_id, decision.tags, decision.verdict, reminder,
                                     review_item(decision))
            if decision.verdict.action == "block":
                if key_stream and answered(twin := streams.store.read_stream(key_stream)):
                    return self._replayed(ctx, twin[-1].event, request_hash), []  # our own twin, stored meanwhile
                return outcome, []
            now = streams.clock.now_ms()
            created = self.projects.creations(ctx, projects, captured.workspace) if projects and self.projects else ()
            changes = (*decision.changes, *created)
            batch = [e for ch in changes
                     for e in envelopes(ctx, ch.stream_id, ch.version, ch.events, ch.workspace, now)]
            claim = envelopes(ctx, text_stream, claims[-1].version if claims else 0, [ContentClaimed(outcome.id)],
                              captured.workspace, now)
            stored = streams.store.append(batch + claim + _answer(ctx, key_stream, len(key_history), request_hash,
                                                                  now, outcome))
            return outcome, stored

        outcome, stored = retrying(attempt)
        self.consequences.after(ctx, stored)
        return outcome

    def store_note(self, ctx: Context, note: str, beside: Memory, key: str) -> str:
        """A note a merge took in, stored again as its own memory beside the one it was merged into (same
        workspace and source), once per `key` (an idempotency key); the id of the new memory."""
        return self.capture(ctx, note, [], beside.source or "api", idempotency_key=key, workspace=beside.workspace,
                            force=True).id

    def _replayed(self, ctx: Context, event: object, request_hash: str) -> CaptureOutcome:
        """The answer recorded for an idempotency key, if this is the same request (tags as they are now)."""
        if not isinstance(event, CaptureAnswered):
            raise TypeError(f"unexpected event on an idempotency stream: {event!r}")
        if event.request_hash != request_hash:
            raise AlreadyExists("This Idempotency-Key was already used for a different capture")
        try:
            tags = self.streams.load(ctx, event.memory_id)[0].tags
        except NotFound:  # forgotten since
            tags = ()
        # The action a Verdict had when this answer was recorded (CaptureAnswered stores it as text).
        action = cast(Action, event.action)
        return CaptureOutcome(event.memory_id, tags, Verdict(action, event.match_id, event.score))


def review_item(decision: CaptureDecision) -> str:
    """The name of the review item a capture's automatic outcome makes (a memory retired, rewritten, or the note
    kept as a draft), which answering "keep both" undoes; "" for a capture that changed no other memory."""
    for change in decision.changes:
        for index, event in enumerate(change.events):
            if isinstance(event, ContradictionLost) or (isinstance(event, MemoryRevised) and event.reason):
                memory_id = memory_of(change.stream_id)
                if memory_id:
                    return item_name(memory_id, change.version + index + 1)
    return ""


def idempotency_stream(actor: str, key: str) -> str:
    return f"idempotency-{actor}-{hashlib.sha256(key.encode()).hexdigest()[:40]}"


def answered(key_history: Sequence[Envelope]) -> bool:
    """Whether an idempotency key's stream holds a live answer (not one the housekeeping retired)."""
    return bool(key_history) and not isinstance(key_history[-1].event, IdempotencyExpired)


def _answer(ctx: Context, key_stream: str | None, version: int, request_hash: str, now: int,
            outcome: CaptureOutcome) -> list[Envelope]:
    """The idempotency record of a capture's answer, to append with it (nothing without a key)."""
    if key_stream is None:
        return []
    verdict = outcome.verdict
    event = CaptureAnswered(request_hash, outcome.id, verdict.action, outcome.match_id or "", verdict.score)
    return envelopes(ctx, key_stream, version, [event], ctx.identity.personal_workspace, now)
