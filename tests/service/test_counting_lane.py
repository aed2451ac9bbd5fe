"""A running brain writes its recall counts off the requests' path (app/memories/counting.py, `CountingLane`): an
answer's count waited for no request, and many answers' counts went to the database's one writer as one append each.
Here they are gathered, written together once no request is running, and none is lost when the brain stops."""

import threading
import time

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.app.handling import Context
from second_brain.app.memories.counting import CountingLane
from second_brain.app.operations.inputs import at_once
from second_brain.domain.events import MemoryRecalled
from tests.support.brains import sqlite_brain

TOPICS = ["sourdough starter feeding", "bicycle chain cleaning", "tax forms for the accountant",
          "garden tomato seedlings", "passport renewal appointment"]


@pytest.fixture
def brain(tmp_path, clock):
    brain = sqlite_brain(tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


def owner(brain) -> Context:
    return Context(brain.team.owner_identity(), "counting-lane")


def recalled(brain, memory_id: str) -> int:
    return sum(isinstance(e.event, MemoryRecalled) for e in brain.store.read_stream(f"memory-{memory_id}"))


def counted_appends(brain, monkeypatch) -> list[int]:
    """The number of recall counts in each append the brain makes from now on."""
    sizes: list[int] = []
    append = brain.store.append

    def watched(events):
        if any(isinstance(e.event, MemoryRecalled) for e in events):
            sizes.append(sum(isinstance(e.event, MemoryRecalled) for e in events))
        return append(events)

    monkeypatch.setattr(brain.store, "append", watched)
    return sizes


def running_lane(brain, gather: float, patience: float) -> CountingLane:
    brain.counts = CountingLane(brain.memories.counting, brain.foreground, gather=gather, patience=patience)
    brain.counts.start()
    return brain.counts


def capture_topics(brain) -> dict[str, str]:
    return {topic: ops.capture(brain, owner(brain), f"Notes on {topic}, written down to find again.")["id"]
            for topic in TOPICS}


def eventually(check, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def test_the_recalls_of_many_answers_are_counted_in_one_append_after_them(brain, monkeypatch):
    ids = capture_topics(brain)
    sizes = counted_appends(brain, monkeypatch)
    running_lane(brain, gather=1.0, patience=5.0)
    answered = [ops.recall(brain, owner(brain), topic, 1, defer=at_once)["results"][0]["id"]
                for topic in TOPICS]
    assert answered == list(ids.values())
    assert sizes == []  # nothing was written while answering
    assert eventually(lambda: all(recalled(brain, memory_id) == 1 for memory_id in ids.values()))
    assert sizes == [len(TOPICS)]  # one append for the five answers


def test_counts_wait_while_a_request_runs_and_are_written_once_none_does(brain):
    ids = capture_topics(brain)
    running_lane(brain, gather=0.05, patience=60.0)
    released = threading.Event()

    def a_long_request():
        with brain.foreground.request():
            released.wait(10)

    other = threading.Thread(target=a_long_request)
    other.start()
    try:
        first = ops.recall(brain, owner(brain), TOPICS[0], 1, defer=at_once)["results"][0]["id"]
        time.sleep(0.5)  # ten times the gathering: the lane waits for the request, not for the time
        assert recalled(brain, first) == 0
    finally:
        released.set()
        other.join()
    assert first == ids[TOPICS[0]]
    assert eventually(lambda: recalled(brain, first) == 1, seconds=5.0)


def test_a_stopped_brain_has_counted_every_recall_it_answered(tmp_path, clock):
    brain = sqlite_brain(tmp_path, clock, FakeEmbedder())
    ids = capture_topics(brain)
    running_lane(brain, gather=60.0, patience=60.0)
    for topic in TOPICS:
        ops.recall(brain, owner(brain), topic, 1, defer=at_once)
    brain.close()
    reopened = sqlite_brain(tmp_path, clock, FakeEmbedder())
    try:
        assert [recalled(reopened, memory_id) for memory_id in ids.values()] == [1] * len(TOPICS)
    finally:
        reopened.close()


def test_a_brain_that_is_not_running_counts_with_the_answer(brain):
    ids = capture_topics(brain)  # no lane started: a Lambda, the command line, a test's brain
    first = ops.recall(brain, owner(brain), TOPICS[1], 1, defer=at_once)["results"][0]["id"]
    assert first == ids[TOPICS[1]] and recalled(brain, first) == 1


def test_a_caller_that_cannot_answer_first_has_its_recalls_counted_with_the_answer(brain):
    """MCP's recall counts before it answers: an agent that recalls, then asks what changed, sees its recall."""
    ids = capture_topics(brain)
    running_lane(brain, gather=60.0, patience=60.0)
    first = ops.recall(brain, owner(brain), TOPICS[2], 1)["results"][0]["id"]
    assert first == ids[TOPICS[2]] and recalled(brain, first) == 1
