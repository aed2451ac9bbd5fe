"""The staleness pass: memories untouched for 90 days that state something changeable are flagged `stale:as-of`
with a reason (domain/staleness.py), lasting ones lose the flag; the whole brain is swept over successive runs."""

from ...domain.errors import ConcurrencyConflict
from ...domain.events import StalenessJudged, memory_stream
from ...domain.staleness import judge
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ..handling import envelopes
from .runner import NIGHTLY, Budget, JobResult
from .sweep import first_events, load, system

PER_RUN = 500  # memories looked at per run: a 100k brain is swept in about 200 nights, 25 (the reference) in 11 years


class StalenessPass:
    name = "staleness"
    schedule = NIGHTLY

    def __init__(self, store: EventStore, clock: Clock, per_run: int = PER_RUN) -> None:
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
