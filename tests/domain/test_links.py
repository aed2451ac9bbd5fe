"""Edges: validation, canonical order, idempotent linking, unlinking."""

import pytest

from second_brain.domain.errors import InvalidInput
from second_brain.domain.links import (
    Edge,
    LinkCreated,
    LinkRemoved,
    decide_link,
    decide_unlink,
    endpoints,
    evolve_edge,
)


def test_relates_to_is_stored_in_canonical_order_and_directed_types_are_not():
    assert endpoints("b", "a", "relates_to") == ("a", "b")
    assert endpoints("b", "a", "supersedes") == ("b", "a")


@pytest.mark.parametrize(("a", "b", "kind", "message"), [
    ("a", "a", "relates_to", "Cannot link an entry to itself"),
    ("a", " ", "relates_to", "Missing or empty"),
    ("a", "b", "befriends", "Unknown link type"),
])
def test_bad_links_are_refused(a, b, kind, message):
    with pytest.raises(InvalidInput, match=message):
        endpoints(a, b, kind)


def test_linking_is_idempotent_and_keeps_the_stronger_edge():
    edge = Edge("a", "b", "relates_to")
    [created] = decide_link(edge, 0.8, "inferred")
    edge = evolve_edge(edge, created)
    assert decide_link(edge, 0.5, "inferred") == []
    assert decide_link(edge, 0.8, "inferred") == []
    assert decide_link(edge, 0.9, "inferred") == [LinkCreated("a", "b", "relates_to", 0.9, "inferred")]
    assert decide_link(edge, 0.5, "explicit") == [LinkCreated("a", "b", "relates_to", 0.8, "explicit")]
    # a link stated upstream (an integration's) outranks the brain's guess, never a person's
    assert decide_link(edge, 0.5, "system") == [LinkCreated("a", "b", "relates_to", 0.8, "system")]
    stated = evolve_edge(edge, LinkCreated("a", "b", "relates_to", 1.0, "explicit"))
    assert decide_link(stated, 1.0, "system") == [] and decide_link(stated, 1.0, "inferred") == []
    with pytest.raises(InvalidInput):
        decide_link(edge, 1.5, "explicit")


def test_unlinking_only_what_exists():
    edge = Edge("a", "b", "supersedes")
    assert decide_unlink(edge) == []
    edge = evolve_edge(edge, LinkCreated("a", "b", "supersedes", 1.0, "explicit"))
    assert decide_unlink(edge) == [LinkRemoved("a", "b", "supersedes")]
    assert evolve_edge(edge, LinkRemoved("a", "b", "supersedes")).exists is False
