"""The capture decision, given/when/then: given the memory a note matched, when the triage's verdict is X,
then these events go to these streams."""

import hashlib

from second_brain.domain import events as ev
from second_brain.domain.capture import STORE, Change, Verdict, content_stream, decide_capture, exact_repeat
from second_brain.domain.links import LinkCreated, edge_stream
from second_brain.domain.memory import Memory

WS = "personal-owner"
NOTE = ev.MemoryCaptured("The launch moved to Friday", ("launch",), "api", WS)


def matched(**fields) -> Memory:
    """A stored memory, three events into its stream."""
    base = dict(id="old", exists=True, content="The launch is on Thursday", tags=("launch", "kind:episodic"),
                source="api", workspace=WS, importance=2, version=3)
    return Memory(**(base | fields))


def streams(decision) -> dict[str, Change]:
    return {change.stream_id: change for change in decision.changes}


def types(change: Change) -> list[str]:
    return [type(e).__name__ for e in change.events]


def test_new_note_is_stored_classified_and_anchored():
    decision = decide_capture("new", NOTE, (1_800_000_000_000, "event"), STORE, None)
    [own] = decision.changes
    assert (own.stream_id, own.version, own.workspace) == ("memory-new", 0, WS)
    assert types(own) == ["MemoryCaptured", "MemoryClassified", "TimeAnchorSet"]
    assert decision.memory_id == "new" and "kind:semantic" in decision.tags  # "moved to Friday": no event words


def test_a_verdict_whose_memory_is_gone_stores_the_note_plainly():
    decision = decide_capture("new", NOTE, None, Verdict("contradiction", "old", 0.9, "changed"), None)
    assert decision.verdict == STORE and list(streams(decision)) == ["memory-new"]


def test_block_appends_nothing_and_names_the_original():
    decision = decide_capture("new", NOTE, None, Verdict("block", "old", 0.99), matched())
    assert decision.changes == () and decision.memory_id == "old"
    assert decision.tags == ("launch", "kind:episodic")


def test_flag_stores_the_note_tagged_and_records_the_suspicion():
    decision = decide_capture("new", NOTE, None, Verdict("flag", "old", 0.931234), matched())
    [own] = decision.changes
    assert "duplicate-candidate" in own.events[0].tags
    assert ev.DuplicateSuspected("old", 0.9312) in own.events


def test_contradiction_retires_the_old_memory_and_links_the_new_one_over_it():
    decision = decide_capture("new", NOTE, None, Verdict("contradiction", "old", 0.8, "date changed"), matched())
    by_stream = streams(decision)
    assert "contradiction-resolved" in decision.tags
    assert ev.ContradictionWon("old", "date changed") in by_stream["memory-new"].events
    old = by_stream["memory-old"]
    assert old.version == 3  # decided against the state it was judged on
    assert old.events == (ev.StatusChanged("deprecated"), ev.ContradictionLost("new", "date changed"))
    edge = by_stream[edge_stream("new", "old", "supersedes")]
    assert edge.events == (LinkCreated("new", "old", "supersedes", 1.0, "system"),)


def test_a_canonical_memory_wins_the_contradiction_and_the_note_is_a_draft():
    decision = decide_capture("new", NOTE, None, Verdict("contradiction", "old", 0.8, "date changed"),
                              matched(tags=("launch", "status:canonical")))
    assert decision.verdict.action == "keep_canonical"
    assert "status:draft" in decision.tags
    assert streams(decision)["memory-old"].events == (
        ev.ContradictionWon("new", "Conflicts with a confirmed canonical memory."),)


def test_a_transcript_never_retires_a_memory_from_another_source():
    note = ev.MemoryCaptured("Actually the launch is Friday", (), "claude-code", WS)
    decision = decide_capture("new", note, None, Verdict("contradiction", "old", 0.8, "x"), matched())
    assert decision.verdict.action == "keep_canonical"
    assert not any(isinstance(e, ev.StatusChanged) for e in streams(decision)["memory-old"].events)


def test_a_transcript_may_contradict_its_own_earlier_notes():
    note = ev.MemoryCaptured("Actually the launch is Friday", (), "claude-code", WS)
    decision = decide_capture("new", note, None, Verdict("contradiction", "old", 0.8, "x"),
                              matched(source="claude-code"))
    assert decision.verdict.action == "contradiction"


def test_merge_rewrites_the_matched_memory_and_keeps_its_tags():
    verdict = Verdict("merge", "old", 0.95, "same launch", "The launch moved from Thursday to Friday #ops")
    decision = decide_capture("new", NOTE, (1_800_000_000_000, "due"), verdict, matched())
    [change] = decision.changes
    assert (change.stream_id, change.version, decision.memory_id) == ("memory-old", 3, "old")
    assert change.events[0] == ev.MemoryRevised("The launch moved from Thursday to Friday", "merged", NOTE.content)
    assert types(change) == ["MemoryRevised", "TagsChanged", "MemoryClassified", "TimeAnchorSet"]
    assert {"launch", "ops"} <= set(decision.tags)


def test_replace_takes_the_new_text():
    decision = decide_capture("new", NOTE, None, Verdict("replace", "old", 0.95, "newer"), matched())
    assert decision.changes[0].events[0] == ev.MemoryRevised("The launch moved to Friday", "replaced")


def test_important_or_canonical_memories_are_never_rewritten_only_flagged():
    for protected in (matched(importance=4), matched(tags=("status:canonical",))):
        for action in ("merge", "replace"):
            decision = decide_capture("new", NOTE, None, Verdict(action, "old", 0.95, "x", "merged"), protected)
            assert decision.verdict == Verdict("flag", "old", 0.95)
            assert list(streams(decision)) == ["memory-new"]


def test_a_transcript_never_rewrites_another_source():
    note = ev.MemoryCaptured("We went with Friday", (), "codex-session", WS)
    decision = decide_capture("new", note, None, Verdict("replace", "old", 0.95, "x"), matched())
    assert decision.verdict.action == "flag"


def test_one_text_has_one_stream_per_workspace_whatever_its_case_and_spacing():
    stream = content_stream(WS, "The launch is on  Thursday")
    assert stream.startswith(f"content-{WS}-") and stream == content_stream(WS, "the launch is on\nthursday")
    assert stream != content_stream("team-x", "The launch is on Thursday")
    assert stream != content_stream(WS, "The launch is on Friday")


def test_with_the_brains_secret_a_texts_stream_tells_nothing_without_it():
    """A copy of the log cannot be searched for a guessed text: the stream's id is keyed by the brain's secret."""
    text = "The launch is on Thursday"
    plain = hashlib.sha256(text.lower().encode()).hexdigest()[:40]
    keyed = content_stream(WS, text, b"k" * 32)
    assert keyed == content_stream(WS, "the launch is on\nthursday", b"k" * 32)  # still one stream per text
    assert keyed != content_stream(WS, text) and keyed != content_stream(WS, text, b"j" * 32)
    assert plain not in keyed and content_stream(WS, text).endswith(plain)


def test_the_memory_that_claimed_a_text_blocks_it_while_it_still_holds_it():
    assert exact_repeat(matched(), "the launch is on thursday") == Verdict(
        "block", "old", 1.0, match_content="The launch is on Thursday")
    assert exact_repeat(matched(content="The launch is on Friday"), "The launch is on Thursday") is None
    assert exact_repeat(matched(exists=False), "The launch is on Thursday") is None
    assert exact_repeat(matched(tags=("launch", "status:deprecated")), "The launch is on Thursday") is None
