"""`as_of` is a parameter of the operations (issue 40, item 2), not a branch at each entry point: every read that
takes one answers what app/past/as_of.py answers for that moment, and the past is read, not used: reading it
counts no recall and no open."""

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.app.past import as_of as past
from tests.support.brains import sqlite_brain


@pytest.fixture
def brain(tmp_path, clock):
    brain = sqlite_brain(tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


@pytest.fixture
def history(brain, ctx, clock):
    """Two linked memories; then (a minute later) one rewritten and a third captured. The moment between."""
    boiler = ops.capture(brain, ctx, "The boiler is serviced every October", tags=["house"])["id"]
    roof = ops.capture(brain, ctx, "The roof was re-tiled in 2019", tags=["house"])["id"]
    ops.link(brain, ctx, boiler, roof)
    then = clock.now
    clock.advance(60_000)
    ops.update(brain, ctx, boiler, "The boiler is serviced every November")
    ops.capture(brain, ctx, "The gutters were cleared in spring", tags=["house"])
    clock.advance(60_000)
    brain.indexer.run_once(10)
    return boiler, roof, then


def uses(brain, ctx) -> dict[str, tuple[int, int]]:
    """Each memory's recalls and days opened (read without counting the read)."""
    return {e["id"]: (e["recall_count"], ops.get(brain, ctx, e["id"], defer=lambda *task: None)["use_count"])
            for e in ops.list_recent(brain, ctx, 10)}


def test_each_read_given_as_of_answers_as_the_past_does(brain, ctx, history):
    boiler, roof, then = history
    moment = str(then)
    assert ops.list_recent(brain, ctx, 10, as_of=moment) == past.list_recent(brain, ctx, 10, moment)
    assert [e["id"] for e in ops.list_recent(brain, ctx, 10, as_of=moment, tag="house")] == [roof, boiler]
    assert ops.get(brain, ctx, boiler, as_of=moment, diff=True) == past.entry(brain, ctx, boiler, moment, True)
    assert ops.get(brain, ctx, boiler, as_of=moment)["content"] == "The boiler is serviced every October"
    assert ops.connections(brain, ctx, boiler, as_of=moment) == past.connections(brain, ctx, boiler, None, moment)
    shown = ops.export(brain, ctx, as_of=moment)
    assert shown["as_of"] == then and [e["id"] for e in shown["entries"]] == [boiler, roof]
    answer = ops.recall(brain, ctx, "when is the boiler serviced", 5, as_of=moment)
    assert answer == past.recall(brain, ctx, "when is the boiler serviced", 5, as_of=moment)
    assert answer["as_of"] == then and answer["results"][0]["content"] == "The boiler is serviced every October"


def test_without_as_of_the_reads_answer_now(brain, ctx, history):
    boiler, _, _ = history
    assert ops.get(brain, ctx, boiler)["content"] == "The boiler is serviced every November"
    assert len(ops.list_recent(brain, ctx, 10)) == 3 and "as_of" not in ops.export(brain, ctx)
    assert "as_of" not in ops.recall(brain, ctx, "boiler", 5)


def test_reading_the_past_counts_no_recall_and_no_open(brain, ctx, history):
    boiler, _, then = history
    before = uses(brain, ctx)
    ops.recall(brain, ctx, "boiler serviced", 5, as_of=str(then), insight=True)
    ops.get(brain, ctx, boiler, as_of=str(then))
    ops.list_recent(brain, ctx, 10, as_of=str(then))
    assert uses(brain, ctx) == before
    deferred: list[tuple] = []
    ops.recall(brain, ctx, "boiler serviced", 5, defer=lambda *task: deferred.append(task))
    ops.get(brain, ctx, boiler, defer=lambda *task: deferred.append(task))
    assert len(deferred) == 2 and uses(brain, ctx) == before  # live reads count, once their caller has answered
    for task, *args in deferred:
        task(*args)
    assert uses(brain, ctx)[boiler] != before[boiler]


def test_a_bad_as_of_is_refused_by_every_read(brain, ctx, history):
    boiler, _, _ = history
    for read in (lambda: ops.list_recent(brain, ctx, 10, as_of="yesterday-ish"),
                 lambda: ops.get(brain, ctx, boiler, as_of="yesterday-ish"),
                 lambda: ops.connections(brain, ctx, boiler, as_of="yesterday-ish"),
                 lambda: ops.export(brain, ctx, as_of="yesterday-ish"),
                 lambda: ops.recall(brain, ctx, "boiler", as_of="yesterday-ish")):
        with pytest.raises(Exception) as refused:
            read()
        assert "as_of" in refused.value.message
