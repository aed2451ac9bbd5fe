"""The one fold, event type by event type: what each memory event does to a memory that exists, to one that does
not (an erased capture being replayed), and without an envelope (a decision folding its own events)."""

from dataclasses import replace

import pytest

from second_brain.domain.events import (
    Envelope,
    Erased,
    MemoryClassified,
    MemoryRolledUp,
    StalenessJudged,
    StatusChanged,
    TagsChanged,
)
from second_brain.domain.memory import Memory, evolve

from .event_samples import MEMORY, SAMPLES

BASE = Memory(id="m1", exists=True, content="Kettle", tags=("home", "status:deprecated", "stale:as-of", "rolled-up"),
              source="api", workspace="personal-owner", actor="owner", created_at=10, updated_at=20, importance=2,
              recall_count=1, last_recalled="2026-01-01", use_count=1, last_used="2026-01-01", contradiction_wins=1,
              contradiction_losses=1, when_at=99, when_kind="wake", version=5, content_version=2, position=3)
NOT_YET = Memory(id="m1", version=5)
AT = 1_000
COUNTED = {"version": 6}  # bookkeeping: the event is counted, nothing else moves

# What each memory event changes on BASE, given an envelope at AT by m-ann at position 42.
ON_BASE: dict[str, dict[str, object]] = {
    "MemoryCaptured": {"content": "Secret text", "tags": ("home", "kitchen"), "actor": "m-ann", "created_at": AT,
                       "updated_at": AT, "content_version": 1, "position": 42},
    "MemoryImported": {"content": "Secret text", "tags": ("old",), "source": "import", "actor": "m-ann",
                       "created_at": 1, "updated_at": 2, "importance": 4, "recall_count": 3, "use_count": 7,
                       "contradiction_wins": 5, "contradiction_losses": 6, "content_version": 1, "position": 42},
    "MemoryAppended": {"content": "Kettle\n\n[Update 2026-01-01]: more words", "updated_at": AT, "content_version": 3},
    "MemoryRevised": {"content": "new text here", "updated_at": AT, "content_version": 3},
    "TagsChanged": {"tags": ("a", "b"), "updated_at": AT, "content_version": 3},  # no longer deprecated: re-embed
    "StatusChanged": {"tags": ("home", "stale:as-of", "rolled-up", "status:draft"), "updated_at": AT,
                      "content_version": 3},
    "MemoryRecalled": {"recall_count": 2, "last_recalled": "2026-01-02"},
    "MemoryOpened": {"use_count": 2, "last_used": "2026-01-03"},
    "TimeAnchorSet": {"when_at": 1_800_000_000_000, "when_kind": "due"},
    "TimeAnchorCleared": {"when_at": None},
    "MemoryClassified": {"tags": ("home", "status:deprecated", "stale:as-of", "rolled-up", "kind:semantic"),
                         "importance": 4},
    "DuplicateSuspected": {},
    "ContradictionWon": {"contradiction_wins": 2},
    "ContradictionLost": {"contradiction_losses": 2},
    "MemoryShared": {"workspace": "company", "updated_at": AT},
    "MemoryUnshared": {"updated_at": AT},  # BASE is already in the author's personal workspace
    "StalenessJudged": {"tags": ("home", "status:deprecated", "rolled-up", "stale:as-of")},
    "MemoryRolledUp": {},  # already rolled up
    "MemoryReleased": {"tags": ("home", "status:deprecated", "stale:as-of")},
    "DigestComposed": {},
    "MemoryDrawnInto": {},
    "ReminderPushed": {},
    "ConflictSuspected": {},
    "ConflictAnswered": {},
    "WordsErased": {},  # the store erases what it names; the state stays
    "MirrorSynced": {"mirror": "i-1", "origin": "file:///vault/a.md", "mirror_hash": "h1"},
}
MEMORY_EVENTS = [name for name, (stream, _) in SAMPLES.items() if stream == MEMORY]


def at(event: object) -> Envelope:
    return Envelope(MEMORY, 6, event, "m-ann", "company", "req", AT, 42)


def test_every_memory_event_is_pinned():
    assert sorted(ON_BASE) == sorted(set(MEMORY_EVENTS) - {"MemoryForgotten"})


@pytest.mark.parametrize("type_name", sorted(ON_BASE))
def test_each_event_changes_exactly_these_fields_of_a_memory(type_name):
    event = SAMPLES[type_name][1]
    assert evolve(BASE, event, at(event)) == replace(BASE, **{**COUNTED, **ON_BASE[type_name]})


@pytest.mark.parametrize("type_name", sorted(ON_BASE))
def test_without_an_envelope_the_time_author_and_position_stay_as_they_were(type_name):
    event = SAMPLES[type_name][1]
    changes = {k: v for k, v in ON_BASE[type_name].items() if k not in ("updated_at", "position", "actor")}
    if type_name == "MemoryCaptured":
        changes |= {"created_at": BASE.updated_at, "actor": "", "position": 0}
    if type_name == "MemoryImported":
        changes |= {"updated_at": 2, "actor": "", "position": 0}
    assert evolve(BASE, event) == replace(BASE, **{**COUNTED, **changes})


@pytest.mark.parametrize("type_name", [n for n in MEMORY_EVENTS
                                       if n not in ("MemoryCaptured", "MemoryImported", "MemoryForgotten")])
def test_on_a_memory_that_does_not_exist_an_event_is_only_counted(type_name):
    event = SAMPLES[type_name][1]
    assert evolve(NOT_YET, event, at(event)) == replace(NOT_YET, version=6)


def test_a_capture_or_an_import_makes_the_memory_exist():
    captured = SAMPLES["MemoryCaptured"][1]
    assert evolve(NOT_YET, captured, at(captured)) == replace(
        NOT_YET, exists=True, content="Secret text", tags=("home", "kitchen"), source="api",
        workspace="personal-owner", actor="m-ann", created_at=AT, updated_at=AT, version=6, content_version=1,
        position=42)
    imported = SAMPLES["MemoryImported"][1]
    assert evolve(NOT_YET, imported, at(imported)) == replace(
        NOT_YET, exists=True, content="Secret text", tags=("old",), source="import", workspace="personal-owner",
        actor="m-ann", created_at=1, updated_at=2, importance=4, recall_count=3, use_count=7, contradiction_wins=5,
        contradiction_losses=6, version=6, content_version=1, position=42)


def test_a_forget_leaves_only_the_id_the_count_and_that_it_was_forgotten():
    forgotten = SAMPLES["MemoryForgotten"][1]
    for state in (BASE, NOT_YET):
        assert evolve(state, forgotten, at(forgotten)) == Memory(id="m1", forgotten=True, version=6)


def test_an_erased_event_is_only_counted():
    assert evolve(BASE, Erased("MemoryAppended")) == replace(BASE, version=6)
    assert evolve(NOT_YET, Erased("MemoryCaptured")) == replace(NOT_YET, version=6)


def test_the_shapes_of_an_event_that_change_something_else():
    plain = replace(BASE, tags=("home",))
    assert evolve(plain, TagsChanged(("a",))) == replace(plain, tags=("a",), version=6)  # nothing to re-embed
    assert evolve(plain, StatusChanged("deprecated")) == replace(plain, tags=("home", "status:deprecated"), version=6)
    assert evolve(plain, MemoryRolledUp("d1")) == replace(plain, tags=("home", "rolled-up"), version=6)
    assert evolve(plain, MemoryClassified(5, "episodic", "volatile", True, "rules")) == replace(
        plain, tags=("home", "kind:episodic", "volatility:volatile", "status:canonical"), importance=5, version=6)
    assert evolve(plain, StalenessJudged(False, "")) == replace(plain, version=6)


def test_an_event_the_fold_does_not_know_is_refused_on_a_memory_that_exists():
    with pytest.raises(TypeError, match="unknown event"):
        evolve(BASE, object())
    assert evolve(NOT_YET, object()) == replace(NOT_YET, version=6)
