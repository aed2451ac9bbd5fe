"""Recalls noted outside the log and folded into it hourly (issue 46, item 1): a recall appends nothing to the log,
the fold counts each memory once a day under whoever recalled it, at the time of the recall. The tally itself runs
on DynamoDB through moto and in memory."""

from collections.abc import Iterator
from zoneinfo import ZoneInfo

import boto3
import pytest
from moto import mock_aws

from second_brain.adapters.event_store.dynamodb import table_definition
from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.adapters.event_store.tally import DynamoDBRecallTally, InMemoryRecallTally
from second_brain.app.maintenance.runner import Budget
from second_brain.app.memories.jobs import RecallFold
from second_brain.app.memories.service import MemoryService
from second_brain.domain.errors import StoreUnavailable
from second_brain.domain.events import MemoryRecalled, memory_stream
from second_brain.ports.recall_tally import Tallied

DAY_MS = 24 * 3600 * 1000


@pytest.fixture(params=["memory", "dynamodb"])
def tally(request) -> Iterator[object]:
    if request.param == "memory":
        yield InMemoryRecallTally()
        return
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**table_definition("events"))
        yield DynamoDBRecallTally(client, "events")


def test_a_noted_recall_is_read_back_by_its_day_until_dropped(tally):
    first = Tallied("k1", "owner", "req-1", ("m1", "m2"), "2026-01-01", 1_767_225_600_000)
    tally.note(first)
    tally.note(Tallied("k2", "member-1", "req-2", ("m3",), "2026-01-02", 1_767_312_000_000))
    [found] = list(tally.due(["2026-01-01"]))
    assert found._replace(key="") == first._replace(key="")
    assert sorted(t.actor for t in tally.due(["2026-01-01", "2026-01-02"])) == ["member-1", "owner"]
    tally.drop(found)
    assert [t.memory_ids for t in tally.due(["2026-01-01", "2026-01-02"])] == [("m3",)]


def test_a_recall_appends_nothing_and_the_fold_counts_each_memory_once_a_day(tally, clock, ctx):
    store = InMemoryEventStore()
    memories = MemoryService(store, clock, ZoneInfo("UTC"), recall_tally=tally)
    kept = memories.capture(ctx, "The heron nests by the north pond", [], "api").id
    gone = memories.capture(ctx, "The osprey left in March", [], "api").id
    head = store.head()
    assert memories.record_recalls(ctx, [kept, gone]) == 2
    assert memories.record_recalls(ctx, [kept]) == 0  # this process counted it today already
    assert store.head() == head  # nothing in the log yet
    memories.counting._counted.clear()  # another process recalls it the same day
    memories.record_recalls(ctx, [kept])
    memories.forget(ctx, gone)

    recalled_at = clock.now_ms()
    clock.now += DAY_MS + 3_600_000
    fold = RecallFold(tally, memories, clock, lambda: ZoneInfo("UTC"))
    result = fold.run(Budget(float("inf")), "")
    assert result.counts == {"counted": 1, "recalls_folded": 2} and result.complete
    recalled = [e for e in store.read_stream(memory_stream(kept)) if isinstance(e.event, MemoryRecalled)]
    # the recall's day, under its actor; the event's time is the fold's (the log's times follow its order)
    assert [(e.event.day, e.actor, e.at) for e in recalled] == [("2026-01-01", ctx.identity.actor_id, clock.now)]
    assert recalled_at < clock.now
    assert memories.load(ctx, kept)[0].recall_count == 1
    assert fold.run(Budget(float("inf")), "").counts == {}  # folded notes are gone


def test_a_recall_whose_note_fails_is_answered_and_noted_by_the_next_one(clock, ctx):
    class Down(InMemoryRecallTally):
        def note(self, tallied: Tallied) -> None:
            raise StoreUnavailable("the recall tally failed: throttled")

    tally = Down()
    memories = MemoryService(InMemoryEventStore(), clock, ZoneInfo("UTC"), recall_tally=tally)
    kept = memories.capture(ctx, "The heron nests by the north pond", [], "api").id
    assert memories.record_recalls(ctx, [kept]) == 0  # no error: the recall's answer stands
    tally.note = lambda tallied: InMemoryRecallTally.note(tally, tallied)  # the table answers again
    assert memories.record_recalls(ctx, [kept]) == 1 and len(tally.noted) == 1
