"""The command side with an in-memory store: envelopes, scope, retries, time-zone labels."""

from dataclasses import replace
from zoneinfo import ZoneInfo

import pytest

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.memories.projects import ProjectService
from second_brain.app.memories.service import Context, MemoryService
from second_brain.domain.errors import ConcurrencyConflict, NotFound
from second_brain.domain.events import (
    MemoryAppended,
    MemoryCaptured,
    MemoryClassified,
    MemoryRecalled,
    StatusChanged,
)
from second_brain.domain.identity import Identity
from second_brain.ports.read_model import ReadModel
from tests.support.memories import FlakyStore, memory_service


def test_capture_appends_the_note_and_its_classification_in_full_envelopes(clock, ctx):
    memories = memory_service(clock)
    memory = memories.capture(ctx, "Pricing floor is $6k #work", ["Pricing"], "claude-desktop")
    assert (memory.id, memory.tags) == ("id-0", ("pricing", "work", "kind:semantic"))
    stored, classified = memories.store.read_stream("memory-id-0")
    assert stored.event == MemoryCaptured("Pricing floor is $6k", ("pricing", "work"), "claude-desktop",
                                          "personal-owner")
    assert classified.event == MemoryClassified(3, "semantic", "", False, "rules")
    assert (stored.actor, stored.workspace, stored.request_id, stored.at, stored.version) == (
        "owner", "personal-owner", "req-test", clock.now, 1)
    assert (classified.request_id, classified.version) == ("req-test", 2)


def test_append_labels_the_update_with_the_date_in_the_configured_time_zone(clock, ctx):
    memories = memory_service(clock, tz="America/Los_Angeles")  # 2026-01-01T00:00Z is still Dec 31 there
    memories.capture(ctx, "note", [], "api")
    memory = memories.append(ctx, " id-0 ", "more")
    assert memory.content == "note\n\n[Update Dec 31, 2025]: more"
    assert memories.store.read_stream("memory-id-0")[-1].event == MemoryAppended("more", "Dec 31, 2025")


def test_memories_outside_the_callers_workspaces_do_not_exist_for_them(clock, ctx):
    memories = memory_service(clock)
    memories.capture(ctx, "mine", [], "api")
    stranger = Context(Identity("bob", "Bob", "member", "personal-bob"), "req-2")
    with pytest.raises(NotFound, match="No entry found with ID: id-0"):
        memories.set_status(stranger, "id-0", "draft")
    with pytest.raises(NotFound):
        memories.load(stranger, "id-0")


def test_a_lost_race_is_retried_against_the_new_state(clock, ctx):
    memories = memory_service(clock, FlakyStore(conflicts=2))
    memories.capture(ctx, "note", [], "api")
    memories.set_status(ctx, "id-0", "canonical")
    assert [e.event for e in memories.store.read_stream("memory-id-0")][-1] == StatusChanged("canonical")


def test_a_race_lost_every_time_surfaces_as_a_conflict(clock, ctx):
    memories = memory_service(clock, FlakyStore(conflicts=99))
    memories.capture(ctx, "note", [], "api")
    with pytest.raises(ConcurrencyConflict):
        memories.set_status(ctx, "id-0", "canonical")


def test_a_forgotten_memory_is_gone_and_its_content_erased(clock, ctx):
    memories = memory_service(clock)
    memories.capture(ctx, "secret plan", [], "api")
    memories.forget(ctx, "id-0")
    with pytest.raises(NotFound):
        memories.forget(ctx, "id-0")
    assert all("secret" not in repr(e.event) for e in memories.store.read_all())


def test_a_no_op_update_appends_nothing(clock, ctx):
    memories = memory_service(clock)
    memories.capture(ctx, "same", ["a"], "api")
    head = memories.store.head()
    memories.update(ctx, "id-0", "same", None)
    assert memories.store.head() == head


class RecordingStore(InMemoryEventStore):
    """Remembers the streams of each append."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[set[str]] = []

    def append(self, events):
        self.batches.append({e.stream_id for e in events})
        return super().append(events)


class NoProjectsYet(ReadModel):
    def projects(self, workspaces, include_archived=True):
        return []


def test_an_unknown_project_is_created_in_the_captures_own_append(clock, ctx):
    store = RecordingStore()
    projects = ProjectService(store, NoProjectsYet(), clock)
    memories = MemoryService(store, clock, ZoneInfo("UTC"), new_id=lambda: "m1", projects=projects)
    memories.capture(ctx, "Kick-off for atlas", ["project:atlas"], "api", projects=["atlas"])
    claims = [{s for s in batch if not s.startswith("content-")} for batch in store.batches]  # the text's claim
    assert claims == [{"memory-m1", "project-personal-owner-atlas"}]
    created = store.read_stream("project-personal-owner-atlas")[0].event
    assert (created.slug, created.name) == ("atlas", "atlas")
    memories.new_id = lambda: "m2"
    memories.capture(ctx, "Atlas review", [], "api", projects=["atlas"])  # it exists now: nothing more
    assert {s for s in store.batches[-1] if not s.startswith("content-")} == {"memory-m2"}


class CountingStore(InMemoryEventStore):
    """Records every append; a stream named in `rival` is moved on by another writer just before an append."""

    def __init__(self) -> None:
        super().__init__()
        self.appends: list[list[str]] = []
        self.rival: str | None = None

    def append(self, events):
        self.appends.append([e.stream_id for e in events])
        if self.rival in {e.stream_id for e in events}:
            rival, self.rival = self.rival, None
            head = self.read_stream(rival)[-1]
            super().append([replace(head, version=head.version + 1, event=StatusChanged("draft"))])
        return super().append(events)


def test_the_recalls_of_one_answer_are_counted_in_one_append(clock, ctx):
    """Under Mangum the count is written inside the request: one transaction for the whole answer, not one per
    memory; a memory another writer moved on meanwhile loses its count, the others keep theirs."""
    store = CountingStore()
    memories = memory_service(clock, store)
    ids = [memories.capture(ctx, f"note {n}", [], "api").id for n in range(4)]
    store.appends.clear()
    assert memories.record_recalls(ctx, ids + ids[:1]) == 4
    assert store.appends == [[f"memory-{key}" for key in ids]]
    assert memories.record_recalls(ctx, ids) == 0 and len(store.appends) == 1  # once a day

    clock.advance(86_400_000)
    store.appends.clear()
    store.rival = "memory-id-2"
    assert memories.record_recalls(ctx, ids) == 3
    counted = [key for key in ids if MemoryRecalled("2026-01-02") in
               (e.event for e in memories.store.read_stream(f"memory-{key}"))]
    assert counted == ["id-0", "id-1", "id-3"]
