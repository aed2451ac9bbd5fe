"""The reminders' scheduled jobs: the nightly extraction of the times and commitments notes name, and the
hourly push sender (also run at once by POST /push/run, through the runner)."""

import threading
import time
from collections.abc import Sequence
from typing import Any

from ..handling import Context, require_admin
from ..maintenance.runner import HOURLY, NIGHTLY, Budget, JobResult, MaintenanceRunner
from .extraction import Extractor, verdict_view
from .push import PushReport, PushService, visible

PER_RUN_MODEL = 200  # captures judged per run when each is a model call; the rest wait for the next run
PER_RUN_RULES = 5000  # without a model: the rules take about 0.1 ms a note, so this only bounds one run's appends
PREVIEW_SCAN = 20_000  # log events a dry run reads at most looking for candidates


class ExtractionJob:
    """The nightly extraction job: recent captures without `when` get the time anchor or commitment their words name.

    The cursor is the log position of the last capture judged (or the last event read). A run killed halfway
    resumes from the previous cursor and judges those captures again; what it applied the first time is an anchor
    by then, so they are skipped, and nothing is applied twice."""

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


NAME = "push"
RUN_NOW_SECONDS = 15.0  # POST /push/run stops well inside API Gateway's 29 s (plus one send); the rest goes next run


class PushReminders:
    """The hourly push sender as a maintenance job, and POST /push/run: the same run, taken through the runner so the
    scheduled run and a manual one never push at once (the job's lease on `maintenance-push`)."""

    name = NAME
    schedule = HOURLY

    def __init__(self, service: PushService) -> None:
        self.service = service
        self._local = threading.local()  # the report of the run this thread made last (for POST /push/run)

    def run(self, budget: Budget, cursor: str) -> JobResult:
        report = PushReport()
        self._local.report = report
        self.service.send_due(report, budget.expired)
        # No cursor: what was pushed is on each memory's stream, so a run that stopped early starts over cheaply.
        return JobResult(counts=dict(report.counts), cursor="", complete=report.complete, errors=report.errors)

    def last_report(self) -> PushReport | None:
        return getattr(self._local, "report", None)


def run_now(runner: MaintenanceRunner, ctx: Context) -> dict[str, Any]:
    """Run the sender now (admin only): its counts, and the first per-device results."""
    require_admin(ctx)
    job = runner.jobs[NAME]
    assert isinstance(job, PushReminders)
    job._local.report = None
    summary = runner.run_job(NAME, Budget(time.monotonic() + RUN_NOW_SECONDS))
    report = job.last_report()
    if "skipped" in summary or report is None:
        return {"ok": True, "skipped": summary.get("skipped", "not run"), "complete": False,
                "counts": dict(PushReport().counts), "results": []}
    return {"ok": True, "complete": report.complete, "counts": report.counts, "errors": summary.get("errors", []),
            "results": visible(report.results, ctx.identity)}
