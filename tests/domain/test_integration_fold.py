"""The integration's fold (domain/integrations.py): one pass over its stream, each event changing the maps of the
state being folded; a state the service holds (`run.held`) is never changed by a later fold from it."""

from second_brain.domain import integrations as i
from second_brain.domain.envelope import Envelope


def noted(events: list[object], first: int = 1) -> list[Envelope]:
    return [Envelope("integration-x", first + n, event, "owner", "personal-owner", "req", 1_000 + n)
            for n, event in enumerate(events)]


HISTORY = noted([
    i.IntegrationConnected("folder", "Notes", "personal-owner", (("path", "/notes"),)),
    i.MirrorIndexed("a.md", "m-a", "v1"),
    i.MirrorIndexed("b.md", "m-b", "v1"),
    i.MirrorIndexed("c.md", "m-c"),
    i.IntegrationSynced(3, 0, 0, True, versions=(("a.md", "v2"),)),
    i.MirrorDropped("b.md"),
    i.MirrorIndexed("b.md", "m-b2", "v3"),
    i.MirrorDropped("c.md"),
])


def test_the_fold_reads_the_stream_as_its_events_say():
    state = i.fold(HISTORY, "x")
    assert state.mirrors == {"a.md": "m-a", "b.md": "m-b2"}
    assert state.versions == {"a.md": "v2", "b.md": "v3"}
    assert state.dropped == {"b.md": 1, "c.md": 1}
    assert state.version == len(HISTORY) and state.complete and state.counts == (3, 0, 0)


def test_folding_more_leaves_the_state_it_started_from_as_it_was():
    held = i.fold(HISTORY[:5], "x")
    before = (dict(held.mirrors), dict(held.versions), dict(held.dropped), held.version)
    later = i.fold_more(held, HISTORY[5:])
    assert (held.mirrors, held.versions, held.dropped, held.version) == before
    assert later.mirrors == {"a.md": "m-a", "b.md": "m-b2"} and later.dropped == {"b.md": 1, "c.md": 1}
    again = i.fold_more(later, noted([i.MirrorIndexed("d.md", "m-d", "v1")], len(HISTORY) + 1))
    assert "d.md" not in later.mirrors and "d.md" not in later.versions
    assert again.mirrors["d.md"] == "m-d" and again.versions["d.md"] == "v1"
    assert i.fold_more(again, noted([i.IntegrationDisconnected(True)], len(HISTORY) + 2)).mirrors == {}
    assert again.mirrors["d.md"] == "m-d"
