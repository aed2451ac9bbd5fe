"""Stored events: the registry of every stored type name, where each module registers its own, and how an event whose
shape changed since it was written is read (upcasting by schema_version)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import second_brain.domain
from second_brain.domain import shown
from second_brain.domain.errors import NewerFormat
from second_brain.domain.events import REGISTRY, UPCASTERS, MemoryImported, from_data, to_data

from .event_samples import SAMPLES

DOMAIN = Path(second_brain.domain.__file__).parent

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
    with pytest.raises(NewerFormat, match="MemoryImported of schema 3 was written by a newer version"):
        from_data("MemoryImported", {**SCHEMA_1, "use_count": 0}, schema_version=3)


def test_an_event_type_only_a_newer_build_knows_is_refused_in_words():
    with pytest.raises(NewerFormat, match="holds a MemoryPinned event, which this version of Second Brain does not"):
        from_data("MemoryPinned", {"pinned": True}, schema_version=1)
    assert from_data("MemoryPinned", {}, erased=True).original_type == "MemoryPinned"  # erased: nothing to read


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
    "CaptureAnswered", "IdempotencyExpired", "ContentClaimed", "ContentReleased", "MemoryShared", "MemoryUnshared",
    "StalenessJudged",
    "MemoryRolledUp", "MemoryReleased", "DigestComposed", "PatternProposed", "MemoryDrawnInto", "TeamCreated",
    "MembershipChanged", "ShareNoted", "PatternAnswered", "MemberAdded", "MemberTokenRotated",
    "MemberProfileChanged", "MemberSuspended", "MemberRemoved", "DefaultShareSet", "WorkspaceRenamed",
    "ClientRegistered", "SignInRequested", "SignInDecided", "CodeIssued", "CodeRedeemed", "TokenIssued",
    "TokenRevoked", "PairIssued", "GrantRevoked", "SigningKeyMade", "JobStarted", "JobFinished", "VapidKeyGenerated",
    "PushSubscribed", "PushUnsubscribed", "ReminderPushed", "ConflictSuspected", "ConflictAnswered",
    "IntegrationConnected", "IntegrationSynced", "MirrorIndexed", "MirrorDropped", "IntegrationDisconnected",
    "MirrorSynced", "IntegrationListed", "WordsErased",
)


def test_the_registry_holds_every_stored_type_and_nothing_else():
    assert sorted(REGISTRY) == sorted(STORED_TYPES) and len(STORED_TYPES) == 73


@pytest.mark.parametrize("type_name", STORED_TYPES)
def test_every_stored_type_name_reads_back_as_the_event_that_was_written(type_name):
    _, event = SAMPLES[type_name]
    stored = to_data(event)
    assert from_data(type_name, stored, schema_version=type(event).SCHEMA) == event
    assert REGISTRY[type_name] is type(event) and type(event).__name__ == type_name


def test_the_registry_is_complete_in_a_fresh_interpreter_whatever_is_imported_first():
    """A process that imports one domain module (a Lambda reading the log, say) still reads every stored type."""
    for first in ("second_brain.domain.envelope", "second_brain.domain.links", "second_brain.domain.text"):
        code = f"import {first}; from second_brain.domain.envelope import REGISTRY; print(','.join(sorted(REGISTRY)))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        assert out.strip().split(",") == sorted(STORED_TYPES), first


def domain_imports() -> dict[str, set[str]]:
    """Which domain modules each domain module imports (at any depth of its code, TYPE_CHECKING blocks included)."""
    found: dict[str, set[str]] = {}
    for path in DOMAIN.glob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        found[path.stem] = names
    return found


def test_the_envelope_and_the_rows_import_nothing_of_the_domain_so_event_modules_form_no_circle():
    imports = domain_imports()
    # errors is the one domain module the envelope may import: it imports nothing itself
    assert imports["envelope"] <= {"errors"} and imports["errors"] == set() and imports["shown"] == set()

    def reaches(start: str, seen: set[str]) -> set[str]:
        for name in imports.get(start, set()) - seen - {"__init__"}:
            seen.add(name)
            reaches(name, seen)
        return seen

    assert [m for m in imports if m != "__init__" and m in reaches(m, set())] == []


def test_every_row_of_how_events_show_belongs_to_a_stored_type():
    assert set(shown.NAMES) <= set(REGISTRY)
    assert all(REGISTRY[name] in shown.ROWS for name in shown.NAMES)
