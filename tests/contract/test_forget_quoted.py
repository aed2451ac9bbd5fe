"""Forget finds the words another memory's history quoted, on every event store: a model's reason on the other
side of a contradiction, and a note merged into another memory and split out again with "keep both". After the
forget, nothing in the log (read back, and as stored: the database file, the DynamoDB items) holds those words,
and the other memory is as it was."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from second_brain.app.memories.conflicts import ConflictReview
from second_brain.domain.capture import Verdict
from second_brain.domain.events import Erased, WordsErased, memory_stream
from second_brain.domain.memory import Memory, evolve
from tests.contract.test_conflict_review import Scripted
from tests.support.memories import memory_service
from tests.support.stores import event_store

SECRET = "QUASAR-77"  # the forgotten note's own words, quoted elsewhere


@pytest.fixture(params=["memory", "sqlite", "dynamodb"])
def store(request, tmp_path) -> Iterator[object]:
    with event_store(request.param, tmp_path) as store:
        yield store


def stored_text(store) -> str:
    """Everything the store holds, as stored: the file's bytes, the table's items, the in-memory log."""
    if hasattr(store, "db"):
        store.db.purge_wal()
        return Path(store.db.path).read_bytes().decode("latin-1")
    if hasattr(store, "client"):
        return repr(store.client.scan(TableName=store.table)["Items"])
    return repr(store.read_all(0, 10_000))


def every_past_state(store, memory_id: str) -> list[Memory]:
    """The memory as an `as_of` read shows it after each event of its stream."""
    states, state = [], Memory(memory_id)
    for envelope in store.read_stream(memory_stream(memory_id)):
        state = evolve(state, envelope.event, envelope)
        states.append(state)
    return states


def test_forgetting_the_winner_of_a_contradiction_erases_the_reason_quoted_on_the_loser(store, clock, ctx):
    memories = memory_service(clock, store=store)
    triage = memories.triage = Scripted()
    loser = memories.capture(ctx, "The Falcon go-live date is May 5", [], "api").id
    clock.advance(1000)
    note = f"Falcon go-live moved to June 9, see {SECRET}"
    triage.verdicts[note] = Verdict("contradiction", loser, 0.93, f"'{note}' replaces the May 5 date",
                                    match_content="The Falcon go-live date is May 5")
    winner = memories.capture(ctx, note, [], "api").id
    unrelated = memories.capture(ctx, "Ana waters the plants on Fridays", [], "api").id
    before = [e.event for e in store.read_stream(memory_stream(unrelated))]
    assert SECRET in stored_text(store)

    memories.forget(ctx, winner)

    assert SECRET not in stored_text(store)
    assert SECRET not in repr(store.read_all(0, 10_000))
    kept = memories.load(ctx, loser)[0]
    assert kept.content == "The Falcon go-live date is May 5" and kept.deprecated  # its own state is untouched
    events = [e.event for e in store.read_stream(memory_stream(loser))]
    assert isinstance(events[-1], WordsErased) and events[-1].memory_id == winner
    assert any(isinstance(e, Erased) and e.original_type == "ContradictionLost" for e in events)
    assert [e.event for e in store.read_stream(memory_stream(unrelated))] == before


def test_forgetting_the_loser_erases_what_the_winner_quoted_of_it(store, clock, ctx):
    memories = memory_service(clock, store=store)
    triage = memories.triage = Scripted()
    older = memories.capture(ctx, f"Standup is at 9:00 in room {SECRET}", [], "api").id
    clock.advance(1000)
    note = "Standup is at 9:30 now"
    triage.verdicts[note] = Verdict("contradiction", older, 0.93, f"9:30 replaces 9:00 in room {SECRET}",
                                    match_content=f"Standup is at 9:00 in room {SECRET}")
    newer = memories.capture(ctx, note, [], "api").id

    memories.forget(ctx, older)

    assert SECRET not in stored_text(store)
    assert memories.load(ctx, newer)[0].content == note


def test_a_note_merged_in_and_split_out_again_takes_its_words_with_it_when_forgotten(store, clock, ctx):
    memories = memory_service(clock, store=store)
    triage = memories.triage = Scripted()
    review = ConflictReview(store, clock, memories.store_note)
    older = memories.capture(ctx, "The agency floor is $6k", [], "api").id
    clock.advance(1000)
    note = f"The agency floor is $6k, approved by {SECRET}"
    triage.verdicts[note] = Verdict("merge", older, 0.95, "overlap",
                                    f"The agency floor is $6k. Approved by {SECRET}.",
                                    match_content="The agency floor is $6k")
    merged = memories.capture(ctx, note, ["finance"], "api")
    assert SECRET in memories.load(ctx, older)[0].content
    clock.advance(1000)
    split = review.answer(ctx, merged.undo, "both")["stored"]
    assert memories.load(ctx, split)[0].content == note

    memories.forget(ctx, split)

    assert SECRET not in stored_text(store)
    assert not any(SECRET in s.content or "finance" in s.tags for s in every_past_state(store, older))
    restored = memories.load(ctx, older)[0]
    assert restored.content == "The agency floor is $6k" and "finance" not in restored.tags
