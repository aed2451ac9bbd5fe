"""What every event store shares, whatever its backend: the checks before it writes, and `changes` from events."""

from collections.abc import Mapping, Sequence
from itertools import groupby

from ...domain.errors import ConcurrencyConflict
from ...domain.events import Envelope
from ...ports.event_store import EVERY, EventMatch, EventStore, Scanned, Touch


def expected_versions(events: Sequence[Envelope]) -> dict[str, int]:
    """Per stream, the version the stream must be at for this batch to apply (its first new version - 1).

    Within a batch, each stream's versions must be contiguous and increasing.
    """
    expected: dict[str, int] = {}
    ordered = sorted(enumerate(events), key=lambda pair: (pair[1].stream_id, pair[0]))
    for stream_id, group in groupby(ordered, key=lambda pair: pair[1].stream_id):
        versions = [event.version for _, event in group]
        if versions != list(range(versions[0], versions[0] + len(versions))) or versions[0] < 1:
            raise ValueError(f"versions for {stream_id} must be contiguous and start at 1 or more: {versions}")
        expected[stream_id] = versions[0] - 1
    return expected


def check_expected_versions(events: Sequence[Envelope], current: Mapping[str, int]) -> None:
    """Raise ConcurrencyConflict unless every stream is exactly at the version the batch expects."""
    for stream_id, version in expected_versions(events).items():
        if current.get(stream_id, 0) != version:
            raise ConcurrencyConflict(
                f"stream {stream_id} is at version {current.get(stream_id, 0)}, expected {version}",
                stream_id=stream_id,
            )


def dense_scan_back(store: EventStore, before: int, after: int, budget: int, match: EventMatch = EVERY) -> Scanned:
    """`EventStore.scan_back` where positions are gap-free (one writer sets them): a stretch of positions is a
    stretch of events, read with one bounded `read_page`."""
    before = min(before, store.head() + 1)
    low = max(after, before - 1 - max(0, budget))
    if before - 1 <= low:
        return Scanned([], before, 0)
    return Scanned(store.read_page(before, low, before - 1 - low, match), low + 1, before - 1 - low)


def begun_after(touches: list[Touch], at: int) -> list[str]:
    """`EventStore.begun_after`, from every event above the position."""
    return sorted({t.stream_id for t in touches if t.version == 1 and t.at > at})


def touched(touches: list[Touch], at: int) -> list[Touch]:
    """`EventStore.touches`, from every event above the position."""
    later = set(begun_after(touches, at))
    return [t for t in touches if t.stream_id not in later]
