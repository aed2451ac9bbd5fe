"""The command side: load a memory from its stream, decide, append; retry on a concurrent writer."""

import functools
import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import reduce
from zoneinfo import ZoneInfo

from ..domain import commands as c
from ..domain import links, text
from ..domain.classification import classify
from ..domain.errors import (
    AlreadyExists,
    ConcurrencyConflict,
    Forbidden,
    InvalidInput,
    NotFound,
)
from ..domain.events import (
    CaptureAnswered,
    ContradictionLost,
    ContradictionWon,
    DuplicateSuspected,
    Envelope,
    MemoryCaptured,
    MemoryClassified,
    MemoryRevised,
    StatusChanged,
    TagsChanged,
    TimeAnchorSet,
    memory_stream,
)
from ..domain.memory import Memory, decide, evolve, validate
from ..ports.clock import Clock
from ..ports.event_store import EventStore
from ..ports.llm import LanguageModel
from .handling import Context, envelopes, retrying
from .triage import STORE, Triage, Verdict, classify_with_model

__all__ = ["CaptureOutcome", "Context", "MemoryService"]


@dataclass(frozen=True)
class CaptureOutcome:
    id: str  # the new memory, or the one the note was merged into, replaced or blocked by
    tags: tuple[str, ...]
    verdict: Verdict

    @property
    def match_id(self) -> str | None:
        return self.verdict.target.id if self.verdict.target else self.verdict.match_id or None


def idempotency_stream(actor: str, key: str) -> str:
    return f"idempotency-{actor}-{hashlib.sha256(key.encode()).hexdigest()[:40]}"

class MemoryService:
    def __init__(
        self,
        store: EventStore,
        clock: Clock,
        timezone: ZoneInfo | Callable[[], ZoneInfo],
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        triage: Triage | None = None,
        llm: LanguageModel | None = None,
        on_stored: Callable[[Context, str], None] | None = None,
    ) -> None:
        self.triage = triage
        self.llm = llm  # refines classification, when a real model is configured
        self.on_stored = on_stored  # told of every memory a capture stored or changed
        self.store = store
        self.clock = clock
        self._timezone = timezone  # a zone, or where to read the configured one per request
        self.new_id = new_id
        self._recalled_day = ""
        self._recalled: set[str] = set()

    @property
    def timezone(self) -> ZoneInfo:
        return self._timezone() if callable(self._timezone) else self._timezone

    def capture(
        self, ctx: Context, content: str, tags: list[str], source: str, volatility: str | None = None,
        anchor: tuple[int, str] | None = None, idempotency_key: str | None = None,
    ) -> CaptureOutcome:
        """Store a new note, or fold it into what is stored, as the triage decides; one atomic append.

        With an idempotency key, the answer is recorded in that same append, on the key's own stream: a
        retry (or a racing duplicate) of the request loses the race for that stream and returns the answer
        the first one got, so the note is never stored twice.
        """
        memory_id = self.new_id()
        command = c.Capture(content, tuple(tags), source, ctx.identity.personal_workspace, volatility)
        captured = decide(command, Memory(memory_id))[0]
        if anchor is not None:
            validate(c.SetTimeAnchor(anchor[0], anchor[1], 0))
        key_stream = idempotency_stream(ctx.identity.actor_id, idempotency_key) if idempotency_key else None
        request_hash = hashlib.sha256(repr((captured.content, captured.tags, captured.source, anchor)).encode()
                                      ).hexdigest()

        def attempt() -> CaptureOutcome:
            if key_stream and (answered := self.store.read_stream(key_stream)):
                return self._replayed(ctx, answered[-1].event, request_hash)
            verdict = (self.triage.assess(captured.content, captured.source, captured.workspace)
                       if self.triage else STORE)
            if verdict.action == "block":
                if key_stream and (answered := self.store.read_stream(key_stream)):
                    return self._replayed(ctx, answered[-1].event, request_hash)  # our own twin, stored meanwhile
                return CaptureOutcome(verdict.target.id, verdict.target.tags, verdict)  # type: ignore[union-attr]
            answer = functools.partial(_answer, ctx, key_stream, request_hash, self.clock.now_ms())
            try:
                if verdict.action in ("merge", "replace"):
                    return self._fold(ctx, captured, anchor, verdict, answer)
                return self._store(ctx, memory_id, captured, anchor, verdict, answer)
            except NotFound:  # the matched memory was forgotten meanwhile: nothing left to compare with
                return self._store(ctx, memory_id, captured, anchor, STORE, answer)

        outcome = retrying(attempt)
        if self.on_stored and outcome.verdict.action != "block":
            self.on_stored(ctx, outcome.id)
        return outcome

    def _store(self, ctx: Context, memory_id: str, captured: MemoryCaptured, anchor: tuple[int, str] | None,
               verdict: Verdict, answer: Callable[[CaptureOutcome], list[Envelope]]) -> CaptureOutcome:
        """A new memory, with what the verdict does to the one it matched, in one batch."""
        tags = list(captured.tags)
        events: list[object] = []
        others: list[Envelope] = []
        target = verdict.target
        now = self.clock.now_ms()
        if verdict.action == "flag":
            tags.append("duplicate-candidate")
            events.append(DuplicateSuspected(target.id, round(verdict.score, 4)))  # type: ignore[union-attr]
        elif verdict.action == "contradiction":
            tags.append("contradiction-resolved")
            events.append(ContradictionWon(target.id, verdict.reason))  # type: ignore[union-attr]
            old = self._as_judged(ctx, verdict)
            others += envelopes(ctx, memory_stream(old.id), old.version,
                                [StatusChanged("deprecated"), ContradictionLost(memory_id, verdict.reason)],
                                old.workspace, now)
            edge = links.Edge(memory_id, old.id, "supersedes")
            others += envelopes(ctx, links.edge_stream(memory_id, old.id, "supersedes"), 0,
                                links.decide_link(edge, 1.0, "system"), old.workspace, now)
        elif verdict.action == "keep_canonical":
            tags = text.with_prefixed(tags, "status:", "draft")
            events.append(ContradictionLost(target.id, verdict.reason))  # type: ignore[union-attr]
            kept = self._as_judged(ctx, verdict)
            others += envelopes(ctx, memory_stream(kept.id), kept.version,
                                [ContradictionWon(memory_id, verdict.reason)], kept.workspace, now)
        judged = classify(captured.content, tuple(tags))
        events[:0] = [replace(captured, tags=tuple(text.dedupe(tags))),
                      MemoryClassified(judged.importance, judged.kind, judged.volatility, False, "rules")]
        if anchor is not None:
            events.append(TimeAnchorSet(*anchor))
        batch = envelopes(ctx, memory_stream(memory_id), 0, events, captured.workspace, now)
        outcome = CaptureOutcome(memory_id, reduce(evolve, events, Memory(memory_id)).tags, verdict)
        self.store.append(batch + others + answer(outcome))
        return outcome

    def _fold(self, ctx: Context, captured: MemoryCaptured, anchor: tuple[int, str] | None, verdict: Verdict,
              answer: Callable[[CaptureOutcome], list[Envelope]]) -> CaptureOutcome:
        """Merge the note into the memory it matched, or replace that memory's text with it."""
        state = self._as_judged(ctx, verdict)
        content = verdict.merged_content if verdict.action == "merge" else captured.content
        content, hashtags = text.extract_hashtags(content)
        # The newer note's word on how long it stays true wins; staleness is judged afresh.
        incoming = next((t for t in captured.tags if t.startswith("volatility:")), None)
        tags = [t for t in text.dedupe([*state.tags, *captured.tags, *hashtags])
                if not t.startswith("volatility:") and t != "stale:as-of"]
        tags = text.normalize_tags(tags + ([incoming] if incoming else []))
        judged = classify(content, tuple(tags))
        events: list[object] = [MemoryRevised(content, "merged" if verdict.action == "merge" else "replaced")]
        if tuple(tags) != state.tags:
            events.append(TagsChanged(tuple(tags)))
        events.append(MemoryClassified(judged.importance, judged.kind, judged.volatility, False, "rules"))
        if anchor is not None:  # the newer note's reminder goes with it
            events.append(TimeAnchorSet(*anchor))
        outcome = CaptureOutcome(state.id, reduce(evolve, events, state).tags, verdict)
        batch = envelopes(ctx, memory_stream(state.id), state.version, events, state.workspace, self.clock.now_ms())
        self.store.append(batch + answer(outcome))
        return outcome

    def _as_judged(self, ctx: Context, verdict: Verdict) -> Memory:
        """The matched memory, if it still reads as it did when judged; else the verdict is stale: decide again."""
        state, _ = self.load(ctx, verdict.target.id)  # type: ignore[union-attr]
        if state.content != verdict.target.content:  # type: ignore[union-attr]
            raise ConcurrencyConflict(f"Entry {state.id} changed while the capture was being decided")
        return state

    def _replayed(self, ctx: Context, event: object, request_hash: str) -> CaptureOutcome:
        """The answer recorded for an idempotency key, if this is the same request (tags as they are now)."""
        if not isinstance(event, CaptureAnswered):
            raise TypeError(f"unexpected event on an idempotency stream: {event!r}")
        if event.request_hash != request_hash:
            raise AlreadyExists("This Idempotency-Key was already used for a different capture")
        try:
            tags = self.load(ctx, event.memory_id)[0].tags
        except NotFound:  # forgotten since
            tags = ()
        return CaptureOutcome(event.memory_id, tags, Verdict(event.action, None, event.score, match_id=event.match_id))

    def classify_with_model(self, ctx: Context, memory_id: str) -> bool:
        """Refine a memory's rule-based classification with the language model; whether it changed anything."""
        if self.llm is None:
            return False
        state, _ = self.load(ctx, memory_id)
        judged = classify(state.content, state.tags)
        answer = classify_with_model(self.llm, state.content, judged)
        if answer is None:
            return False
        model, canonical = answer

        def attempt() -> bool:
            current, _ = self.load(ctx, memory_id)
            self._append(ctx, current, [MemoryClassified(model.importance, model.kind, model.volatility, canonical,
                                                         "model")])
            return True

        return retrying(attempt)

    def snooze(self, ctx: Context, memory_id: str, until: int) -> Memory:
        return self._execute(ctx, memory_id, c.SetTimeAnchor(until, "", self.clock.now_ms()))

    def clear_anchor(self, ctx: Context, memory_id: str) -> Memory:
        return self._execute(ctx, memory_id, c.ClearTimeAnchor())

    def resolve_loop(self, ctx: Context, memory_id: str, action: str) -> Memory:
        """Close an open loop: `done` marks it done, `not-task` takes away its task classification."""
        if action not in ("done", "not-task"):
            raise InvalidInput("action must be done or not-task")
        state, _ = self.load(ctx, memory_id.strip())
        if "task" not in state.tags:
            raise InvalidInput(f"Entry {state.id} is not an open loop")
        tags = [t for t in state.tags if t != "task"] + (["done"] if action == "done" else [])
        return self._execute(ctx, memory_id, c.ChangeTags(tuple(dict.fromkeys(tags))))

    def append(self, ctx: Context, memory_id: str, addition: str, volatility: str | None = None) -> Memory:
        dated = datetime.fromtimestamp(self.clock.now_ms() / 1000, self.timezone).strftime("%b %-d, %Y")
        return self._execute(ctx, memory_id, c.Append(addition, dated, volatility))

    def update(
        self, ctx: Context, memory_id: str, content: str, tags: list[str] | None, volatility: str | None = None
    ) -> Memory:
        return self._execute(ctx, memory_id, c.Update(content, None if tags is None else tuple(tags), volatility))

    def set_status(self, ctx: Context, memory_id: str, status: str) -> Memory:
        return self._execute(ctx, memory_id, c.SetStatus(status))

    def forget(self, ctx: Context, memory_id: str) -> Memory:
        return self._execute(ctx, memory_id, c.Forget())

    def record_recalls(self, ctx: Context, memory_ids: list[str]) -> int:
        """Count a recall of each memory, once per day; best effort, since a lost race only loses a count."""
        day = datetime.fromtimestamp(self.clock.now_ms() / 1000, self.timezone).date().isoformat()
        if self._recalled_day != day:
            self._recalled_day, self._recalled = day, set()
        recorded = 0
        for memory_id in memory_ids:
            if memory_id in self._recalled:  # already counted today by this process: skip the stream read
                continue
            self._recalled.add(memory_id)
            try:
                state, _ = self.load(ctx, memory_id)
                events = decide(c.RecordRecall(day), state)
                self._append(ctx, state, events)
                recorded += len(events)
            except (ConcurrencyConflict, NotFound):
                continue
        return recorded

    def load(self, ctx: Context, memory_id: str) -> tuple[Memory, list[Envelope]]:
        """A memory and its events, if it exists in a workspace the caller can read."""
        events = self.store.read_stream(memory_stream(memory_id))
        state = reduce(evolve, (e.event for e in events), Memory(memory_id))
        if not state.exists or state.workspace not in ctx.identity.readable:
            raise NotFound(f"No entry found with ID: {memory_id}")
        return state, events

    def _execute(self, ctx: Context, memory_id: str, command: c.Command) -> Memory:
        memory_id = memory_id.strip()
        validate(command)

        def attempt() -> Memory:
            state, events = self.load(ctx, memory_id)
            if not ctx.identity.can_edit(state.workspace, events[0].actor):
                raise Forbidden("You may not change this memory")
            return self._append(ctx, state, decide(command, state))

        return retrying(attempt)

    def _append(self, ctx: Context, state: Memory, events: list[object]) -> Memory:
        if not events:
            return state
        workspace = state.workspace or ctx.identity.personal_workspace
        self.store.append(envelopes(ctx, memory_stream(state.id), state.version, events, workspace,
                                    self.clock.now_ms()))
        return reduce(evolve, events, state)


def _answer(ctx: Context, key_stream: str | None, request_hash: str, now: int,
            outcome: CaptureOutcome) -> list[Envelope]:
    """The idempotency record of a capture's answer, to append with it (nothing without a key)."""
    if key_stream is None:
        return []
    verdict = outcome.verdict
    event = CaptureAnswered(request_hash, outcome.id, verdict.action, outcome.match_id or "", verdict.score)
    return envelopes(ctx, key_stream, 0, [event], ctx.identity.personal_workspace, now)
