"""read_page, on every event store: a window of log positions, newest first, narrowed by a match."""

import json
import sys
from collections.abc import Iterator

import pytest

from second_brain.domain.events import Erased, MemoryCaptured, MemoryForgotten, StatusChanged, TagsChanged, to_data
from second_brain.domain.links import LinkCreated
from second_brain.ports.event_store import EventMatch
from tests.conftest import envelope
from tests.support.stores import event_store


def captured(text: str = "hello") -> MemoryCaptured:
    return MemoryCaptured(text, ("work",), "api", "personal-owner")


@pytest.fixture(params=["memory", "sqlite", "dynamodb", "projecting"])
def store(request, tmp_path) -> Iterator[object]:
    with event_store(request.param, tmp_path) as store:
        yield store


def history(store) -> None:
    """Positions 1-8: two memories, an edge between them, a system tag change."""
    store.append([envelope("memory-a", 1, captured("a"), at=1_000)])
    store.append([envelope("memory-b", 1, captured("b"), at=2_000, actor="member-1")])
    store.append([envelope("memory-a", 2, StatusChanged("draft"), at=3_000)])
    store.append([envelope("link-relates_to-a-b", 1, LinkCreated("a", "b", "relates_to", 0.9, "explicit"), at=4_000)])
    store.append([envelope("memory-b", 2, TagsChanged(("x",)), at=5_000, actor="system")])
    store.append([envelope("memory-c", 1, captured("c"), at=6_000)])
    store.append([envelope("memory-a", 3, TagsChanged(("y",)), at=7_000)])
    store.append([envelope("config", 1, StatusChanged("n/a"), at=8_000)])


def positions(events) -> list[int]:
    return [e.position for e in events]


def test_a_page_is_a_window_of_positions_newest_first(store):
    history(store)
    assert positions(store.read_page(before=9)) == [8, 7, 6, 5, 4, 3, 2, 1]
    assert positions(store.read_page(before=7, after=3)) == [6, 5, 4]
    assert positions(store.read_page(before=9, limit=3)) == [8, 7, 6]
    assert positions(store.read_page(before=10**12, after=6)) == [8, 7]
    assert store.read_page(before=4, after=3) == [] and store.read_page(before=9, limit=0) == []
    assert store.read_page(before=1) == []
    [page] = store.read_page(before=2)
    assert page == store.read_stream("memory-a")[0]  # the same envelope read_stream gives


def test_a_match_narrows_by_type_actor_time_and_stream(store):
    history(store)
    assert positions(store.read_page(9, match=EventMatch(types=("TagsChanged",)))) == [7, 5]
    assert positions(store.read_page(9, match=EventMatch(types=("TagsChanged", "LinkCreated")))) == [7, 5, 4]
    assert positions(store.read_page(9, match=EventMatch(actor="system"))) == [5]
    assert positions(store.read_page(9, match=EventMatch(actor="member-1"))) == [2]
    assert positions(store.read_page(9, match=EventMatch(since=3_000, until=6_000))) == [6, 5, 4, 3]
    assert positions(store.read_page(9, match=EventMatch(streams=("memory-a",)))) == [7, 3, 1]
    assert positions(store.read_page(9, match=EventMatch(streams=("memory-b", "config")))) == [8, 5, 2]
    # A memory's own stream or any stream naming it: its edges.
    assert positions(store.read_page(9, match=EventMatch(streams=("memory-b",), naming="b"))) == [5, 4, 2]
    both = EventMatch(types=("TagsChanged",), actor="owner", streams=("memory-a", "memory-b"))
    assert positions(store.read_page(9, match=both)) == [7]
    assert positions(store.read_page(9, after=1, limit=1, match=EventMatch(streams=("memory-a",)))) == [7]


def test_a_page_gives_erased_events_back_erased_under_their_own_type(store):
    store.append([envelope("memory-a", 1, captured("SECRET-77 text"), at=1_000)])
    store.append([envelope("memory-a", 2, MemoryForgotten(), at=2_000)])
    first, second = reversed(store.read_page(3, match=EventMatch(types=("MemoryCaptured", "MemoryForgotten"))))
    assert isinstance(first.event, Erased) and first.type == "MemoryCaptured"
    assert "SECRET-77" not in json.dumps(to_data(first.event))
    assert isinstance(second.event, MemoryForgotten)


def test_begun_after_and_touches_split_what_happened_after_a_position(store):
    history(store)
    assert store.begun_after("memory-", 3, 5_500) == ["memory-c"]  # first event above 3, stored after 5,500
    touched = store.touches("memory-", 3, 5_500)  # the others' events, without their data
    assert [(t.stream_id, t.version, t.type, t.at, t.position) for t in touched] == [
        ("memory-b", 2, "TagsChanged", 5_000, 5), ("memory-a", 3, "TagsChanged", 7_000, 7)]
    assert store.begun_after("memory-", 3, 6_000) == []  # memory-c began by then
    assert [t.position for t in store.touches("memory-", 3, 6_000)] == [5, 6, 7]
    assert store.begun_after("link-", 0, 0) == ["link-relates_to-a-b"] and store.touches("link-", 0, 0) == []
    assert [t.position for t in store.touches("link-", 0, 4_000)] == [4]
    assert store.begun_after("memory-", 8, 0) == [] and store.touches("memory-", 8, 0) == []


def test_cut_is_the_last_position_stored_by_a_moment(store):
    history(store)
    skew = _skew(store)  # DynamoDB allows for writers that append late: its cut lags the moment by that much
    moments = (0, 999, 1_000, 4_500, 7_999, 8_000, 10**12)
    assert [store.cut(at + skew) for at in moments] == [0, 0, 1, 4, 7, 8, 8]


def test_cut_never_passes_an_event_stored_after_the_moment(store):
    """An event appended late (its time read long before its append) sits after later ones in the log: the cut
    stops before it, so whatever follows the cut holds every event stored after the moment."""
    base = 10**9
    times = [base, base + 1_000, base + 2_000, base + 500, base + 3_000, base + 60 * 60_000]
    for version, at in enumerate(times, start=1):
        store.append([envelope("memory-a", version, TagsChanged((f"t{version}",)), at=at)])
    for moment in (base - 1, base + 700, base + 1_500, base + 5_000, base + 61 * 60_000):
        cut = store.cut(moment)
        assert all(t <= moment for t in times[:cut]), (moment, cut)
        assert all(t.at <= moment for t in store.touches("memory-", 0, 10**13)[:cut])
    exact = not _skew(store)
    assert store.cut(base + 700) == (1 if exact else 0)
    assert store.cut(base + 61 * 60_000) == (6 if exact else 5)
    assert store.cut(base + 5_000) == (5 if exact else 0)


def _skew(store) -> int:
    return getattr(sys.modules[type(store).__module__], "CLOCK_SKEW_MS", 0)


def test_last_by_is_a_position_after_which_everything_is_later(store):
    history(store)
    skew = _skew(store)
    assert [store.last_by(at - skew) for at in (0, 999, 1_000, 4_500, 8_000, 10**12)] == [0, 0, 1, 4, 8, 8]
