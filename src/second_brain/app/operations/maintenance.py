"""Upkeep: the maintenance jobs (their latest runs, running them now or on their schedule) and the extraction's
dry run."""

import time
from collections.abc import Iterator
from typing import Any

from ...domain.errors import NotFound
from ..brain import Brain
from ..handling import Context, require_admin
from ..reminders.jobs import ExtractionJob
from .inputs import clamp


def maintenance_status(brain: Brain, ctx: Context) -> dict[str, Any]:
    """Every maintenance job, its schedule and its latest run (admin only: the runs span every workspace)."""
    require_admin(ctx)
    return {"ok": True, "jobs": brain.maintenance.status()}


def run_maintenance(brain: Brain, ctx: Context, job: str | None) -> dict[str, Any]:
    """Run one job now, or every nightly job; the summaries of the runs."""
    require_admin(ctx)
    names = [job.strip()] if job is not None and job.strip() else None
    until = time.monotonic() + brain.settings.maintenance_request_seconds  # a request must answer in time
    return {"ok": True, "runs": brain.maintenance.run(names, until=until)}


def extract_dry_run(brain: Brain, ctx: Context, limit: int = 5) -> dict[str, Any]:
    """The verdicts the nightly extraction would reach on its next captures in the caller's workspaces (admin
    only); nothing is written."""
    require_admin(ctx)
    limit = clamp(limit, 1, 10)
    job = brain.maintenance.jobs.get("extraction")
    if not isinstance(job, ExtractionJob):
        raise NotFound("No maintenance job named 'extraction'")
    verdicts = job.preview(brain.maintenance.state(job.name).cursor, ctx.identity.readable, limit)
    return {"ok": True, "verdicts": verdicts, "limit": limit}


def run_jobs(brain: Brain, ctx: Context, job: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Run one job, or every nightly job in order, with no time limit (the CLI, the brain stopped): each job's
    name and the summary of its run, as it finishes."""
    require_admin(ctx)
    for name in [job] if job else brain.maintenance.names("nightly"):
        yield name, brain.maintenance.run([name])[0]


def run_scheduled(brain: Brain, schedule: str, until: float) -> dict[str, Any]:
    """A scheduled run (the clock, not a caller): the deployment's own chores first (Brain.prepare_upkeep), then
    every job of `schedule` in order until `until` (time.monotonic()), then what was written made searchable, then
    the deployment's chores after (Brain.finish_upkeep)."""
    chores = brain.prepare_upkeep(schedule)
    runs = brain.maintenance.run(until=until, schedule=schedule)
    brain.settle()
    return {"runs": runs, **chores, **brain.finish_upkeep(schedule)}
