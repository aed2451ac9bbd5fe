"""Stored events: how an event whose shape changed since it was written is read (upcasting by schema_version)."""

import pytest

from second_brain.domain.events import REGISTRY, UPCASTERS, MemoryImported, from_data, to_data

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
