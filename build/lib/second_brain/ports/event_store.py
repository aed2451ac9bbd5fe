"""The event store port: an append-only log of per-stream events with a global order."""

from collections.abc import Sequence
from typing import Protocol

from ..domain.events import Envelope


class EventStore(Protocol):
    def append(self, events: Sequence[Envelope]) -> list[Envelope]:
        """Append atomically; each stream's first new version must follow its current one, else ConcurrencyConflict."""

    def read_stream(self, stream_id: str) -> list[Envelope]:
        """Every event of one stream, oldest first."""

    def read_all(self, after: int = 0, limit: int = 1000) -> list[Envelope]:
        """Events with a global position greater than `after`, in log order."""

    def head(self) -> int:
        """The global position of the last appended event (0 for an empty log)."""
