"""Index verification and repair: every run checks the index-wide invariants (kept counts, the keyword index as a
whole, missing or stale vectors) and a rotating sample of memories against the log; over successive runs the
sample covers the whole brain. What it finds wrong it repairs (ports/index_check.py, one adapter per backend)."""

from ...ports.event_store import EventStore
from ...ports.index_check import IndexCheck
from .runner import NIGHTLY, Budget, JobResult
from .sweep import first_events

PER_RUN = 5000  # memories compared with their streams per run
CHUNK = 100


class IndexVerification:
    name = "index"
    schedule = NIGHTLY

    def __init__(self, store: EventStore, check: IndexCheck, per_run: int = PER_RUN) -> None:
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
            if len(ids) == CHUNK:
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
