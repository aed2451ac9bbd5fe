"""The event store port: an append-only log of per-stream events with a global order."""

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from ..domain.events import Envelope


@dataclass(frozen=True)
class EventMatch:
    """Which events a page keeps: every condition given must hold."""

    types: tuple[str, ...] = ()  # stored type names
    actor: str | None = None
    since: int | None = None  # unix ms, inclusive
    until: int | None = None  # unix ms, inclusive
    streams: tuple[str, ...] = ()  # these streams...
    naming: str = ""  # ...or any stream whose id contains this text (a memory id: the edge streams naming it)

    def admits(self, event: Envelope) -> bool:
        return ((not self.types or event.type in self.types)
                and (self.actor is None or event.actor == self.actor)
                and (self.since is None or event.at >= self.since)
                and (self.until is None or event.at <= self.until)
                and (not (self.streams or self.naming) or event.stream_id in self.streams
                     or bool(self.naming and self.naming in event.stream_id)))


EVERY = EventMatch()  # no condition: every event


class Touch(NamedTuple):
    """An event without its data: enough to tell which streams changed after a moment, and how (a tuple: a
    look back over a large brain reads hundreds of thousands)."""

    stream_id: str
    version: int
    type: str
    at: int
    position: int


class Scanned(NamedTuple):
    """A stretch of the log read newest first: what `match` admitted in it, and how far down it reached."""

    events: list[Envelope]  # admitted, newest first: every one with reached <= position < before
    reached: int  # every event at or above it (below `before`) was examined; the next stretch lies below it
    examined: int  # events read to get here


class EventStore(Protocol):
    def append(self, events: Sequence[Envelope]) -> list[Envelope]:
        """Append atomically; each stream's first new version must follow its current one, else ConcurrencyConflict."""

    def read_stream(self, stream_id: str) -> list[Envelope]:
        """Every event of one stream, oldest first."""

    def read_streams(self, stream_ids: Sequence[str],
                     after: Mapping[str, int] | None = None) -> dict[str, list[Envelope]]:
        """The events of each of these streams past version `after[stream]` (0: all), oldest first; a stream with
        none reads empty. Read together where the store can: on DynamoDB one batch read of each stream's next
        version tells which streams have any, and only those are queried (a new edge, a stream that has not
        moved since a projection wrote it: no query)."""

    def read_all(self, after: int = 0, limit: int = 1000) -> list[Envelope]:
        """Events with a global position greater than `after`, in log order."""

    def read_page(self, before: int, after: int = 0, limit: int = 1000,
                  match: EventMatch = EVERY) -> list[Envelope]:
        """Events with `after` < position < `before` that `match` admits, newest first, at most `limit`."""

    def scan_back(self, before: int, after: int, budget: int, match: EventMatch = EVERY) -> Scanned:
        """About `budget` events below `before` and above `after`, newest first, and those `match` admits: a read
        whose work is bounded whatever the filters (the log's positions need not be dense). `reached` is
        `after + 1` once the stretch got down to `after`."""

    def cut(self, at: int) -> int:
        """A log position up to which every event was stored at or before `at` (Unix ms); the highest the store
        can tell cheaply, so the events after it are the ones to examine."""

    def last_by(self, at: int) -> int:
        """A log position after which every event was stored later than `at` (Unix ms); the lowest the store can
        tell cheaply, so a walk back to `at` can start there."""

    def begun_after(self, prefix: str, after: int, at: int) -> list[str]:
        """The streams whose id begins with `prefix` and whose first event lies above position `after` and was
        stored after `at`."""

    def touches(self, prefix: str, after: int, at: int) -> list[Touch]:
        """The events above position `after` of the streams whose id begins with `prefix`, but for those begun
        after `at`: without their data, in log order."""

    def head(self) -> int:
        """The global position of the last appended event (0 for an empty log)."""

    def settled(self) -> int:
        """A position up to which the log can no longer change: no append in flight will land at or below it.
        A reader that keeps a cursor across runs (the nightly jobs) moves it no further, or it could step over an
        event committed after it read. The head, where one writer at a time sets positions."""


def settled_pages(store: EventStore, after: int, limit: int, settled: int | None = None) -> Iterator[list[Envelope]]:
    """Pages of the log after `after`, up to `settled` (`store.settled()` unless given): what a reader that keeps its
    cursor across runs may walk. A page shorter than `limit` is the last."""
    settled = store.settled() if settled is None else settled
    while after < settled and (page := [e for e in store.read_all(after, limit) if e.position <= settled]):
        yield page
        if len(page) < limit:
            return
        after = page[-1].position
