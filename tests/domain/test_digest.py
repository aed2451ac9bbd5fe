"""Compression and patterns as pure functions: the roll-up's fold, who may be rolled up, the extractive digest
keeping every fact, and the pattern rules."""

from dataclasses import replace
from functools import reduce
from zoneinfo import ZoneInfo

from second_brain.domain import digest as d
from second_brain.domain import patterns as p
from second_brain.domain.events import MemoryCaptured, MemoryRolledUp, TagsChanged
from second_brain.domain.memory import Memory, digest_eligible, evolve

DAY = 24 * 3600 * 1000
UTC = ZoneInfo("UTC")
SCOPE = d.Scope("personal-owner", ("standup",), "standup")


def memory(content: str, at: int, **fields) -> Memory:
    return replace(Memory(f"m{at}", exists=True, content=content, tags=("standup",), workspace="personal-owner",
                          created_at=at, updated_at=at, version=1), **fields)


def test_a_roll_up_tags_the_memory_and_leaves_its_text_and_time_alone():
    state = reduce(evolve, [MemoryCaptured("Standup at 9:30", ("standup",), "api", "ws")], Memory("m1"))
    rolled = evolve(state, MemoryRolledUp("digest-1"))
    assert rolled.tags == ("standup", "rolled-up") and rolled.content == state.content
    assert (rolled.updated_at, rolled.version) == (state.updated_at, state.version + 1)
    assert evolve(rolled, MemoryRolledUp("digest-2")).tags == ("standup", "rolled-up")  # once
    assert not digest_eligible(rolled, 10 * DAY)
    # an update of the text brings it back (its digest no longer says what it says)
    assert "rolled-up" not in evolve(rolled, TagsChanged(("standup",))).tags


def test_only_eligible_memories_of_the_scope_are_sources_newest_first_at_most_30():
    now = 400 * DAY
    ok = [memory(f"note {i}", i * DAY) for i in range(1, 60)]
    protected = [memory("important", 1, importance=4), memory("won", 2, contradiction_wins=1),
                 memory("used", 3, recall_count=2), memory("fresh use", now - DAY, recall_count=1),
                 memory("digest", 4, tags=("standup", "synthesized")), memory("elsewhere", 5, workspace="company"),
                 memory("other tag", 6, tags=("retro",))]
    chosen = d.sources([*protected, *ok], SCOPE, now)
    assert [m.id for m in chosen] == [m.id for m in reversed(ok)][: d.MAX_SOURCES]
    old_use = memory("recalled once, long ago", 7, recall_count=1)
    assert d.sources([old_use], SCOPE, now) == [old_use]
    mine = d.Scope("company", ("standup",), "standup", actor="bob")
    assert d.sources([memory("x", 8, workspace="company", actor="ann")], mine, now) == []


def test_the_extractive_digest_keeps_every_number_date_and_name_and_drops_repeats():
    notes = [
        "Standup with Priya Raman at 9:30. Budget is $12,400 for Q3. Reviewed the deploy checklist.",
        "Standup with Priya Raman at 9:30. Reviewed the deploy checklist. Acme Corp signed on 2025-03-14.",
        "Élodie joined from Zürich; 3 tickets closed, 1.5 days left. Reviewed the deploy checklist.",
        "Moved the launch to March 21 after talking to Kenji. The v2.7 build passed 412 tests.",
        "Standup with Priya Raman at 10:15.",  # all but one word repeats an earlier sentence: its new fact keeps it
    ] * 3 + ["Nothing new today. Reviewed the deploy checklist again."]
    sources = [memory(text, i * DAY) for i, text in enumerate(notes, start=1)]
    text = d.extractive(sources, SCOPE, UTC)
    assert text.startswith('[Synthesized from 16 entries tagged "standup"]\n\n')
    for source in sources:
        for fact in d.facts(source.content):
            assert fact in text, fact
    for fact in ("Priya", "Raman", "9:30", "10:15", "12,400", "Q3", "Acme", "2025-03-14", "Élodie", "Zürich", "1.5",
                 "March", "21", "Kenji", "v2.7", "412"):
        assert fact in text
    assert text.count("Reviewed the deploy checklist.") == 1 and text.count("Priya Raman") == 2
    assert len(text) < sum(len(n) for n in notes) / 2
    lines = text.split("\n\n", 1)[1].splitlines()
    assert lines[0].startswith("- 1970-01-02: Standup with Priya Raman")  # oldest first, under its date
    assert d.missing_facts(text, sources) == set()
    assert d.missing_facts("Priya met Acme.", sources) >= {"Raman", "12,400", "Kenji"}


def test_the_digest_lands_with_its_sources_rolled_up_in_one_batch():
    sources = [memory(f"note {i}", i * DAY) for i in range(1, 11)]
    changes = d.roll_up("dg", "text", SCOPE, sources)
    captured = changes[0].events[0]
    assert (changes[0].stream_id, changes[0].version) == ("memory-dg", 0)
    assert (captured.tags, captured.source, captured.workspace) == (("synthesized", "standup"), "system",
                                                                   "personal-owner")
    assert [(c.stream_id, c.version, c.events) for c in changes[1:]] == [
        (f"memory-{m.id}", 1, (MemoryRolledUp("dg"),)) for m in sources]
    project = d.Scope("ws", ("project:atlas", "billing"), "atlas", project=True)
    assert project.tags == ("synthesized", "project:atlas")
    assert project.header(12) == '[Synthesized from 12 entries in project "atlas"]\n\n'


def member(mid: str, at: int, text: str = "x" * 100, tags=("infra",), **fields) -> p.Member:
    return p.Member(mid, text, tags, fields.pop("source", "api"), "ws", at, **fields)


def test_a_pattern_needs_close_memories_a_month_apart_and_scores_as_the_reference():
    seed = member("a", 0)
    assert p.pair_score(seed, member("b", 29 * DAY), 0.95) is None  # too soon: the same episode
    assert p.pair_score(seed, member("b", 40 * DAY), 0.79) is None  # not close enough
    shared = p.pair_score(seed, member("b", 40 * DAY), 0.9)
    apart = p.pair_score(seed, member("b", 40 * DAY, tags=("ops",)), 0.9)
    assert apart == shared * 1.25  # the same thing under different names
    assert p.pair_score(seed, member("b", 40 * DAY, tags=("work",)), 0.9) == shared * 1.25  # an axis tag is no topic
    found = p.cluster(seed, [(member("b", 40 * DAY), 0.9), (member("c", 5 * DAY), 0.99), (member("d", 90 * DAY), 0.85)])
    assert [m.id for m in found.members] == ["a", "b", "d"]
    assert not p.may_seed(member("s", 0, text="short")) and not p.may_seed(member("s", 0, source="system"))
    assert not p.may_seed(member("s", 0, tags=("auto-insight",))) and not p.may_seed(member("s", 0, source="notion"))


def test_novelty_and_the_text_a_pattern_gets_from_its_members():
    assert p.is_novel(frozenset("abc"), [frozenset("ad")])  # 1 of 2 shared
    assert not p.is_novel(frozenset("abc"), [frozenset("ab")])
    members = (member("a", 0, "Renewed the TLS certificate for the edge proxy by hand again. It took 2 hours."),
               member("b", 61 * DAY, "The edge proxy TLS certificate expired; renewed it manually with Sam."))
    text = p.describe(p.Cluster(members[0], members, 3.0), UTC)
    assert text.splitlines() == [
        "Recurring in 2 memories over 61 days (1970-01-01 to 1970-03-03), tagged infra:",
        "- 1970-01-01: Renewed the TLS certificate for the edge proxy by hand again.",
        "- 1970-03-03: The edge proxy TLS certificate expired; renewed it manually with Sam."]
