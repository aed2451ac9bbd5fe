"""Given events, when a command, then events: the memory aggregate is pure."""

from functools import reduce

import pytest

from second_brain.domain import commands as c
from second_brain.domain.errors import InvalidInput, NotFound
from second_brain.domain.events import (
    MemoryAppended,
    MemoryCaptured,
    MemoryForgotten,
    MemoryRevised,
    StatusChanged,
    TagsChanged,
)
from second_brain.domain.memory import Memory, decide, evolve


def given(*events: object) -> Memory:
    return reduce(evolve, events, Memory("m1"))


CAPTURED = MemoryCaptured("Pricing floor is $6k", ("work", "volatility:state"), "api", "personal-owner")


def test_capture_extracts_hashtags_and_folds_volatility_into_tags():
    events = decide(c.Capture("Ship it on Friday #Release #4821", ("Work", " idea "), "cli", "ws", "durable"), given())
    assert events == [
        MemoryCaptured("Ship it on Friday #4821", ("work", "idea", "release", "volatility:durable"), "cli", "ws")
    ]


def test_capture_defaults_source_to_api_and_keeps_whitespace():
    content = "line one\n\n```python\nprint('x')  # not a tag\n```"
    [event] = decide(c.Capture(content, (), "", "ws"), given())
    assert event.content == content and event.source == "api" and event.tags == ()


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_capture_rejects_empty_content(content):
    with pytest.raises(InvalidInput, match="content"):
        decide(c.Capture(content, (), "api", "ws"), given())


def test_capture_rejects_volatility_in_the_wrong_case():
    with pytest.raises(InvalidInput, match="volatility"):
        decide(c.Capture("x", (), "api", "ws", "Durable"), given())


def test_capture_onto_an_existing_stream_is_refused():
    with pytest.raises(InvalidInput):
        decide(c.Capture("again", (), "api", "ws"), given(CAPTURED))


def test_commands_on_a_missing_memory_are_not_found():
    for command in (c.Append("x", "Jan 1, 2026"), c.Update("x"), c.SetStatus("draft"), c.Forget()):
        with pytest.raises(NotFound, match="No entry found with ID: m1"):
            decide(command, given())


def test_append_keeps_the_original_under_a_dated_label_and_clears_staleness():
    state = given(CAPTURED, TagsChanged(("work", "stale:as-of")))
    events = decide(c.Append("Now $7k", "Feb 3, 2026"), state)
    assert events == [MemoryAppended("Now $7k", "Feb 3, 2026"), TagsChanged(("work",))]
    assert evolve(state, events[0]).content == "Pricing floor is $6k\n\n[Update Feb 3, 2026]: Now $7k"


def test_append_with_volatility_replaces_the_previous_one():
    events = decide(c.Append("x", "Feb 3, 2026", "volatile"), given(CAPTURED))
    assert events[1] == TagsChanged(("work", "volatility:volatile"))


def test_update_without_tags_merges_hashtags_and_rejudges_volatility():
    events = decide(c.Update("Floor is $7k #pricing"), given(CAPTURED))
    assert events == [MemoryRevised("Floor is $7k"), TagsChanged(("work", "pricing"))]


def test_update_with_tags_replaces_caller_tags_but_keeps_the_brains_own():
    state = given(CAPTURED, StatusChanged("canonical"), TagsChanged(("work", "status:canonical", "kind:semantic")))
    events = decide(c.Update("Pricing floor is $6k", ("finance",)), state)
    assert events == [TagsChanged(("status:canonical", "kind:semantic", "finance"))]


def test_update_to_the_same_content_and_tags_changes_nothing():
    assert decide(c.Update("Pricing floor is $6k", ("work",), "state"), given(CAPTURED)) == []


def test_status_replaces_the_previous_status_tag():
    state = given(CAPTURED, StatusChanged("draft"))
    [event] = decide(c.SetStatus("canonical"), state)
    assert evolve(state, event).tags == ("work", "volatility:state", "status:canonical")


def test_status_must_be_one_of_three():
    with pytest.raises(InvalidInput, match="canonical, draft, deprecated"):
        decide(c.SetStatus("archived"), given(CAPTURED))


def test_forget_emits_a_tombstone_and_leaves_nothing_in_state():
    [event] = decide(c.Forget(), given(CAPTURED))
    assert event == MemoryForgotten()
    state = evolve(given(CAPTURED), event)
    assert not state.exists and state.forgotten and state.content == ""


def test_change_tags_normalizes_and_is_a_no_op_when_equal():
    assert decide(c.ChangeTags(("WORK", "volatility:state")), given(CAPTURED)) == []
    assert decide(c.ChangeTags(("a",)), given(CAPTURED)) == [TagsChanged(("a",))]


def test_retag_adds_and_removes_topic_tags_and_keeps_the_brains_own():
    assert decide(c.Retag(("Billing", " q3 "), ("WORK",)), given(CAPTURED)) == [
        TagsChanged(("volatility:state", "billing", "q3"))]
    assert decide(c.Retag(("work",), ()), given(CAPTURED)) == []  # already there: nothing to record
    assert decide(c.Retag((), ("absent",)), given(CAPTURED)) == []
    assert decide(c.Retag(("work",), ("work",)), given(CAPTURED)) == []  # added and taken off: left as it is
    assert decide(c.Retag(("new",), ("new",)), given(CAPTURED)) == [TagsChanged(("work", "volatility:state", "new"))]
    for owned in ("status:canonical", "Kind:episodic", "volatility:durable", "rolled-up", "project:atlas"):
        with pytest.raises(InvalidInput, match="is set by the brain, not as a tag"):
            decide(c.Retag((owned,), ()), given(CAPTURED))
        with pytest.raises(InvalidInput, match="is set by the brain, not as a tag"):
            decide(c.Retag((), (owned,)), given(CAPTURED))
    with pytest.raises(InvalidInput, match="add or remove at least one tag"):
        decide(c.Retag((" ",), ()), given(CAPTURED))


def test_versions_count_events():
    assert given(CAPTURED, MemoryRevised("y"), StatusChanged("draft")).version == 3


def test_content_past_the_limit_is_refused_whole():
    from second_brain.domain.text import MAX_CONTENT_CHARS

    with pytest.raises(InvalidInput, match="too long"):
        decide(c.Capture("x" * (MAX_CONTENT_CHARS + 1), (), "api", "ws"), given())
    big = given(MemoryCaptured("y" * (MAX_CONTENT_CHARS - 10), (), "api", "ws"))
    with pytest.raises(InvalidInput, match="too long"):
        decide(c.Append("a long enough addition", "Jan 1, 2026"), big)


def test_time_anchors():
    from second_brain.domain.events import TimeAnchorCleared, TimeAnchorSet

    state = given(CAPTURED, TimeAnchorSet(5_000, "due"))
    assert (state.when_at, state.when_kind) == (5_000, "due")
    assert decide(c.SetTimeAnchor(9_000, "", now=6_000), state) == [TimeAnchorSet(9_000, "due")]  # kind kept
    with pytest.raises(InvalidInput, match="future"):
        decide(c.SetTimeAnchor(5_500, "", now=6_000), state)
    with pytest.raises(InvalidInput, match="when_kind"):
        decide(c.SetTimeAnchor(9_000, "deadline", now=6_000), state)
    assert decide(c.ClearTimeAnchor(), state) == [TimeAnchorCleared()]
    with pytest.raises(InvalidInput, match="no time anchor"):
        decide(c.ClearTimeAnchor(), evolve(state, TimeAnchorCleared()))
