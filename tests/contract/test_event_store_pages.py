"""read_page, on every event store: a window of log positions, newest first, narrowed by a match. Positions are
named by the event they belong to (`p[n]`, the n-th appended): gap-free on SQLite and in memory, time-ordered
with gaps on DynamoDB, whose store here takes its positions from the events' own times (a clock at 0)."""

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
    with event_store(request.param, tmp_path, Zero()) as store:
        yield store


class Zero:
    def now_ms(self) -> int:
        return 0


def spots(store) -> list[int]:
    """[0, position of the 1st event, ..., of the last, one past the last]."""
    found = [e.position for e in store.read_all(0, 100)]
    return [0, *found, found[-1] + 1]


def history(store) -> list[int]:
    """Events 1-8: two memories, an edge between them, a system tag change."""
    store.append([envelope("memory-a", 1, captured("a"), at=1_000)])
    store.append([envelope("memory-b", 1, captured("b"), at=2_000, actor="member-1")])
    store.append([envelope("memory-a", 2, StatusChanged("draft"), at=3_000)])
    store.append([envelope("link-relates_to-a-b", 1, LinkCreated("a", "b", "relates_to", 0.9, "explicit"), at=4_000)])
    store.append([envelope("memory-b", 2, TagsChanged(("x",)), at=5_000, actor="system")])
    store.append([envelope("memory-c", 1, captured("c"), at=6_000)])
    store.append([envelope("memory-a", 3, TagsChanged(("y",)), at=7_000)])
    store.append([envelope("config", 1, StatusChanged("n/a"), at=8_000)])
    return spots(store)


def positions(events) -> list[int]:
    return [e.position for e in events]


def test_a_page_is_a_window_of_positions_newest_first(store):
    p = history(store)
    assert positions(store.read_page(before=p[9])) == [p[n] for n in (8, 7, 6, 5, 4, 3, 2, 1)]
    assert positions(store.read_page(before=p[7], after=p[3])) == [p[6], p[5], p[4]]
    assert positions(store.read_page(before=p[9], limit=3)) == [p[8], p[7], p[6]]
    assert positions(store.read_page(before=10**15, after=p[6])) == [p[8], p[7]]
    assert store.read_page(before=p[4], after=p[3]) == [] and store.read_page(before=p[9], limit=0) == []
    assert store.read_page(before=p[1]) == []
    [page] = store.read_page(before=p[2])
    assert page == store.read_stream("memory-a")[0]  # the same envelope read_stream gives


def test_a_match_narrows_by_type_actor_time_and_stream(store):
    p = history(store)

    def page(*n: int) -> list[int]:
        return [p[i] for i in n]

    top = p[9]
    assert positions(store.read_page(top, match=EventMatch(types=("TagsChanged",)))) == page(7, 5)
    assert positions(store.read_page(top, match=EventMatch(types=("TagsChanged", "LinkCreated")))) == page(7, 5, 4)
    assert positions(store.read_page(top, match=EventMatch(actor="system"))) == page(5)
    assert positions(store.read_page(top, match=EventMatch(actor="member-1"))) == page(2)
    assert positions(store.read_page(top, match=EventMatch(since=3_000, until=6_000))) == page(6, 5, 4, 3)
    assert positions(store.read_page(top, match=EventMatch(streams=("memory-a",)))) == page(7, 3, 1)
    assert positions(store.read_page(top, match=EventMatch(streams=("memory-b", "config")))) == page(8, 5, 2)
    # A memory's own stream or any stream naming it: its edges.
    assert positions(store.read_page(top, match=EventMatch(streams=("memory-b",), naming="b"))) == page(5, 4, 2)
    both = EventMatch(types=("TagsChanged",), actor="owner", streams=("memory-a", "memory-b"))
    assert positions(store.read_page(top, match=both)) == page(7)
    assert positions(store.read_page(top, after=p[1], limit=1, match=EventMatch(streams=("memory-a",)))) == page(7)


def test_a_page_gives_erased_events_back_erased_under_their_own_type(store):
    store.append([envelope("memory-a", 1, captured("SECRET-77 text"), at=1_000)])
    store.append([envelope("memory-a", 2, MemoryForgotten(), at=2_000)])
    first, second = reversed(store.read_page(spots(store)[3],
                                             match=EventMatch(types=("MemoryCaptured", "MemoryForgotten"))))
    assert isinstance(first.event, Erased) and first.type == "MemoryCaptured"
    assert "SECRET-77" not in json.dumps(to_data(first.event))
    assert isinstance(second.event, MemoryForgotten)


def test_begun_after_and_touches_split_what_happened_after_a_position(store):
    p = history(store)
    assert store.begun_after("memory-", p[3], 5_500) == ["memory-c"]  # first event above 3, stored after 5,500
    touched = store.touches("memory-", p[3], 5_500)  # the others' events, without their data
    assert [(t.stream_id, t.version, t.type, t.at, t.position) for t in touched] == [
        ("memory-b", 2, "TagsChanged", 5_000, p[5]), ("memory-a", 3, "TagsChanged", 7_000, p[7])]
    assert store.begun_after("memory-", p[3], 6_000) == []  # memory-c began by then
    assert [t.position for t in store.touches("memory-", p[3], 6_000)] == [p[5], p[6], p[7]]
    assert store.begun_after("link-", 0, 0) == ["link-relates_to-a-b"] and store.touches("link-", 0, 0) == []
    assert [t.position for t in store.touches("link-", 0, 4_000)] == [p[4]]
    assert store.begun_after("memory-", p[8], 0) == [] and store.touches("memory-", p[8], 0) == []


def below(p: list[int], position: int) -> int:
    """How many of the events lie at or below a position."""
    return len([q for q in p[1:-1] if q <= position])


def test_cut_is_the_last_position_stored_by_a_moment(store):
    p = history(store)
    moments = (0, 999, 1_000, 4_500, 7_999, 8_000, 10**12)
    assert [below(p, store.cut(at)) for at in moments] == [0, 0, 1, 4, 7, 8, 8]


def test_cut_never_passes_an_event_stored_after_the_moment(store):
    """An event appended late (its time read long before its append) sits after later ones in the log: the cut
    stops before it, so whatever follows the cut holds every event stored after the moment."""
    base = 10**9
    times = [base, base + 1_000, base + 2_000, base + 500, base + 3_000, base + 60 * 60_000]
    for version, at in enumerate(times, start=1):
        store.append([envelope("memory-a", version, TagsChanged((f"t{version}",)), at=at)])
    p = spots(store)
    for moment in (base - 1, base + 700, base + 1_500, base + 5_000, base + 61 * 60_000):
        cut = below(p, store.cut(moment))
        assert all(t <= moment for t in times[:cut]), (moment, cut)
        assert all(t.at <= moment for t in store.touches("memory-", 0, 10**13)[:cut])
    # SQLite and memory know each event's time; DynamoDB's positions follow the append's clock, never behind
    # an event's own time, so a late event keeps later ones after it out of the cut too.
    assert below(p, store.cut(base + 700)) == 1
    assert below(p, store.cut(base + 61 * 60_000)) == 6
    assert below(p, store.cut(base + 5_000)) == 5


def _skew(store) -> int:
    return getattr(sys.modules[type(store).__module__], "CLOCK_SKEW_MS", 0)


def test_last_by_is_a_position_after_which_everything_is_later(store):
    p = history(store)
    skew = _skew(store)
    assert [below(p, store.last_by(at - skew)) for at in (0, 999, 1_000, 4_500, 8_000, 10**12)] == [0, 0, 1, 4, 8, 8]
