"""Nightly upkeep: named jobs under one runner, the same in `brain serve` (a scheduler thread), `brain maintenance`
and the AWS maintenance function (`runner.py`); one module per job."""

from .runner import Budget, Job, JobResult, MaintenanceRunner, MaintenanceScheduler

__all__ = ["Budget", "Job", "JobResult", "MaintenanceRunner", "MaintenanceScheduler"]
