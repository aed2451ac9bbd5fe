"""Stored events: how an event whose shape changed since it was written is read (upcasting by schema_version)."""

import subprocess
import sys

import pytest

from second_brain.domain.events import REGISTRY, UPCASTERS, MemoryImported, from_data, to_data

from .event_samples import SAMPLES

# A MemoryImported as builds before schema 2 stored it: no use_count.
SCHEMA_1 = {"content": "Restored note", "tags": ["old"], "source": "import", "workspace": "personal-owner",
            "created_at": 1_000, "updated_at": 2_000, "recall_count": 7, "importance_score": 4,
            "contradiction_wins": 2, "contradiction_losses": 1}


def test_an_event_stored_in_an_older_shape_is_read_in_the_newest():
    assert from_data("MemoryImported", SCHEMA_1, schema_version=1) == MemoryImported(
        "Restored note", ("old",), "import", "personal-owner", 1_000, 2_000, 7, 4, 2, 1, use_count=0)


def test_an_event_in_the_newest_shape_is_read_as_written():
    event = MemoryImported("Restored note", ("old",), "import", "personal-owner", 1_000, 2_000, 7, 4, 2, 1, 5)
    assert from_data("MemoryImported", to_data(event), schema_version=MemoryImported.SCHEMA) == event


def test_an_event_written_by_a_newer_build_is_refused_in_words():
    with pytest.raises(ValueError, match="MemoryImported of schema 3 was written by a newer version"):
        from_data("MemoryImported", {**SCHEMA_1, "use_count": 0}, schema_version=3)


@pytest.mark.parametrize("type_name", sorted(REGISTRY))
def test_every_step_between_an_events_first_schema_and_its_current_one_has_an_upcaster(type_name):
    assert [(type_name, schema) for schema in range(1, REGISTRY[type_name].SCHEMA)
            if (type_name, schema) not in UPCASTERS] == []


# Every type name the log may hold (REGISTRY's keys before each module registered its own events): a name that stops
# resolving is a log that can no longer be read.
STORED_TYPES = (
    "MemoryCaptured", "MemoryImported", "MemoryAppended", "MemoryRevised", "TagsChanged", "StatusChanged",
    "MemoryRecalled", "MemoryOpened", "TimeAnchorSet", "TimeAnchorCleared", "MemoryClassified", "DuplicateSuspected",
    "ContradictionWon", "ContradictionLost", "MemoryForgotten", "LinkCreated", "LinkRemoved", "ProjectCreated",
    "ProjectUpdated", "ProjectDeleted", "ProjectErased", "ProjectImported", "ConfigChanged", "ConfigReset",
    "CaptureAnswered", "IdempotencyExpired", "ContentClaimed", "MemoryShared", "MemoryUnshared", "StalenessJudged",
    "MemoryRolledUp", "MemoryReleased", "DigestComposed", "PatternProposed", "MemoryDrawnInto", "TeamCreated",
    "MembershipChanged", "ShareNoted", "PatternAnswered", "MemberAdded", "MemberTokenRotated",
    "MemberProfileChanged", "MemberSuspended", "MemberRemoved", "DefaultShareSet", "WorkspaceRenamed",
    "ClientRegistered", "SignInRequested", "SignInDecided", "CodeIssued", "CodeRedeemed", "TokenIssued",
    "TokenRevoked", "PairIssued", "GrantRevoked", "SigningKeyMade", "JobStarted", "JobFinished", "VapidKeyGenerated",
    "PushSubscribed", "PushUnsubscribed", "ReminderPushed",
)


def test_the_registry_holds_every_stored_type_and_nothing_else():
    assert sorted(REGISTRY) == sorted(STORED_TYPES) and len(STORED_TYPES) == 62


@pytest.mark.parametrize("type_name", STORED_TYPES)
def test_every_stored_type_name_reads_back_as_the_event_that_was_written(type_name):
    _, event = SAMPLES[type_name]
    stored = to_data(event)
    assert from_data(type_name, stored, schema_version=type(event).SCHEMA) == event
    assert REGISTRY[type_name] is type(event) and type(event).__name__ == type_name


def test_the_registry_is_complete_in_a_fresh_interpreter_whatever_is_imported_first():
    """A process that imports one domain module (a Lambda reading the log, say) still reads every stored type."""
    for first in ("second_brain.domain.events", "second_brain.domain.links", "second_brain.domain.text"):
        code = (f"import {first}; from second_brain.domain.events import REGISTRY; "
                f"print(','.join(sorted(REGISTRY)))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        assert out.strip().split(",") == sorted(STORED_TYPES), first
