"""The hourly push sender as a maintenance job, and POST /push/run: the same run, taken through the runner so the
scheduled run and a manual one never push at once (the job's lease on `maintenance-push`)."""

import threading
import time
from typing import Any

from ..handling import Context, require_admin
from ..reminders.push import PushReport, PushService, visible
from .runner import HOURLY, Budget, JobResult, MaintenanceRunner

NAME = "push"
RUN_NOW_SECONDS = 15.0  # POST /push/run stops well inside API Gateway's 29 s (plus one send); the rest goes next run


class PushReminders:
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
