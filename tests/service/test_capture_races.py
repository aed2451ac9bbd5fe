"""Races on the command side, with the interleaving forced: an identical twin captured while the first note's
append is on its way, and appends that keep losing the race to other writers (issue 12, items 5 and 6)."""

import time

import pytest

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app import handling
from second_brain.domain.errors import ConcurrencyConflict
from second_brain.domain.events import MemoryAppended, MemoryCaptured
from tests.support.memories import FlakyStore, memory_service


class TwinStore(InMemoryEventStore):
    """Runs `twin()` once, just before the first append that stores a memory, as a racing request would."""

    def __init__(self) -> None:
        super().__init__()
        self.twin = lambda: None

    def append(self, events):
        twin, self.twin = self.twin, lambda: None
        twin()
        return super().append(events)


def stored_ids(store) -> list[str]:
    return [e.stream_id for e in store.read_all() if isinstance(e.event, MemoryCaptured)]


@pytest.fixture
def pauses(monkeypatch) -> list[float]:
    waited: list[float] = []
    monkeypatch.setattr(time, "sleep", waited.append)  # the retries' pauses, recorded instead of waited
    return waited


def test_an_identical_twin_that_decided_meanwhile_wins_and_the_first_is_blocked_as_its_repeat(clock, ctx, pauses):
    store = TwinStore()
    memories = memory_service(clock, store)
    twins = []
    store.twin = lambda: twins.append(memories.capture(ctx, "Boiler service booked for March 3rd", [], "api"))
    first = memories.capture(ctx, "boiler service  booked for march 3rd", [], "api")
    [twin] = twins
    assert twin.verdict.action == "store" and stored_ids(store) == [f"memory-{twin.id}"]
    assert (first.verdict.action, first.id, first.match_id, first.verdict.score) == ("block", twin.id, twin.id, 1.0)


def test_a_forgotten_or_rewritten_note_no_longer_blocks_its_text(clock, ctx):
    memories = memory_service(clock, InMemoryEventStore())
    memories.forget(ctx, memories.capture(ctx, "Locker code is 4411", [], "api").id)
    again = memories.capture(ctx, "Locker code is 4411", [], "api")
    assert again.verdict.action == "store"
    memories.update(ctx, again.id, "Locker code is 5522", None)
    assert memories.capture(ctx, "Locker code is 4411", [], "api").verdict.action == "store"
    assert memories.capture(ctx, "Locker code is 4411", [], "api").verdict.action == "block"


def test_an_append_outlasts_more_lost_races_than_it_used_to_allow_waiting_a_growing_random_pause(clock, ctx, pauses):
    memories = memory_service(clock, FlakyStore(conflicts=8))
    memories.capture(ctx, "Renovation log", [], "api")
    memories.append(ctx, "id-0", "tiles ordered")
    assert memories.store.read_stream("memory-id-0")[-1].event == MemoryAppended("tiles ordered", "Jan 1, 2026")
    assert len(pauses) == 8 and all(0 <= p <= handling.BACKOFF_BASE_S * 2**n for n, p in enumerate(pauses))


def test_a_race_lost_every_time_tells_the_client_nothing_of_streams_or_versions(clock, ctx, pauses):
    memories = memory_service(clock, FlakyStore(conflicts=99))
    memories.capture(ctx, "Renovation log", [], "api")
    with pytest.raises(ConcurrencyConflict) as raised:
        memories.append(ctx, "id-0", "tiles ordered")
    assert raised.value.message == "This changed while the request was being applied; try again"
    assert raised.value.details == {} and "version" in str(raised.value.__cause__)
    assert len(pauses) == handling.MAX_ATTEMPTS - 1
