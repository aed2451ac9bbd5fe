"""In-memory event store, for unit tests and as the simplest reading of the contract."""

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ...domain.events import Envelope, Erased, erased_by
from ...ports.event_store import EVERY, EventMatch, Scanned, Touch
from .checks import begun_after, check_expected_versions, dense_scan_back, touched

Subscriber = Callable[[list[Envelope]], None]


class InMemoryEventStore:
    def __init__(self, subscribers: Sequence[Subscriber] = ()) -> None:
        self._log: list[Envelope] = []
        self._streams: dict[str, list[int]] = {}
        self._lock = threading.Lock()
        self._subscribers = list(subscribers)

    def append(self, events: Sequence[Envelope]) -> list[Envelope]:
        with self._lock:
            current = {s: len(self._streams.get(s, [])) for s in {e.stream_id for e in events}}
            check_expected_versions(events, current)
            stored = []
            for event in events:
                stored_event = replace(event, position=len(self._log) + 1)
                self._log.append(stored_event)
                self._streams.setdefault(event.stream_id, []).append(len(self._log) - 1)
                stored.append(stored_event)
                if erased := erased_by(event.event, event.version):
                    self._erase(event.stream_id, set(erased))
        for subscriber in self._subscribers:
            subscriber(stored)
        return stored

    def _erase(self, stream_id: str, versions: set[int]) -> None:
        for index in self._streams[stream_id]:
            event = self._log[index]
            if event.version in versions and not isinstance(event.event, Erased):
                self._log[index] = replace(event, event=Erased(event.type))

    def read_stream(self, stream_id: str) -> list[Envelope]:
        with self._lock:
            return [self._log[i] for i in self._streams.get(stream_id, [])]

    def read_streams(self, stream_ids: Sequence[str],
                     after: Mapping[str, int] | None = None) -> dict[str, list[Envelope]]:
        after = after or {}
        with self._lock:
            return {s: [self._log[i] for i in self._streams.get(s, []) if self._log[i].version > after.get(s, 0)]
                    for s in stream_ids}

    def read_all(self, after: int = 0, limit: int = 1000) -> list[Envelope]:
        with self._lock:
            return self._log[after : after + limit]

    def read_page(self, before: int, after: int = 0, limit: int = 1000,
                  match: EventMatch = EVERY) -> list[Envelope]:
        with self._lock:
            window = self._log[max(0, after) : max(0, min(before - 1, len(self._log)))]
            return list(itertools.islice((e for e in reversed(window) if match.admits(e)), max(0, limit)))

    def cut(self, at: int) -> int:
        with self._lock:
            return next((e.position - 1 for e in self._log if e.at > at), len(self._log))

    def last_by(self, at: int) -> int:
        with self._lock:
            return max((e.position for e in self._log if e.at <= at), default=0)

    def begun_after(self, prefix: str, after: int, at: int) -> list[str]:
        return begun_after(self._touches(prefix, after), at)

    def touches(self, prefix: str, after: int, at: int) -> list[Touch]:
        return touched(self._touches(prefix, after), at)

    def _touches(self, prefix: str, after: int) -> list[Touch]:
        with self._lock:
            return [Touch(e.stream_id, e.version, e.type, e.at, e.position)
                    for e in self._log[max(0, after):] if e.stream_id.startswith(prefix)]

    def scan_back(self, before: int, after: int, budget: int, match: EventMatch = EVERY) -> Scanned:
        return dense_scan_back(self, before, after, budget, match)

    def settled(self) -> int:
        return self.head()

    def head(self) -> int:
        return len(self._log)

