"""Walking the brain for a nightly job: every memory in the order it was first written, read from the log (the
same on every backend), resumable from a log position."""

from collections.abc import Iterator
from typing import NamedTuple

from ...domain.events import memory_of, memory_stream
from ...domain.memory import Memory, fold
from ...ports.event_store import EventStore, settled_pages
from ..handling import Context
from ..handling import system as system_context

PAGE = 1000


class FirstEvent(NamedTuple):
    """Where a memory begins: its id, and the log position of its first event."""

    memory_id: str
    position: int


def first_events(store: EventStore, after: int) -> Iterator[FirstEvent]:
    """Each memory's first event after log position `after`, in log order, up to where the log is settled (a
    cursor kept past it could step over an append in flight)."""
    for batch in settled_pages(store, after, PAGE):
        for envelope in batch:
            if envelope.version == 1 and (memory_id := memory_of(envelope.stream_id)) is not None:
                yield FirstEvent(memory_id, envelope.position)


def load(store: EventStore, memory_id: str) -> Memory:
    """A memory as its whole stream makes it (the log, not a projection: what every check trusts)."""
    return fold(store.read_stream(memory_stream(memory_id)), Memory(memory_id))


def system(workspace: str, job: str, at: int) -> Context:
    """The actor a job's effects are recorded under, in the workspace they land in."""
    return system_context(workspace, f"maintenance-{job}-{at}")
