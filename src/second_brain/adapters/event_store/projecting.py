"""An event store that updates projections right after each append, in the writer's process.

For projections that live outside the store's transaction (OpenSearch): locally and in tests this gives
read-your-writes; on AWS the same projection runs in the projector Lambda off DynamoDB Streams instead.
A failed projection step is not an append failure (the events are stored): on AWS the stream projector
redoes it, and `brain replay --aws` rebuilds everything.
"""

import logging
from collections.abc import Sequence
from typing import Protocol

from ...domain.events import Envelope
from ...ports.event_store import EVERY, EventMatch, EventStore

log = logging.getLogger("second_brain.projecting")


class Projection(Protocol):
    def apply(self, events: Sequence[Envelope]) -> None: ...


class ProjectingEventStore:
    """`skip`: event types that are never projected inline (an append of only those is left to the projector)."""

    def __init__(self, inner: EventStore, projections: Sequence[Projection], skip: tuple[type, ...] = ()) -> None:
        self.inner = inner
        self.projections = list(projections)
        self.skip = skip

    def append(self, events: Sequence[Envelope]) -> list[Envelope]:
        stored = self.inner.append(events)
        if all(isinstance(e.event, self.skip) for e in stored):
            return stored
        for projection in self.projections:
            try:
                projection.apply(stored)
            except Exception:
                log.exception("projecting %d events failed; the stream projector will redo it", len(stored))
        return stored

    def read_page(self, before: int, after: int = 0, limit: int = 1000,
                  match: EventMatch = EVERY) -> list[Envelope]:
        return self.inner.read_page(before, after, limit, match)

    # read_stream, read_all, scan_back, cut, last_by, begun_after, touches, head, settled: the inner store's
    def __getattr__(self, name: str):
        return getattr(self.inner, name)
