"""The nightly extraction job: recent captures without `when` get the time anchor or commitment their words name.

The cursor is the log position of the last capture judged (or the last event read). A run killed halfway
resumes from the previous cursor and judges those captures again; what it applied the first time is an anchor
by then, so they are skipped, and nothing is applied twice.
"""

from collections.abc import Sequence
from typing import Any

from ..reminders.extraction import Extractor, verdict_view
from .runner import NIGHTLY, Budget, JobResult

PER_RUN_MODEL = 200  # captures judged per run when each is a model call; the rest wait for the next run
PER_RUN_RULES = 5000  # without a model: the rules take about 0.1 ms a note, so this only bounds one run's appends
PREVIEW_SCAN = 20_000  # log events a dry run reads at most looking for candidates


class ExtractionJob:
    name = "extraction"
    schedule = NIGHTLY

    def __init__(self, extractor: Extractor, per_run: int | None = None) -> None:
        self.extractor = extractor
        self.per_run = per_run or (PER_RUN_MODEL if extractor.llm else PER_RUN_RULES)

    def run(self, budget: Budget, cursor: str) -> JobResult:
        result = JobResult(cursor=cursor)
        judged = 0
        for position, memory, captured_at in self.extractor.candidates(int(cursor or 0)):
            if budget.expired() or (memory is not None and judged >= self.per_run):
                result.complete = False
                return result  # what is left starts the next run
            if memory is not None:
                judged += 1
                try:
                    verdict = self.extractor.judge(memory, captured_at)
                    result.add(self.extractor.apply(verdict))
                except Exception as exc:  # noqa: BLE001 (one memory's failure is reported; the others are judged)
                    result.errors.append(f"{memory.id}: {type(exc).__name__}: {str(exc)[:200]}")
                    result.add("errors")
                result.add("judged")
            result.cursor = str(position)
        return result

    def preview(self, cursor: str, workspaces: Sequence[str], limit: int) -> list[dict[str, Any]]:
        """The verdicts the next run would reach on its first `limit` captures in these workspaces; nothing is
        appended."""
        found = self.extractor.preview(int(cursor or 0), workspaces, limit, PREVIEW_SCAN)
        tz = self.extractor.timezone()
        return [verdict_view(judged, tz) for judged in found]
