"""A memory service over an in-memory store, and a store that keeps losing races, for the service tests."""

from zoneinfo import ZoneInfo

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.memories.service import MemoryService
from second_brain.domain.errors import ConcurrencyConflict


class FlakyStore(InMemoryEventStore):
    """Another writer appends to a memory first, `conflicts` times, with a real store's detailed message."""

    def __init__(self, conflicts: int) -> None:
        super().__init__()
        self.conflicts = conflicts

    def append(self, events):
        if self.conflicts and events[0].version > 1:
            self.conflicts -= 1
            raise ConcurrencyConflict(f"stream {events[0].stream_id} is at version 9, expected 8",
                                      stream_id=events[0].stream_id)
        return super().append(events)


def memory_service(clock, store=None, tz: str = "UTC", reads_when: bool = True) -> MemoryService:
    """Ids id-0, id-1, … in capture order. `reads_when=False`: captures set no reminder from their words, as
    before reminders were read at capture (what the nightly extraction job is for)."""
    ids = iter(f"id-{n}" for n in range(100))
    return MemoryService(store or InMemoryEventStore(), clock, ZoneInfo(tz), new_id=lambda: next(ids),
                         reads_when=reads_when)
