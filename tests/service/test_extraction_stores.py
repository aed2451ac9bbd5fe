"""The extraction job reads the log the same way on every event store: the window's start (the store's time index:
`cut`), the cursor, and the captures it judges."""

import time
from collections.abc import Iterator
from zoneinfo import ZoneInfo

import pytest

from second_brain.app.maintenance.runner import Budget
from second_brain.app.reminders.extraction import Extractor
from second_brain.app.reminders.jobs import ExtractionJob
from second_brain.domain.events import TimeAnchorSet
from tests.support.memories import memory_service
from tests.support.stores import event_store

DAY = 24 * 3600 * 1000


@pytest.fixture(params=["memory", "sqlite", "dynamodb"])
def store(request, tmp_path, clock) -> Iterator[object]:
    with event_store(request.param, tmp_path, clock) as store:
        yield store


def test_only_the_last_two_weeks_are_read_and_each_capture_once(store, clock, ctx):
    memories = memory_service(clock, store=store, reads_when=False)
    ids = []
    for day in range(20):  # one capture a day; the job runs on the 20th
        ids.append(memories.capture(ctx, f"Meeting {day} on Friday at 3", [], "api").id)
        clock.advance(DAY)
    extractor = Extractor(store, clock, lambda: ZoneInfo("UTC"))
    first = ExtractionJob(extractor, per_run=10).run(Budget(time.monotonic() + 60), "")
    second = ExtractionJob(extractor, per_run=10).run(Budget(time.monotonic() + 60), first.cursor)
    # Days 6-19 (Jan 7-20) are in the window; by Jan 21 only the Friday of Jan 23 is still to come, which the
    # captures of Jan 16 (a Friday: the next one) to Jan 20 name.
    assert (first.counts, first.complete) == ({"judged": 10, "none": 9, "anchored": 1}, False)
    assert (second.counts, second.complete) == ({"judged": 4, "anchored": 4}, True)
    anchored = [i for i in ids if any(isinstance(e.event, TimeAnchorSet) for e in store.read_stream(f"memory-{i}"))]
    assert anchored == ids[15:]
