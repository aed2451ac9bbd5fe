"""Recall shows history honestly, on both backends, through the real capture path (issue 41, item 4): a memory that
won a contradiction ranks above a near-copy of what it replaced, which says it conflicts with the winner; a result a
newer memory superseded names it; a pair a capture flagged names each other; only memories the caller can read."""

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.app.handling import Context
from second_brain.domain.identity import Identity
from tests.support.brains import make_brain

MINUTE = 60_000
# The example: the minimum was $8k, a second note says so too, then a newer note changes it to $10k.
OLD = "The minimum we charge for enterprise deals is $8k"
COPY = "Minimum charge for enterprise deals: $8k per year"
NEW = "The minimum we charge for enterprise deals is now $10k"
QUERIES = ("what is the minimum we charge", "what is the minimum charge for enterprise deals")


@pytest.fixture(params=["sqlite", "opensearch"])
def brain(request, tmp_path, clock):
    brain = make_brain(request.param, request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


def capture(brain, ctx, clock, content, tags=()):
    clock.advance(MINUTE)
    outcome = brain.memories.capture(ctx, content, list(tags), "api")
    if brain.indexer is not None:
        brain.indexer.run_once(100)
    return outcome


def results(brain, ctx, query, **params):
    return {r["id"]: r for r in ops.recall(brain, ctx, query, 10, **params)["results"]}


def order(brain, ctx, query, **params):
    return [r["id"] for r in ops.recall(brain, ctx, query, 10, **params)["results"]]


def charged(brain, ctx, clock):
    old = capture(brain, ctx, clock, OLD).id
    copy = capture(brain, ctx, clock, COPY).id
    new = capture(brain, ctx, clock, NEW)
    assert (new.verdict.action, new.verdict.match_id) == ("contradiction", old)  # the rules retired OLD, not COPY
    return old, copy, new.id


def test_the_memory_that_won_ranks_above_a_near_copy_of_what_it_replaced(brain, ctx, clock):
    old, copy, new = charged(brain, ctx, clock)
    for query in QUERIES:
        ranked = order(brain, ctx, query)
        assert old not in ranked and ranked.index(new) < ranked.index(copy), query
        found = results(brain, ctx, query)
        assert found[copy]["conflicts_with"] == [new] and found[new]["conflicts_with"] == [copy]
        assert found[copy]["superseded_by"] is None and found[new]["superseded_by"] is None


def test_a_retirement_taken_back_leaves_no_replacement_behind(brain, ctx, clock):
    old, copy, new = charged(brain, ctx, clock)
    brain.memories.set_status(ctx, old, "draft")  # a person says the older note still holds
    found = results(brain, ctx, QUERIES[1])
    assert old in found and found[old]["superseded_by"] is None
    # nothing names the note that had replaced it; COPY restates OLD, and is flagged as its repeat
    assert all(new not in r["conflicts_with"] for r in found.values()) and found[new]["conflicts_with"] == []


def test_a_result_a_newer_memory_superseded_names_it(brain, ctx, clock):
    older = capture(brain, ctx, clock, "Quarterly planning happens in the Lisbon office").id
    newer = capture(brain, ctx, clock, "Offsite agenda drafted by Priya for the autumn").id
    brain.links.link(ctx, newer, older, "supersedes")
    found = results(brain, ctx, "quarterly planning Lisbon office", hops=1)
    assert found[older]["superseded_by"] == newer
    assert found[newer]["superseded_by"] is None and found[newer]["conflicts_with"] == []


def test_a_pair_a_capture_flagged_names_each_other(brain, ctx, clock):
    older = capture(brain, ctx, clock, "The staging database runs on port 5433 behind the bastion host").id
    newer = capture(brain, ctx, clock, "The staging database runs on port 5433 behind the bastion host today")
    assert (newer.verdict.action, newer.verdict.match_id) == ("flag", older)
    found = results(brain, ctx, "staging database port")
    assert found[older]["conflicts_with"] == [newer.id] and found[newer.id]["conflicts_with"] == [older]


def test_as_of_recall_tells_the_same_history_from_the_edges_as_they_were(brain, ctx, clock):
    old, copy, new = charged(brain, ctx, clock)
    now = ops.recall(brain, ctx, QUERIES[1], 10, as_of=clock.now)["results"]
    assert [r["id"] for r in now].index(new) < [r["id"] for r in now].index(copy)
    assert {r["id"]: r["conflicts_with"] for r in now}[copy] == [new]
    before = ops.recall(brain, ctx, QUERIES[1], 10, as_of=clock.now - MINUTE // 2)["results"]  # NEW not yet written
    assert {r["id"] for r in before} >= {old, copy} and all(r["conflicts_with"] == [] for r in before)


def test_history_reads_name_both_ends_retired_or_not_and_only_where_the_caller_reads(brain, ctx, clock):
    old, copy, new = charged(brain, ctx, clock)
    reads = brain.recall.read_model
    readable = ctx.identity.readable
    [pair] = reads.linked_pairs([old, copy], readable, ("supersedes", "contradicts"))
    assert (pair.source.id, pair.target.id, pair.edge.type, pair.edge.provenance) == (new, old, "supersedes", "system")
    assert "status:deprecated" in pair.target.tags
    assert {p.edge.type for p in reads.linked_pairs([new], readable, ("relates_to", "caused_by"))} <= {"relates_to"}
    assert reads.linked_pairs([new], readable, ()) == []
    assert reads.linked_pairs([new], ("personal-someone-else",), ("supersedes",)) == []
    stranger = Context(Identity("bob", "Bob", "member", "personal-bob"), "r")
    assert all(r["superseded_by"] is None for r in ops.recall(brain, stranger, QUERIES[0], 10)["results"])


def test_of_two_imported_notes_about_one_thing_the_newer_announcing_a_change_ranks_first(brain, ctx, clock):
    """Issue 61 item 2: notes that came in by import (no capture flagged anything) where the newer says the
    appointment moved: the newer is read first, and a newer note announcing nothing keeps the order it earned."""
    from second_brain.app.transfer import parse_payload

    now = clock.now_ms()
    notes = {
        "old": ("Booked Maya's dentist cleaning: Thu Dec 3 at 3:30pm with Dr. Alvarez at Smile Kids Dental", 40),
        "new": ("Smile Kids Dental called: Maya's cleaning moved to Thursday Dec 17 at 4:15pm", 9),
        "aside": ("Maya's friend Zoe has a dentist cleaning too, some time in January", 5),
    }
    ids = {name: f"0190a1b2-0000-7000-8000-00000000000{n}" for n, name in enumerate(notes)}
    payload = parse_payload({"version": 3, "entries": [
        {"id": ids[name], "content": content, "tags": [], "source": "api", "created_at": now - days * 86_400_000}
        for name, (content, days) in notes.items()]})
    brain.transfer.import_page(ctx, payload, 100, 0)
    if brain.indexer is not None:
        brain.indexer.run_once(100)
    ops.vectorize_pending(brain, ctx, 100)
    ranked = order(brain, ctx, "when is Maya's dentist cleaning with Dr. Alvarez")
    assert ranked.index(ids["new"]) < ranked.index(ids["old"])
