"""The command side: load a memory from its stream, decide, append; retry on a concurrent writer."""

import hashlib
import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import reduce
from typing import cast
from zoneinfo import ZoneInfo

from ...domain import commands as c
from ...domain import patterns
from ...domain.capture import (
    STORE,
    TRANSCRIPT_SOURCES,
    Action,
    CaptureDecision,
    Verdict,
    content_stream,
    decide_capture,
    exact_repeat,
    for_mirror,
    request_digest,
)
from ...domain.classification import classify
from ...domain.conflicts import item_name
from ...domain.errors import (
    AlreadyExists,
    ConcurrencyConflict,
    Forbidden,
    InvalidInput,
    NotFound,
    StoreUnavailable,
)
from ...domain.events import (
    CaptureAnswered,
    ContentClaimed,
    ContentReleased,
    ContradictionLost,
    DigestComposed,
    Envelope,
    IdempotencyExpired,
    MemoryCaptured,
    MemoryClassified,
    MemoryForgotten,
    MemoryImported,
    MemoryReleased,
    MemoryRevised,
    MemoryRolledUp,
    MemoryShared,
    MemoryUnshared,
    memory_of,
    memory_stream,
)
from ...domain.extraction import Anchor, find_anchor
from ...domain.identity import Identity
from ...domain.integrations import refused
from ...domain.memory import Memory, decide, evolve, fold, validate
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.llm import LanguageModel
from ...ports.recall_tally import RecallTally, Tallied
from ..handling import Context, envelopes, retrying
from ..handling import system as system_context
from .projects import ProjectService
from .triage import Triage, classify_with_model

log = logging.getLogger("second_brain.memories")

REWRITES = ("merge", "replace", "contradiction")  # verdicts that act on the matched memory's text
STRIPES = 64  # locks that writers of one memory in this process share (other processes race: `retrying`)
__all__ = ["CaptureOutcome", "Context", "MemoryService"]


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


class MemoryService:
    def __init__(
        self,
        store: EventStore,
        clock: Clock,
        timezone: ZoneInfo | Callable[[], ZoneInfo],
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        triage: Triage | None = None,
        projects: ProjectService | None = None,
        llm: LanguageModel | None = None,
        on_stored: Callable[[Context, str], None] | None = None,
        reads_when: bool | Callable[[], bool] = True,
        content_key: bytes | Callable[[], bytes] | None = None,
        recall_tally: RecallTally | None = None,
        legacy_claims: bool = False,
    ) -> None:
        self.triage = triage
        self.projects = projects  # creates the unknown projects a capture names, in the capture's append
        self.llm = llm  # refines classification, when a real model is configured
        self.on_stored = on_stored  # told of every memory a capture stored or changed
        self._reads_when = reads_when  # set the reminder a new note's words name (False: the nightly job alone)
        self._content_key = content_key  # the brain's secret (or where to fetch it): claim streams are keyed hashes
        self.recall_tally = recall_tally  # where recalls are noted, to be folded into the log later (AWS)
        self.legacy_claims = legacy_claims  # a brain older than its secret: claims named by a plain hash too
        self.store = store
        self.clock = clock
        self._timezone = timezone  # a zone, or where to read the configured one per request
        self.new_id = new_id
        self._counted_day = ""
        self._counted: set[tuple[type, str]] = set()  # (command, memory) pairs already counted today
        self._stripes = [threading.Lock() for _ in range(STRIPES)]

    @property
    def timezone(self) -> ZoneInfo:
        return self._timezone() if callable(self._timezone) else self._timezone

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
        memory_id = self.new_id()
        command = c.Capture(content, tuple(tags), source, workspace or ctx.identity.personal_workspace, volatility)
        captured = decide(command, Memory(memory_id))[0]
        if not isinstance(captured, MemoryCaptured):
            raise TypeError(f"a capture decided {captured!r} first")
        if anchor is not None:
            validate(c.SetTimeAnchor(anchor[0], anchor[1], 0))
        key_stream = idempotency_stream(ctx.identity.actor_id, idempotency_key) if idempotency_key else None
        request_hash = request_digest((captured.content, captured.tags, captured.source, anchor), self.content_key)
        text_stream = content_stream(captured.workspace, captured.content, self.content_key)
        said = self._said_when(captured) if anchor is None else None

        def attempt() -> CaptureOutcome:
            key_history = self.store.read_stream(key_stream) if key_stream else []
            if answered(key_history):
                return self._replayed(ctx, key_history[-1].event, request_hash)
            claims = self.store.read_stream(text_stream)
            holders = claims if _held(claims) else self._legacy_claims(captured.workspace, captured.content)
            verdict = STORE if force else (
                self._repeat(ctx, holders, captured)
                or (self.triage.assess(captured.content, captured.workspace) if self.triage else STORE))
            matched = self._as_judged(ctx, verdict)
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
                if key_stream and answered(twin := self.store.read_stream(key_stream)):
                    return self._replayed(ctx, twin[-1].event, request_hash)  # our own twin, stored meanwhile
                return outcome
            now = self.clock.now_ms()
            created = self.projects.creations(ctx, projects, captured.workspace) if projects and self.projects else ()
            changes = (*decision.changes, *created)
            batch = [e for ch in changes
                     for e in envelopes(ctx, ch.stream_id, ch.version, ch.events, ch.workspace, now)]
            claim = envelopes(ctx, text_stream, claims[-1].version if claims else 0, [ContentClaimed(outcome.id)],
                              captured.workspace, now)
            self.store.append(batch + claim + _answer(ctx, key_stream, len(key_history), request_hash, now, outcome))
            return outcome

        outcome = retrying(attempt)
        if self.on_stored and outcome.verdict.action != "block":
            self.on_stored(ctx, outcome.id)
        return outcome

    def store_note(self, ctx: Context, note: str, beside: Memory, key: str) -> str:
        """A note a merge took in, stored again as its own memory beside the one it was merged into (same
        workspace and source), once per `key` (an idempotency key); the id of the new memory."""
        return self.capture(ctx, note, [], beside.source or "api", idempotency_key=key, workspace=beside.workspace,
                            force=True).id

    def mirror_batch(self, ctx: Context, memory_id: str, captured: MemoryCaptured, anchor: tuple[int, str] | None,
                     mirrored: object, now: int, said_at: int | None = None) -> list[Envelope]:
        """The append that makes a managed mirror (app/integrations), judged as a capture is: its text claimed (a
        capture of the same words later is a repeat of it), what it resembles flagged beside it (domain/capture's
        for_mirror: never merged, replaced, blocked or retired, nor does it retire anything), classified, and
        timed by its own words when its system gives it no time. `mirrored` ends its stream's events. Words a memory
        already holds stay claimed by it."""
        text_stream = content_stream(captured.workspace, captured.content, self.content_key)
        claims = self.store.read_stream(text_stream)
        holders = claims if _held(claims) else self._legacy_claims(captured.workspace, captured.content)
        repeat = self._repeat(ctx, holders, captured)
        verdict = for_mirror(repeat or (
            self.triage.assess(captured.content, captured.workspace) if self.triage else STORE))
        when = anchor if anchor is not None else self.anchor_in_words(captured.content, captured.source, said_at)
        decision = decide_capture(memory_id, captured, when, verdict, self._as_judged(ctx, verdict))
        batch = [e for change in decision.changes
                 for e in envelopes(ctx, change.stream_id, change.version,
                                    [*change.events, *([mirrored] if change.stream_id == memory_stream(memory_id)
                                                       else [])], change.workspace, now)]
        if repeat is not None:  # the memory that holds these words keeps its claim
            return batch
        return batch + envelopes(ctx, text_stream, claims[-1].version if claims else 0, [ContentClaimed(memory_id)],
                                 captured.workspace, now)

    def prepare_mirrors(self, contents: Sequence[str]) -> None:
        """Embed ahead, together, the texts of the mirrors a sync is about to make (each is then judged alone)."""
        if self.triage and contents:
            self.triage.prepare(contents)

    def anchor_in_words(self, content: str, source: str, said_at: int | None = None) -> tuple[int, str] | None:
        """The time a mirror's words name, read from when they were written (`said_at`: a 2019 mail's "tomorrow"
        is a day in 2019), as a capture reads them; None if none, or if that time has passed (history, not a
        reminder)."""
        now = self.clock.now_ms()
        at = min(said_at, now) if said_at is not None else now
        said = self._said_when(MemoryCaptured(content, (), source, ""), at)
        return (said.when_at, said.when_kind) if said is not None and said.when_at >= now else None

    def _said_when(self, captured: MemoryCaptured, at: int | None = None) -> Anchor | None:
        """The time the note's own words name, read from `at` (now, unless said otherwise), when the extraction
        rules are sure of it (the nightly job reads the rest, with the model when one is configured). A
        transcript's words are not a request to the brain."""
        reads = self._reads_when() if callable(self._reads_when) else self._reads_when
        if not reads or captured.source in TRANSCRIPT_SOURCES:
            return None
        return find_anchor(captured.content, self.clock.now_ms() if at is None else at, self.timezone)

    def _repeat(self, ctx: Context, claims: list[Envelope], captured: MemoryCaptured) -> Verdict | None:
        """A block when the memory that last stored this exact text in this workspace still holds it there."""
        if not claims or not isinstance(claims[-1].event, ContentClaimed):  # none, or released by a forget
            return None
        try:
            state, _ = self.load(ctx, claims[-1].event.memory_id)
        except NotFound:  # forgotten since: the text is free again
            return None
        if state.workspace != captured.workspace:  # shared or taken back since
            return None
        return exact_repeat(state, captured.content)

    def _as_judged(self, ctx: Context, verdict: Verdict) -> Memory | None:
        """The matched memory's current state; None when there is none, or it has been forgotten meanwhile.

        A verdict that rewrites or retires it must have judged the text it has now (another capture may
        have merged into it: then decide again). A block or a flag only points at it, so a read model
        that lags the log cannot turn a repeat into a conflict.
        """
        if not verdict.match_id:
            return None
        try:
            state, _ = self.load(ctx, verdict.match_id)
        except NotFound:
            return None
        if verdict.action in REWRITES and state.content != verdict.match_content:
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
        # The action a Verdict had when this answer was recorded (CaptureAnswered stores it as text).
        action = cast(Action, event.action)
        return CaptureOutcome(event.memory_id, tags, Verdict(action, event.match_id, event.score))

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
            with self._writing(memory_id):
                current, _ = self.load(ctx, memory_id)
                self._append(ctx, current, [MemoryClassified(model.importance, model.kind, model.volatility,
                                                             canonical, "model")])
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
        _may_change(ctx, state)
        if "task" not in state.tags:
            raise InvalidInput(f"Entry {state.id} is not an open loop")
        tags = [t for t in state.tags if t != "task"] + (["done"] if action == "done" else [])
        return self._execute(ctx, memory_id, c.ChangeTags(tuple(dict.fromkeys(tags))))

    def append(self, ctx: Context, memory_id: str, addition: str, volatility: str | None = None,
               anchor: tuple[int, str] | None = None) -> Memory:
        """Add to a memory under a dated label; with `anchor` (when_at, when_kind), its reminder moves there in the
        same batch."""
        dated = datetime.fromtimestamp(self.clock.now_ms() / 1000, self.timezone).strftime("%b %-d, %Y")
        anchoring = (c.SetTimeAnchor(anchor[0], anchor[1], 0),) if anchor else ()
        return self._execute(ctx, memory_id, c.Append(addition, dated, volatility), *anchoring)

    def update(
        self, ctx: Context, memory_id: str, content: str, tags: list[str] | None, volatility: str | None = None
    ) -> Memory:
        return self._execute(ctx, memory_id, c.Update(content, None if tags is None else tuple(tags), volatility))

    def retag(self, ctx: Context, memory_id: str, add: Sequence[str], remove: Sequence[str]) -> Memory:
        return self._execute(ctx, memory_id, c.Retag(tuple(add), tuple(remove)))

    def set_status(self, ctx: Context, memory_id: str, status: str) -> Memory:
        return self._execute(ctx, memory_id, c.SetStatus(status))

    def share(self, ctx: Context, memory_id: str, workspace: str,
              note: Callable[[Context, str, str, str, str], list[Envelope]],
              home: Callable[[str], str | None]) -> str:
        """Move a memory to `workspace` (a company workspace, or back to its author's personal one): "shared",
        "unshared" or "no_change". Anyone who may change it may share it; only its author or an admin may take a
        company memory back, and not once its author has left (`home` gives an author's personal workspace, None
        for a removed one). `note` gives the team feed's record of the move, appended with it."""
        memory_id = memory_id.strip()

        def attempt() -> str:
            with self._writing(memory_id):
                state, history = self.load(ctx, memory_id)
                if state.mirror:  # its integration writes it where it was connected: moving it would lose it
                    raise refused(state.source, state.origin)
                to_company = workspace != ctx.identity.personal_workspace
                if to_company and state.workspace == workspace:
                    return "no_change"
                if not to_company and state.workspace not in ctx.identity.company_workspaces:
                    return "no_change"  # already personal (the caller's own: the only personal one they can read)
                _may_change(ctx, state)
                event: MemoryShared | MemoryUnshared
                if to_company:
                    event, layer = MemoryShared(workspace), "company"
                else:
                    author_home = home(state.actor)
                    if author_home is None:
                        raise InvalidInput("Its author has left the team: it stays in the company layer")
                    event, layer = MemoryUnshared(author_home), "personal"
                now = self.clock.now_ms()
                events: list[object] = [event]
                if not to_company and (digest_id := _rolled_into(history)):
                    events.append(MemoryReleased(digest_id))  # that digest goes (below): back to full weight
                moved = envelopes(ctx, memory_stream(state.id), state.version, events, event.workspace, now)
                if not to_company:  # the team's digests and patterns must not keep the words it takes back
                    moved += self._derived_erasure(state, history, now)
                company = workspace if to_company else state.workspace
                self.store.append(moved + note(ctx, state.id, layer, state.actor, company))
                return "shared" if to_company else "unshared"

        return retrying(attempt)

    def forget(self, ctx: Context, memory_id: str, managed: bool = False) -> Memory:
        """Erase a memory, and in the same atomic append every memory written from its words: the digest it was
        rolled into (whose other sources are released) and the patterns drawn from it (taking it back from the team
        does the same). A forgotten digest releases its sources too. A managed mirror is forgotten only by its
        integration (`managed`): through the API it answers where to delete it instead."""
        memory_id = memory_id.strip()

        def attempt() -> Memory:
            with self._writing(memory_id):
                state, history = self.load(ctx, memory_id)
                _may_change(ctx, state)
                if state.mirror and not managed:
                    raise refused(state.source, state.origin)
                now = self.clock.now_ms()
                batch = envelopes(ctx, memory_stream(memory_id), state.version, [MemoryForgotten()],
                                  state.workspace, now)
                self.store.append(batch + self._derived_erasure(state, history, now)
                                  + self._released_claims(ctx, state, history, now))
                return evolve(state, MemoryForgotten())

        return retrying(attempt)

    @property
    def content_key(self) -> bytes | None:
        if callable(self._content_key):  # fetched at the first capture or forget, not at start
            self._content_key = self._content_key()
        return self._content_key

    def _legacy_claims(self, workspace: str, content: str) -> list[Envelope]:
        """The claims on a text made before the brain had its secret (named by a plain hash), if it may have any."""
        if not (self.legacy_claims and self.content_key):
            return []
        return self.store.read_stream(content_stream(workspace, content))

    def _released_claims(self, ctx: Context, memory: Memory, history: list[Envelope], now: int) -> list[Envelope]:
        """A tombstone on the claim stream of every text the memory held or took in (captured, imported, revised,
        merged in), wherever it claimed it: which memory held which text is erased with it. Where another memory
        claimed the text since, its claim is made again after the tombstone, so it keeps its text."""
        texts = {memory.content}
        workspaces = {memory.workspace}
        for event in (e.event for e in history):
            if isinstance(event, MemoryCaptured | MemoryImported):
                texts.add(event.content)
                workspaces.add(event.workspace)
            elif isinstance(event, MemoryRevised):
                texts.update(t for t in (event.content, event.note) if t)
        keys = [self.content_key] + ([None] if self.legacy_claims and self.content_key else [])
        streams = dict.fromkeys(content_stream(w, t, k) for k in keys for w in workspaces for t in texts)
        batch: list[Envelope] = []
        for stream_id in streams:
            claims = self.store.read_stream(stream_id)
            held = [e for e in claims if isinstance(e.event, ContentClaimed)]
            if not any(e.event.memory_id == memory.id for e in held):
                continue
            events: list[object] = [ContentReleased()]
            if held[-1] is claims[-1] and held[-1].event.memory_id != memory.id:
                events.append(ContentClaimed(held[-1].event.memory_id))  # the text is still another memory's
            batch += envelopes(ctx, stream_id, len(claims), events, claims[-1].workspace, now)
        return batch

    def _derived_erasure(self, memory: Memory, history: list[Envelope], now: int) -> list[Envelope]:
        """The events that erase what the brain wrote from this memory's words, as the system."""
        # One level is all there is: what the brain writes (source `system`) is never rolled up or drawn from.
        made = {e.event.digest_id if isinstance(e.event, MemoryRolledUp) else e.event.pattern_id
                for e in history if isinstance(e.event, (MemoryRolledUp, patterns.MemoryDrawnInto))}
        derived = {d: self._stream_state(d) for d in made}
        derived = {i: (m, h) for i, (m, h) in derived.items() if m.exists}
        released: dict[str, tuple[Memory, str]] = {}  # each source freed, and the digest it was rolled into
        for digest_id, (_, digest_history) in [(memory.id, (memory, history)), *derived.items()]:
            for event in (e.event for e in digest_history if isinstance(e.event, DigestComposed)):
                for source in event.sources:
                    if source != memory.id and source not in released and source not in derived:
                        state, source_history = self._stream_state(source)
                        if state.exists and _rolled_into(source_history) == digest_id:
                            released[source] = (state, digest_id)
        batch = []
        changes: list[tuple[Memory, list[object]]] = [(m, [MemoryForgotten()]) for m, _ in derived.values()]
        changes += [(m, [MemoryReleased(d)]) for m, d in released.values()]
        for target, events in changes:
            system = system_context(target.workspace, f"forget-{memory.id}")
            batch += envelopes(system, memory_stream(target.id), target.version, events, target.workspace, now)
        return batch

    def _stream_state(self, memory_id: str) -> tuple[Memory, list[Envelope]]:
        history = self.store.read_stream(memory_stream(memory_id))
        return fold(history, Memory(memory_id)), history

    def record_recalls(self, ctx: Context, memory_ids: list[str]) -> int:
        """Count a recall of each memory, once per day; best effort, since a lost race only loses a count. With a
        tally, the recall is noted there (one small write, nothing read) and `fold_recalls` counts it later."""
        if self.recall_tally is None:
            return self._count_daily(ctx, memory_ids, c.RecordRecall)
        now = self.clock.now_ms()
        day = self._day(now)
        fresh = [i for i in dict.fromkeys(memory_ids) if (c.RecordRecall, i) not in self._counted]
        if not fresh:
            return 0
        try:
            self.recall_tally.note(Tallied(uuid.uuid4().hex, ctx.identity.actor_id, ctx.request_id, tuple(fresh),
                                           day, now))
        except StoreUnavailable:  # the recall is answered all the same; the next one notes these again
            log.warning("noting a recall of %d memories failed", len(fresh), exc_info=True)
            return 0
        self._counted.update((c.RecordRecall, i) for i in fresh)
        return len(fresh)

    def fold_recalls(self, tallied: Tallied) -> int:
        """A noted recall counted in the log: each memory still there that was not yet counted on the recall's day
        gets its `MemoryRecalled` (that day in its data), under the one who recalled it. The event's time is the
        fold's, when it entered the log: the log's times follow its order (`EventStore.last_by`)."""
        ctx = Context(Identity(tallied.actor, tallied.actor, "member", ""), tallied.request_id)
        now = self.clock.now_ms()
        counts: list[list[Envelope]] = []
        for memory_id in tallied.memory_ids:
            state, _ = self._stream_state(memory_id)
            if state.exists and (events := decide(c.RecordRecall(tallied.day), state)):
                counts.append(envelopes(ctx, memory_stream(memory_id), state.version, events, state.workspace, now))
        return self._append_counts(counts)

    def record_open(self, ctx: Context, memory_id: str) -> int:
        """Count that someone opened the memory itself, once per day: the use ranking trusts."""
        return self._count_daily(ctx, [memory_id], c.RecordOpen)

    def _count_daily(self, ctx: Context, memory_ids: list[str],
                     command: type[c.RecordRecall] | type[c.RecordOpen]) -> int:
        """Every count in one append (on DynamoDB one transaction, not one per memory: the count is written
        inside the request under Mangum); a race lost on one memory loses that memory's count only."""
        now = self.clock.now_ms()
        day = self._day(now)
        counts: list[list[Envelope]] = []
        for memory_id in dict.fromkeys(memory_ids):
            if (command, memory_id) in self._counted:  # already counted today by this process: skip the read
                continue
            self._counted.add((command, memory_id))
            try:
                state, _ = self.load(ctx, memory_id)
            except NotFound:
                continue
            if events := decide(command(day), state):
                counts.append(envelopes(ctx, memory_stream(state.id), state.version, events,
                                        state.workspace or ctx.identity.personal_workspace, now))
        return self._append_counts(counts)

    def _day(self, now: int) -> str:
        """Today in the brain's time zone; the counts this process made are forgotten when it changes."""
        day = datetime.fromtimestamp(now / 1000, self.timezone).date().isoformat()
        if self._counted_day != day:
            self._counted_day, self._counted = day, set()
        return day

    def _append_counts(self, counts: list[list[Envelope]]) -> int:
        """Every count in one append; a race lost on one memory loses that memory's count only."""
        if not counts:
            return 0
        try:
            self.store.append([e for count in counts for e in count])
            return sum(map(len, counts))
        except ConcurrencyConflict:  # one of them moved on meanwhile: the others still count
            return sum(len(count) for count in counts if self._append_or_lose(count))

    def _append_or_lose(self, batch: list[Envelope]) -> bool:
        try:
            self.store.append(batch)
        except ConcurrencyConflict:
            return False
        return True

    def load(self, ctx: Context, memory_id: str) -> tuple[Memory, list[Envelope]]:
        """A memory and its events, if it exists in a workspace the caller can read."""
        events = self.store.read_stream(memory_stream(memory_id))
        state = fold(events, Memory(memory_id))
        if not state.exists or state.workspace not in ctx.identity.readable:
            raise NotFound(f"No entry found with ID: {memory_id}")
        return state, events

    def _execute(self, ctx: Context, memory_id: str, command: c.Command, *more: c.Command) -> Memory:
        """Decide each command on the state the ones before it left, and append all their events in one batch:
        they land together or not at all."""
        memory_id = memory_id.strip()
        for each in (command, *more):
            validate(each)

        def attempt() -> Memory:
            with self._writing(memory_id):
                state, _ = self.load(ctx, memory_id)
                _may_change(ctx, state)
                events: list[object] = []
                for each in (command, *more):
                    events += decide(each, reduce(evolve, events, state))
                return self._append(ctx, state, events)

        return retrying(attempt)

    def _writing(self, memory_id: str) -> threading.Lock:
        """Writers of one memory in this process take turns, instead of losing races to each other until
        the retries run out; the lock is released before `retrying` waits."""
        return self._stripes[hash(memory_id) % STRIPES]

    def _append(self, ctx: Context, state: Memory, events: list[object]) -> Memory:
        if not events:
            return state
        workspace = state.workspace or ctx.identity.personal_workspace
        self.store.append(envelopes(ctx, memory_stream(state.id), state.version, events, workspace,
                                    self.clock.now_ms()))
        return reduce(evolve, events, state)


def _held(claims: list[Envelope]) -> bool:
    """Whether a text's claim stream says some memory holds the text (its last event is a claim)."""
    return bool(claims) and isinstance(claims[-1].event, ContentClaimed)


def _may_change(ctx: Context, memory: Memory) -> None:
    """A company memory changes only by its author's or an admin's hand; a personal one only by its owner's."""
    if not ctx.identity.can_edit(memory.workspace, memory.actor):
        raise Forbidden("Only the memory's author or an admin may change this memory")


def _rolled_into(history: list[Envelope]) -> str | None:
    """The digest a memory is rolled into now, if any."""
    current = None
    for event in (e.event for e in history):
        if isinstance(event, MemoryRolledUp):
            current = event.digest_id
        elif isinstance(event, MemoryReleased):
            current = None
    return current


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
