"""An event store that updates projections right after each append, in the writer's process.

For projections that live outside the store's transaction (OpenSearch): locally and in tests this gives
read-your-writes; on AWS the same projection runs in the projector Lambda off DynamoDB Streams instead.
A failed projection step is not an append failure (the events are stored): `catch_up` redoes it.
"""

import logging
from collections.abc import Sequence
from typing import Protocol

from ...domain.events import Envelope
from ...ports.event_store import EventStore

log = logging.getLogger("second_brain.projecting")


class Projection(Protocol):
    def apply(self, events: Sequence[Envelope]) -> None: ...


class ProjectingEventStore:
    def __init__(self, inner: EventStore, projections: Sequence[Projection]) -> None:
        self.inner = inner
        self.projections = list(projections)

    def append(self, events: Sequence[Envelope]) -> list[Envelope]:
        stored = self.inner.append(events)
        for projection in self.projections:
            try:
                projection.apply(stored)
            except Exception:
                log.exception("projecting %d events failed; catch_up will redo it", len(stored))
        return stored

    def catch_up(self, after: int = 0) -> int:
        """Re-apply every event after `after` to every projection (idempotent); the last position seen."""
        position = after
        while batch := self.inner.read_all(after=position, limit=1000):
            for projection in self.projections:
                projection.apply(batch)
            position = batch[-1].position
        return position

    def __getattr__(self, name: str):  # read_stream, read_all, head: the inner store's
        return getattr(self.inner, name)
