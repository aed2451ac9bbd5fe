"""Recall's history rules on their own (app/recall/history.py): what a near-copy of a replaced memory is, the rank it
takes below the memory that replaced it, and what each result of a page names as superseding or conflicting."""

from dataclasses import dataclass

from second_brain.app.recall import history
from second_brain.domain.envelope import Envelope
from second_brain.domain.events import DuplicateSuspected, MemoryCaptured, MemoryRecalled, memory_stream
from second_brain.ports.read_model import EdgeRow, EntryRow, LinkedPair

DAY = 86_400_000
T0 = 1_800_000_000_000
RETIRED = ("status:deprecated",)


def row(key: str, content: str, day: int, tags: tuple[str, ...] = ()) -> EntryRow:
    return EntryRow(key, content, tags, "api", "ws", "owner", T0 + day * DAY, T0 + day * DAY)


# The example: "$8k" was replaced by "$10k", and a second note still says "$8k".
A = row("a", "The minimum we charge for enterprise deals is $8k", 0, RETIRED)
B = row("b", "Minimum charge for enterprise deals: $8k per year", 1)
C = row("c", "The minimum we charge for enterprise deals is now $10k", 2, ("contradiction-resolved",))
C_REPLACED_A = history.Replacement(C, A)


def pair(source: EntryRow, target: EntryRow, kind: str = "supersedes", provenance: str = "system") -> LinkedPair:
    return LinkedPair(EdgeRow(source.id, target.id, kind, 1.0, provenance, source.created_at), source, target)


def test_a_near_copy_still_says_the_replaced_value_about_the_same_thing_and_was_written_before():
    assert history.near_copy(B, C_REPLACED_A)
    assert not history.near_copy(row("p", "Enterprise deals start at a $10k minimum", 1), C_REPLACED_A)  # the new
    assert not history.near_copy(row("q", "The minimum we charge for enterprise deals is $8k or $10k", 1),
                                 C_REPLACED_A)  # holds the new value too
    assert not history.near_copy(row("r", "The used car we sold cost $8k", 1), C_REPLACED_A)  # another subject
    assert not history.near_copy(row("s", "Minimum charge for enterprise deals: $8k per year", 3),
                                 C_REPLACED_A)  # written after the change: maybe a change back, not a leftover
    assert not history.near_copy(row("t", B.content, 1, RETIRED), C_REPLACED_A)  # retired itself
    assert not history.near_copy(C, C_REPLACED_A) and not history.near_copy(A, C_REPLACED_A)


def test_a_changed_negation_makes_near_copies_of_the_side_that_lost():
    lost = row("a", "Maya is allergic to peanuts", 0, RETIRED)
    won = row("c", "Maya is not allergic to peanuts", 2)
    replaced = history.Replacement(won, lost)
    assert history.near_copy(row("b", "Maya is allergic to peanuts, keep them away", 1), replaced)
    assert not history.near_copy(row("d", "Maya is not allergic to peanuts at all", 1), replaced)


def test_only_a_replacement_still_standing_counts():
    assert history.replacements([pair(C, A)]) == [C_REPLACED_A]
    revived = row("a", A.content, 0)  # a person took the retirement back: the capture's edge is history
    assert history.replacements([pair(C, revived)]) == []
    assert history.replacements([pair(C, revived, provenance="explicit")])  # a person's own link stands
    assert history.replacements([pair(C, A, kind="relates_to")]) == []


def test_a_near_copy_ranks_just_below_the_memory_that_replaced_it_and_each_names_the_other():
    rows = {r.id: r for r in (B, C, row("x", "Enterprise support hours are 9 to 5", 1))}
    conflicts: dict[str, set[str]] = {}
    ordered = history.below_winners([("b", 1.0), ("x", 0.9), ("c", 0.5)], rows, [C_REPLACED_A], conflicts)
    assert ordered == [("x", 0.9), ("c", 0.5), ("b", 0.5 * history.BELOW)]
    assert conflicts == {"b": {"c"}, "c": {"b"}}


def test_without_the_winner_among_the_candidates_nothing_moves():
    conflicts: dict[str, set[str]] = {}
    assert history.below_winners([("b", 1.0)], {"b": B}, [C_REPLACED_A], conflicts) == [("b", 1.0)]
    assert conflicts == {}


def test_a_page_names_what_superseded_a_result_and_only_current_memories_it_may_conflict_with():
    x, y, z = row("x", "x", 0), row("y", "y", 1), row("z", "z", 2)
    found = history.notes(
        page=["a", "b", "c", "x"],
        pairs=[pair(C, A), pair(x, y, kind="contradicts"), pair(x, z, kind="contradicts")],
        near={"b": {"c"}, "c": {"b"}},
        flags=[history.Flag("x", "c", "x@4"), history.Flag("b", "gone", "b@2")],
        current={"b", "c", "x", "y"},
    )
    assert found.superseded_by == {"a": "c"}
    assert found.conflicts_with == {"b": ["c"], "c": ["b", "x"], "x": ["y", "c"]}  # z and "gone" are not current
    assert found.review == {"x": ["x@4"], "c": ["x@4"]}  # the item that settles each flagged pair, on both sides


def test_the_newest_replacement_is_the_one_named():
    newer = row("d", "The minimum we charge for enterprise deals is now $12k", 3)
    later = LinkedPair(EdgeRow("d", "a", "supersedes", 1.0, "explicit", C.created_at + 5 * DAY), newer, A)
    assert history.notes(["a"], [pair(C, A), later], {}, [], set()).superseded_by == {"a": "d"}


@dataclass
class Log:
    streams: dict[str, list[Envelope]]
    read: list[str]

    def read_stream(self, stream_id: str) -> list[Envelope]:
        self.read.append(stream_id)
        return self.streams.get(stream_id, [])


@dataclass(frozen=True)
class Answered:  # the shape of a person's answer about a pair (ConflictAnswered): its type name and other_id
    other_id: str


Answered.__name__ = history.ANSWERED


def envelope(key: str, version: int, event: object, at: int) -> Envelope:
    return Envelope(memory_stream(key), version, event, "owner", "ws", "r", at)


def test_flags_are_read_from_the_streams_of_flagged_memories_only_until_answered_and_as_of_now():
    flagged = row("n", "Minimum charge for enterprise deals is $8k", 1, ("duplicate-candidate",))
    answered = row("m", "Minimum charge is $8k", 1, ("duplicate-candidate",))
    log = Log({
        memory_stream("n"): [envelope("n", 1, MemoryCaptured("…", (), "api", "ws"), T0),
                             envelope("n", 2, DuplicateSuspected("o", 0.93), T0),
                             envelope("n", 3, MemoryRecalled("2027-01-01"), T0 + DAY),
                             envelope("n", 4, DuplicateSuspected("later", 0.95), T0 + 3 * DAY)],
        memory_stream("m"): [envelope("m", 1, DuplicateSuspected("o", 0.91), T0),
                             envelope("m", 2, Answered("o"), T0 + DAY)],
    }, [])
    assert history.flagged(log, [B, flagged, answered], now=T0 + 2 * DAY) == [history.Flag("n", "o", "n@2")]
    assert log.read == [memory_stream("n"), memory_stream("m")]  # B carries no flag: its stream is not read
