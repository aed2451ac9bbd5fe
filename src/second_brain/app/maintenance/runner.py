"""The job runner: one run of each job is leased on its stream, bounded by a deadline, and summarised as an event.

A job does its work as ordinary appends (each effect atomic on its own, so a run killed halfway leaves only whole
effects behind), returns counts and a cursor, and is run again from that cursor next time. Nothing here knows
what a job does.
"""

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from ...domain.errors import ConcurrencyConflict, InvalidInput, NotFound
from ...domain.events import Envelope
from ...domain.maintenance import JobFinished, JobStarted, JobState, evolve, job_stream
from ...ports.clock import Clock
from ...ports.event_store import EventStore

log = logging.getLogger("second_brain.maintenance")
NIGHTLY, HOURLY = "nightly", "hourly"
JOB_SECONDS = 300.0  # the longest one job runs in one go; what is left waits for the next run
MAX_ERRORS = 5  # errors kept in a run's summary


@dataclass(frozen=True)
class Budget:
    """How long a job may run: it checks `expired()` between items and stops cleanly with a cursor."""

    until: float  # time.monotonic() deadline

    def expired(self) -> bool:
        return time.monotonic() >= self.until

    def left(self) -> float:
        return max(0.0, self.until - time.monotonic())


@dataclass
class JobResult:
    """What a run did (counts by kind), where the next run resumes, and whether work was left for it."""

    counts: dict[str, int] = field(default_factory=dict)
    cursor: str = ""
    complete: bool = True
    errors: list[str] = field(default_factory=list)  # items that failed, without stopping the job

    def add(self, key: str, n: int = 1) -> None:
        """Count `n` more of `key` (a zero leaves no key behind: summaries list what happened)."""
        if n:
            self.counts[key] = self.counts.get(key, 0) + n


class Job(Protocol):
    name: str
    schedule: str  # NIGHTLY or HOURLY

    def run(self, budget: Budget, cursor: str) -> JobResult:
        """Do one bounded run from `cursor` ("" the first time)."""


class MaintenanceRunner:
    def __init__(self, store: EventStore, clock: Clock, jobs: Sequence[Job], job_seconds: float = JOB_SECONDS) -> None:
        self.store = store
        self.clock = clock
        self.jobs = {job.name: job for job in jobs}
        self.job_seconds = job_seconds

    def names(self, schedule: str | None = None) -> list[str]:
        return [name for name, job in self.jobs.items() if schedule is None or job.schedule == schedule]

    def run(self, names: Sequence[str] | None = None, until: float | None = None,
            schedule: str | None = NIGHTLY) -> list[dict[str, Any]]:
        """Run the named jobs (else every job on `schedule`) in order; the summaries, one per job. With `until`
        (a time.monotonic() deadline, e.g. a Lambda's remaining time) each job gets at most an even share of what
        is left, so a slow early job cannot starve the later ones night after night."""
        for name in names or ():
            if name not in self.jobs:
                raise NotFound(f"No maintenance job named {name!r}; jobs: {', '.join(self.jobs)}")
        chosen = list(names or self.names(schedule))
        summaries = []
        for left, name in zip(range(len(chosen), 0, -1), chosen, strict=True):
            now = time.monotonic()
            deadline = now + self.job_seconds
            if until is not None:
                if now >= until:
                    summaries.append({"job": name, "skipped": "out of time"})
                    continue
                deadline = min(deadline, now + (until - now) / left)
            summaries.append(self.run_job(name, Budget(deadline)))
        return summaries

    def run_job(self, name: str, budget: Budget) -> dict[str, Any]:
        job = self.jobs[name]
        now = self.clock.now_ms()
        stream, state = self._current(name, now)
        if state.held(now):
            return {"job": name, "skipped": "already running"}
        try:
            self._append(stream, state.version, JobStarted(name), now)
        except ConcurrencyConflict:
            return {"job": name, "skipped": "already running"}
        try:
            result = job.run(budget, state.cursor)
        except Exception as exc:  # the job stops; its summary says why, and the next run starts where this one did
            log.exception("maintenance job %s failed", name)
            result = JobResult(cursor=state.cursor, complete=False, errors=[_describe(exc)])
        finished = JobFinished(name, now, dict(result.counts), tuple(result.errors[:MAX_ERRORS]), result.cursor,
                               result.complete)
        for _ in range(3):  # on the stream the run started on, even past midnight at the end of a month
            try:
                self._append(stream, self._fold(stream, JobState(name)).version, finished, self.clock.now_ms())
                break
            except ConcurrencyConflict:  # a runner that took over a lapsed lease appended meanwhile
                continue
        return self._fold(stream, JobState(name)).last

    def state(self, name: str) -> JobState:
        return self._current(name, self.clock.now_ms())[1]

    def _current(self, name: str, now: int) -> tuple[str, JobState]:
        """This month's stream of the job and its state; a month's first run resumes from the last month's."""
        stream = job_stream(name, now)
        state = self._fold(stream, JobState(name))
        if state.version == 0:
            earlier = self._fold(job_stream(name, _month_before(now)), JobState(name))
            state = JobState(name, running_since=earlier.running_since, last=earlier.last)
        return stream, state

    def _fold(self, stream: str, state: JobState) -> JobState:
        for envelope in self.store.read_stream(stream):
            state = evolve(state, envelope.event, envelope.at)
        return state

    def status(self) -> list[dict[str, Any]]:
        """Each job, its schedule, whether a run holds it, its latest run and how many runs it had this month."""
        now = self.clock.now_ms()
        rows = []
        for name, job in self.jobs.items():
            state = self._current(name, now)[1]
            rows.append({"job": name, "schedule": job.schedule, "running": state.held(now), "runs": state.runs,
                         "last": state.last or None})
        return rows

    def _append(self, stream: str, version: int, event: object, at: int) -> None:
        job = getattr(event, "job", "")
        self.store.append([Envelope(stream_id=stream, version=version + 1, event=event, actor="system",
                                    workspace="", request_id=f"maintenance-{job}-{at}", at=at)])


def _month_before(at: int) -> int:
    first = datetime.fromtimestamp(at / 1000, UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return int(first.timestamp() * 1000) - 1


def _describe(exc: Exception) -> str:
    """What a run's summary says of a failure: the kind only. Messages can name memories or quote tags of any
    workspace, and admins read the summaries; the message goes to the log."""
    return f"{type(exc).__name__} (see the service log)"


def parse_daily(value: str) -> tuple[int, int] | None:
    """BRAIN_MAINTENANCE_AT: "HH:MM" local time, or "off"."""
    if value.strip().lower() == "off":
        return None
    try:
        hour, minute = (int(part) for part in value.strip().split(":"))
    except ValueError:
        raise InvalidInput(f"maintenance time must be HH:MM or off, not {value!r}") from None
    if not (0 <= hour < 24 and 0 <= minute < 60):
        raise InvalidInput(f"maintenance time must be HH:MM or off, not {value!r}")
    return hour, minute


class MaintenanceScheduler:
    """`brain serve`'s clock: the nightly jobs once a day at a local time, the hourly ones every hour."""

    def __init__(self, runner: MaintenanceRunner, timezone: Callable[[], ZoneInfo], at: tuple[int, int]) -> None:
        self.runner = runner
        self.timezone = timezone
        self.at = at
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="maintenance", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def next_nightly(self, now: datetime) -> datetime:
        hour, minute = self.at
        when = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        return when if when > now else when + timedelta(days=1)

    def _loop(self) -> None:
        while not self._stop.is_set():
            now = datetime.now(self.timezone())
            nightly = self.next_nightly(now)
            hourly = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
            due = min(nightly, hourly)
            if self._stop.wait(max(1.0, (due - now).total_seconds())):
                return
            for schedule in ([HOURLY] if due == hourly else []) + ([NIGHTLY] if due == nightly else []):
                try:
                    self.runner.run(schedule=schedule)
                except Exception:  # never let upkeep stop the clock
                    log.exception("scheduled %s maintenance failed", schedule)
