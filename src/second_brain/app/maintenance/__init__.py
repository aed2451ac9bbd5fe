"""Nightly upkeep: named jobs under one runner, the same in `brain serve` (a scheduler thread), `brain maintenance`
and the AWS maintenance function (`runner.py`). The runner schedules the jobs; each lives with its capability
(app/memories/jobs.py, app/reminders/jobs.py, app/graph/jobs.py, app/integrations/jobs.py, app/insights/digest.py
and patterns.py), and `sweep.py` walks the brain for them."""

from .runner import Budget, Job, JobResult, MaintenanceRunner, MaintenanceScheduler

__all__ = ["Budget", "Job", "JobResult", "MaintenanceRunner", "MaintenanceScheduler"]
