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


def test_a_lost_race_while_undoing_a_merge_stores_the_note_once(clock, ctx):
    from second_brain.adapters.event_store.memory import InMemoryEventStore
    from second_brain.domain.errors import ConcurrencyConflict

    class LosesOnce(InMemoryEventStore):
        """The answer's first append loses a race, after the note was stored."""
        lost = False

        def append(self, events):
            if not self.lost and any(e.type == "ConflictAnswered" for e in events):
                self.lost = True
                raise ConcurrencyConflict("stream moved", stream_id=events[0].stream_id)
            return super().append(events)

    store = LosesOnce()
    memories = memory_service(clock, store=store)
    triage = memories.triage = Scripted()
    review = ConflictReview(store, clock, memories.store_note)
    older = memories.capture(ctx, "The floor is $6k", [], "api").id
    clock.advance(1000)  # another request (the requests here share one id: an append is told by its time too)
    note = "The floor is $6k, approved by finance"
    triage.verdicts[note] = Verdict("merge", older, 0.95, "overlap", "The floor is $6k. Approved by finance.",
                                    match_content="The floor is $6k")
    merged = memories.capture(ctx, note, [], "api")
    clock.advance(1000)
    answered = review.answer(ctx, merged.undo, "both")
    stored = [e for e in store.read_all() if e.type == "MemoryCaptured" and e.event.content == note]
    assert store.lost and len(stored) == 1 and answered["stored"] == stored[0].stream_id.removeprefix("memory-")
    assert memories.load(ctx, older)[0].content == "The floor is $6k"
