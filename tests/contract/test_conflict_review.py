"""The review list reads the log the same way on every event store: the items capture made in the last 30 days,
minus those answered, and an answer's atomic append across the pair."""

from collections.abc import Iterator

import pytest

from second_brain.app.memories.conflicts import ConflictReview
from second_brain.domain.capture import Verdict
from second_brain.domain.errors import Outdated
from tests.support.memories import memory_service
from tests.support.stores import event_store

DAY = 24 * 3600 * 1000


class Scripted:
    """A triage that answers what the test says, for the note it names."""

    def __init__(self) -> None:
        self.verdicts: dict[str, Verdict] = {}

    def assess(self, content: str, workspace: str) -> Verdict:
        return self.verdicts.get(content, Verdict("store"))


@pytest.fixture(params=["memory", "sqlite", "dynamodb"])
def store(request, tmp_path) -> Iterator[object]:
    with event_store(request.param, tmp_path) as store:
        yield store


def test_items_are_listed_newest_first_and_leave_once_answered(store, clock, ctx):
    memories = memory_service(clock, store=store)
    triage = memories.triage = Scripted()
    review = ConflictReview(store, clock, memories.store_note)
    sync = memories.capture(ctx, "The sync is on Mondays", [], "api").id
    clock.advance(1000)
    triage.verdicts["The sync moved to Wednesdays"] = Verdict("contradiction", sync, 0.93, "changed",
                                                              match_content="The sync is on Mondays")
    moved = memories.capture(ctx, "The sync moved to Wednesdays", [], "api")
    lead = memories.capture(ctx, "Hannah leads support", [], "api").id
    clock.advance(1000)
    triage.verdicts["Oliver leads support"] = Verdict("doubt", lead, 0.9, "maybe another subject")
    oliver = memories.capture(ctx, "Oliver leads support", [], "api").id

    items, total = review.pending(ctx, 10)
    assert total == 2
    assert [(i["kind"], i["older"]["id"], i["newer"]["id"]) for i in items] == [
        ("possible_update", lead, oliver), ("retired", sync, moved.id)]
    assert items[1]["conflict"] == moved.undo

    review.answer(ctx, moved.undo, "both")
    assert [i["kind"] for i in review.pending(ctx, 10)[0]] == ["possible_update"]
    with pytest.raises(Outdated, match="answered already"):
        review.answer(ctx, moved.undo, "older")
    restored = memories.load(ctx, sync)[0]
    assert "status:deprecated" not in restored.tags


def test_only_the_last_thirty_days_are_listed(store, clock, ctx):
    memories = memory_service(clock, store=store)
    triage = memories.triage = Scripted()
    review = ConflictReview(store, clock, memories.store_note)
    old = memories.capture(ctx, "Hannah leads support", [], "api").id
    triage.verdicts["Oliver leads support"] = Verdict("doubt", old, 0.9, "maybe another subject")
    memories.capture(ctx, "Oliver leads support", [], "api")
    clock.advance(31 * DAY)
    assert review.pending(ctx, 10) == ([], 0)
