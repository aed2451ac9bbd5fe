"""The memories' scheduled jobs: housekeeping (embed what is pending, retire day-old idempotency answers), index
verification and repair, the staleness pass, and the hourly fold of noted recalls into the log."""

from collections.abc import Callable
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from ...domain.errors import ConcurrencyConflict
from ...domain.events import CaptureAnswered, IdempotencyExpired, StalenessJudged, memory_stream
from ...domain.staleness import judge
from ...ports.clock import Clock
from ...ports.event_store import EventStore, settled_pages
from ...ports.index_check import IndexCheck
from ...ports.recall_tally import RecallTally
from ..handling import envelopes
from ..maintenance.runner import HOURLY, NIGHTLY, Budget, JobResult
from ..maintenance.sweep import PAGE, first_events, load, system
from .indexing import Indexer
from .service import MemoryService, answered

KEY_LIFETIME_MS = 24 * 3600 * 1000
EMBED_BATCH = 64


class Housekeeping:
    """Housekeeping: embed what is still pending (on AWS nothing else does it in bulk), and retire idempotency keys'
    recorded answers once they are a day old, so a key may be reused afterwards."""

    name = "housekeeping"
    schedule = NIGHTLY

    def __init__(self, store: EventStore, clock: Clock, indexer: Indexer | None) -> None:
        self.store = store
        self.clock = clock
        self.indexer = indexer

    def run(self, budget: Budget, cursor: str) -> JobResult:
        result = JobResult()
        embedded = self._embed(budget, result)
        position, done = self._expire_keys(budget, int(cursor or 0), result)
        result.cursor, result.complete = str(position), embedded and done
        return result

    def _embed(self, budget: Budget, result: JobResult) -> bool:
        """Embed pending memories until none is left, a round fails them all, or time is up; whether all went."""
        if self.indexer is None:
            return True
        while not budget.expired():
            report = self.indexer.run_once(EMBED_BATCH, background=True, deadline=budget.until)
            result.add("embedded", report.vectorized)
            if report.failed:
                result.add("embed_failed", report.failed)
            if not report.remaining:
                return True
            if not report.vectorized:
                break
        return False

    def _expire_keys(self, budget: Budget, position: int, result: JobResult) -> tuple[int, bool]:
        """Walk the log from `position` to the answers younger than a day, retiring each key's live answer; the
        position reached, and whether it got there. Each event is walked once, ever."""
        cutoff = self.clock.now_ms() - KEY_LIFETIME_MS
        for batch in settled_pages(self.store, position, PAGE):  # the cursor is kept: no further than settled
            for envelope in batch:
                if envelope.at >= cutoff:
                    return position, True
                if isinstance(envelope.event, CaptureAnswered):
                    self._expire(envelope.stream_id, envelope.workspace, result)
                position = envelope.position
            if budget.expired():
                return position, False
        return position, True

    def _expire(self, stream_id: str, workspace: str, result: JobResult) -> None:
        history = self.store.read_stream(stream_id)
        if not answered(history):
            return
        now = self.clock.now_ms()
        try:
            self.store.append(envelopes(system(workspace, self.name, now), stream_id, len(history),
                                        [IdempotencyExpired()], workspace, now))
        except ConcurrencyConflict:  # answered again meanwhile: that answer is younger than a day
            return
        result.add("keys_expired")


INDEX_PER_RUN = 5000  # memories compared with their streams per run
INDEX_CHUNK = 100


class IndexVerification:
    """Index verification and repair: every run checks the index-wide invariants (kept counts, the keyword index as a
    whole, missing or stale vectors) and a rotating sample of memories against the log; over successive runs the
    sample covers the whole brain. What it finds wrong it repairs (ports/index_check.py, one adapter per backend)."""

    name = "index"
    schedule = NIGHTLY

    def __init__(self, store: EventStore, check: IndexCheck, per_run: int = INDEX_PER_RUN) -> None:
        self.store = store
        self.check = check
        self.per_run = per_run

    def run(self, budget: Budget, cursor: str) -> JobResult:
        result = JobResult()
        self._merge(result, self.check.verify([], whole=True))
        position, ids = int(cursor or 0), []
        for first in first_events(self.store, position):
            ids.append(first.memory_id)
            position = first.position
            if len(ids) == INDEX_CHUNK:
                self._merge(result, self.check.verify(ids))
                ids = []
                if budget.expired() or result.counts.get("checked", 0) >= self.per_run:
                    result.cursor, result.complete = str(position), False
                    return result
        if ids:
            self._merge(result, self.check.verify(ids))
        return result  # the sweep reached the head: the next run starts over

    @staticmethod
    def _merge(result: JobResult, counts: dict[str, int]) -> None:
        for key, n in counts.items():
            result.add(key, n)


DAYS_BACK = 8  # notes older than this are past their lifetime (adapters/event_store/tally.py)


class RecallFold:
    """The hourly fold of noted recalls into the log (where the brain notes them apart: AWS): each noted recall's
    memories counted as they would have been at the time (`MemoryService.fold_recalls`), then the note dropped.
    A fold that stops between two notes leaves the rest for the next run; a note folded twice counts nothing more
    (a memory is counted once a day)."""

    name = "recalls"
    schedule = HOURLY

    def __init__(self, tally: RecallTally, memories: MemoryService, clock: Clock,
                 timezone: Callable[[], ZoneInfo]) -> None:
        self.tally, self.memories, self.clock, self.timezone = tally, memories, clock, timezone

    def run(self, budget: Budget, cursor: str) -> JobResult:
        result = JobResult()
        today = datetime.fromtimestamp(self.clock.now_ms() / 1000, self.timezone()).date()
        days = [(today - timedelta(days=n)).isoformat() for n in range(DAYS_BACK, -1, -1)]  # oldest first
        for tallied in self.tally.due(days):
            if budget.expired():
                result.complete = False
                break
            result.add("counted", self.memories.fold_recalls(tallied))
            self.tally.drop(tallied)
            result.add("recalls_folded")
        return result


# memories looked at per run: a 100k brain is swept in about 200 nights, 25 (the reference) in 11 years
STALENESS_PER_RUN = 500


class StalenessPass:
    """The staleness pass: memories untouched for 90 days that state something changeable are flagged `stale:as-of`
    with a reason (domain/staleness.py), lasting ones lose the flag; the whole brain is swept over successive runs."""

    name = "staleness"
    schedule = NIGHTLY

    def __init__(self, store: EventStore, clock: Clock, per_run: int = STALENESS_PER_RUN) -> None:
        self.store = store
        self.clock = clock
        self.per_run = per_run

    def run(self, budget: Budget, cursor: str) -> JobResult:
        result = JobResult()
        position = int(cursor or 0)
        for first in first_events(self.store, position):
            if budget.expired() or result.counts.get("checked", 0) >= self.per_run:
                result.cursor, result.complete = str(position), False
                return result
            self._judge(first.memory_id, result)
            position = first.position
        return result  # swept to the head: the next run starts over

    def _judge(self, memory_id: str, result: JobResult) -> None:
        result.add("checked")
        memory = load(self.store, memory_id)
        now = self.clock.now_ms()
        verdict = judge(memory, now)
        if verdict is None:
            return
        event = StalenessJudged(verdict.stale, verdict.reason)
        try:
            self.store.append(envelopes(system(memory.workspace, self.name, now), memory_stream(memory_id),
                                        memory.version, [event], memory.workspace, now))
        except ConcurrencyConflict:  # changed meanwhile: judged again on the next sweep
            result.add("raced")
            return
        result.add("flagged" if verdict.stale else "cleared")
