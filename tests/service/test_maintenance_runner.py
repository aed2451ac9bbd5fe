"""The maintenance runner: a run is leased on the job's stream, summarised as an event, resumed from its cursor,
and a job that fails or is killed halfway leaves a record and no stuck lease."""

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.maintenance import Budget, JobResult, MaintenanceRunner, MaintenanceScheduler
from second_brain.app.maintenance.runner import parse_daily
from second_brain.domain.errors import InvalidInput, NotFound
from second_brain.domain.maintenance import LEASE_MS, JobFinished, JobStarted, job_stream


class Counting:
    """A job that counts to `total` in steps of `step`, resuming from its cursor."""

    schedule = "nightly"

    def __init__(self, name: str = "count", step: int = 2, total: int = 5) -> None:
        self.name, self.step, self.total = name, step, total
        self.cursors: list[str] = []

    def run(self, budget: Budget, cursor: str) -> JobResult:
        self.cursors.append(cursor)
        start = int(cursor or 0)
        end = min(self.total, start + self.step)
        return JobResult({"counted": end - start}, "" if end == self.total else str(end), end == self.total)


class Failing:
    name, schedule = "broken", "nightly"

    def run(self, budget: Budget, cursor: str) -> JobResult:
        raise RuntimeError("the disk is full")


def test_runs_resume_from_the_cursor_and_are_summarised_in_the_log(clock):
    store, job = InMemoryEventStore(), Counting()
    runner = MaintenanceRunner(store, clock, [job])
    summaries = [runner.run()[0] for _ in range(3)]
    assert job.cursors == ["", "2", "4"]
    assert [(s["counts"], s["cursor"], s["complete"]) for s in summaries] == [
        ({"counted": 2}, "2", False), ({"counted": 2}, "4", False), ({"counted": 1}, "", True)]
    events = [e.event for e in store.read_stream(job_stream("count", clock.now_ms()))]
    assert [type(e) for e in events] == [JobStarted, JobFinished] * 3
    assert runner.status() == [{"job": "count", "schedule": "nightly", "running": False, "runs": 3,
                                "last": summaries[-1]}]


def test_a_failing_job_is_recorded_with_its_error_and_keeps_its_cursor(clock):
    store = InMemoryEventStore()
    runner = MaintenanceRunner(store, clock, [Failing(), Counting()])
    broken, counted = runner.run()
    # the kind only: a message may quote what an admin may not read (it goes to the log)
    assert broken["errors"] == ["RuntimeError (see the service log)"] and broken["complete"] is False
    assert counted["counts"] == {"counted": 2}  # the next job still ran


def test_a_run_in_progress_holds_the_job_until_its_lease_lapses(clock):
    store, job = InMemoryEventStore(), Counting()
    runner = MaintenanceRunner(store, clock, [job])
    runner._append(job_stream("count", clock.now_ms()), 0, JobStarted("count"), clock.now_ms())  # killed mid-run
    assert runner.run() == [{"job": "count", "skipped": "already running"}]
    assert runner.status()[0]["running"] is True
    clock.advance(LEASE_MS)
    assert runner.run()[0]["counts"] == {"counted": 2}  # taken over
    assert job.cursors == [""]


def test_unknown_jobs_and_deadlines(clock):
    runner = MaintenanceRunner(InMemoryEventStore(), clock, [Counting()])
    with pytest.raises(NotFound, match="No maintenance job named 'nope'; jobs: count"):
        runner.run(["nope"])
    assert runner.run(until=0.0) == [{"job": "count", "skipped": "out of time"}]


def test_the_schedule_time_and_the_next_nightly_run():
    assert parse_daily("03:00") == (3, 0) and parse_daily(" off ") is None and parse_daily("23:59") == (23, 59)
    for bad in ("3", "24:00", "03:60", "noon"):
        with pytest.raises(InvalidInput, match="HH:MM or off"):
            parse_daily(bad)
    zone = ZoneInfo("Europe/Paris")
    scheduler = MaintenanceScheduler(None, lambda: zone, (3, 0))  # type: ignore[arg-type]  # no runner: only the schedule is asked
    assert scheduler.next_nightly(datetime(2026, 3, 1, 2, 59, tzinfo=zone)) == datetime(2026, 3, 1, 3, 0, tzinfo=zone)
    assert scheduler.next_nightly(datetime(2026, 3, 1, 3, 0, tzinfo=zone)) == datetime(2026, 3, 2, 3, 0, tzinfo=zone)


def test_a_new_month_starts_a_new_stream_and_resumes_from_the_last_months_cursor(clock):
    store, job = InMemoryEventStore(), Counting()
    runner = MaintenanceRunner(store, clock, [job])
    runner.run()
    clock.advance(31 * 24 * 3600 * 1000)  # 2026-02-01: February's stream
    assert runner.status()[0]["runs"] == 0 and runner.status()[0]["last"]["cursor"] == "2"
    runner.run()
    assert job.cursors == ["", "2"]
    assert [len(store.read_stream(job_stream("count", at))) for at in (0, clock.now_ms())] == [0, 2]
    january = job_stream("count", clock.now_ms() - 31 * 24 * 3600 * 1000)
    assert january == "maintenance-count-2026-01" and len(store.read_stream(january)) == 2


class Timed:
    schedule = "nightly"

    def __init__(self, name: str) -> None:
        self.name, self.given = name, 0.0

    def run(self, budget: Budget, cursor: str) -> JobResult:
        self.given = budget.left()
        return JobResult()


def test_with_a_deadline_each_job_gets_at_most_an_even_share_of_what_is_left(clock):
    import time

    jobs = [Timed("a"), Timed("b"), Timed("c")]
    MaintenanceRunner(InMemoryEventStore(), clock, jobs).run(until=time.monotonic() + 30)
    assert [round(j.given) for j in jobs] == [10, 15, 30]  # each job here returns at once: the rest carries over
