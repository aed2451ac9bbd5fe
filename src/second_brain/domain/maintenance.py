"""Maintenance runs as events: each job's own stream (`maintenance-<job>-<YYYY-MM>`, one a month) holds when it
started, what it did and where the next run resumes, so a run is auditable, two runners never do one job at once,
and a run killed halfway is taken over once its lease has lapsed."""

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, ClassVar

from .envelope import stored

LEASE_MS = 30 * 60 * 1000  # a run that started this long ago without finishing is taken to be dead


@stored
@dataclass(frozen=True)
class JobStarted:
    """A runner took the job: appended at the stream's next version, so a second runner loses the race."""

    job: str
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class JobFinished:
    """What one run did: counts per kind of effect, errors (messages, no private text), where the next run
    resumes, and whether it stopped on its budget with work left."""

    job: str
    started_at: int
    counts: dict[str, int]
    errors: tuple[str, ...] = ()
    cursor: str = ""
    complete: bool = True
    SCHEMA: ClassVar[int] = 1


def job_stream(job: str, at: int) -> str:
    """A job's stream for the month of `at` (UTC): an hourly job's lease and summary events stay a few thousand a
    stream, so reading its state never grows with the brain's age."""
    return f"maintenance-{job}-{datetime.fromtimestamp(at / 1000, UTC):%Y-%m}"


@dataclass(frozen=True)
class JobState:
    """A job's stream folded: whether a run holds it, the latest finished run, and how many runs there were."""

    job: str
    version: int = 0
    running_since: int | None = None  # unix ms of a JobStarted not yet followed by JobFinished
    last: dict[str, Any] = field(default_factory=dict)  # the latest JobFinished as a summary
    runs: int = 0

    @property
    def cursor(self) -> str:
        return str(self.last.get("cursor", ""))

    def held(self, now: int) -> bool:
        """Whether another runner is (probably still) on it."""
        return self.running_since is not None and now - self.running_since < LEASE_MS


def evolve(state: JobState, event: object, at: int) -> JobState:
    version = state.version + 1
    if isinstance(event, JobStarted):
        return replace(state, version=version, running_since=at)
    if isinstance(event, JobFinished):
        summary = {"job": event.job, "started_at": event.started_at, "finished_at": at, "counts": dict(event.counts),
                   "errors": list(event.errors), "cursor": event.cursor, "complete": event.complete}
        return replace(state, version=version, running_since=None, last=summary, runs=state.runs + 1)
    return replace(state, version=version)  # an erased event
