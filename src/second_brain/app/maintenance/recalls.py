"""The hourly fold of noted recalls into the log (where the brain notes them apart: AWS): each noted recall's
memories counted as they would have been at the time (`MemoryService.fold_recalls`), then the note dropped.
A fold that stops between two notes leaves the rest for the next run; a note folded twice counts nothing more
(a memory is counted once a day)."""

from collections.abc import Callable
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from ...ports.clock import Clock
from ...ports.recall_tally import RecallTally
from ..memories.service import MemoryService
from .runner import HOURLY, Budget, JobResult

DAYS_BACK = 8  # notes older than this are past their lifetime (adapters/event_store/tally.py)


class RecallFold:
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
