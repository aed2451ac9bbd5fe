"""Housekeeping: embed what is still pending (on AWS nothing else does it in bulk), and retire idempotency keys'
recorded answers once they are a day old, so a key may be reused afterwards."""

from ...domain.errors import ConcurrencyConflict
from ...domain.events import CaptureAnswered, IdempotencyExpired
from ...ports.clock import Clock
from ...ports.event_store import EventStore, settled_pages
from ..handling import envelopes
from ..memories.indexing import Indexer
from ..memories.service import answered
from .runner import NIGHTLY, Budget, JobResult
from .sweep import PAGE, system

KEY_LIFETIME_MS = 24 * 3600 * 1000
EMBED_BATCH = 64


class Housekeeping:
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
