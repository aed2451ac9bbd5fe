"""The import's rules over an embedded brain: what a version 3 payload is, 64-bit numbers, ids that are
already taken, and edges restored in the same call as the last entries."""

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app.memories.service import Context
from second_brain.app.transfer import parse_payload
from second_brain.bootstrap import build
from second_brain.domain.errors import InvalidInput, NotFound
from second_brain.domain.identity import Identity
from second_brain.settings import Settings

ENTRY = {"id": "note-1", "content": "The staging database runs Postgres 16", "created_at": 1_700_000_000_000}
OTHER = {"id": "note-2", "content": "The load test ran on a Tuesday", "created_at": 1_700_000_000_001}
EDGE = {"source_id": "note-1", "target_id": "note-2", "type": "relates_to"}
TOO_BIG, TOO_SMALL = 2**63, -(2**63) - 1


@pytest.fixture
def brain(tmp_path, clock):
    brain = build(Settings(data_dir=tmp_path / "brain"), clock=clock, embedder=FakeEmbedder())
    yield brain
    brain.close()


def restore(brain, ctx, data, **paging):
    return brain.transfer.import_page(ctx, parse_payload(data), **paging)


@pytest.mark.parametrize("data, where", [
    ({}, "entries: Field required"),
    ({"version": 3}, "entries: Field required"),
    ({"version": 2, "memories": [ENTRY]}, "version"),
    ({"version": 2, "entries": [ENTRY]}, "version"),
    ({"version": "3", "entries": [ENTRY]}, "version"),
])
def test_a_payload_that_is_not_version_3_is_refused_naming_what_is_wrong(data, where):
    with pytest.raises(InvalidInput, match="^Malformed import payload: ") as refused:
        parse_payload(data)
    assert where in refused.value.message


@pytest.mark.parametrize("entry, said", [
    ({**ENTRY, "id": "x y"}, "entries[0].id: an id is 1-128 letters, digits or _ . : - starting with a letter or "
                             "digit, with no spaces"),
    ({**ENTRY, "content": ""}, "entries[0].content: must not be empty"),
    ({**ENTRY, "importance_score": 9}, "entries[0].importance_score: Input should be less than or equal to 5"),
])
def test_a_refused_entry_is_said_in_words_not_as_a_pattern(entry, said):
    with pytest.raises(InvalidInput) as refused:
        parse_payload({"entries": [entry]})
    assert refused.value.message == f"Malformed import payload: {said}"
    assert "^" not in refused.value.message


def test_a_version_3_payload_may_leave_out_the_version_edges_and_projects():
    assert parse_payload({"entries": [ENTRY]}).entries[0].id == "note-1"
    assert parse_payload({"version": 3, "entries": [], "edges": [EDGE]}).edges[0].target_id == "note-2"


@pytest.mark.parametrize("data, where", [
    ({"entries": [{**ENTRY, "created_at": TOO_BIG}]}, "entries[0].created_at"),
    ({"entries": [{**ENTRY, "updated_at": TOO_BIG}]}, "entries[0].updated_at"),
    ({"entries": [{**ENTRY, "recall_count": TOO_BIG}]}, "entries[0].recall_count"),
    ({"entries": [{**ENTRY, "importance_score": TOO_BIG}]}, "entries[0].importance_score"),
    ({"entries": [{**ENTRY, "contradiction_wins": TOO_BIG}]}, "entries[0].contradiction_wins"),
    ({"entries": [{**ENTRY, "contradiction_losses": TOO_BIG}]}, "entries[0].contradiction_losses"),
    ({"entries": [{**ENTRY, "when_at": TOO_BIG}]}, "entries[0].when_at"),
    ({"entries": [{**ENTRY, "when_at": TOO_SMALL}]}, "entries[0].when_at"),
    ({"entries": [], "edges": [{**EDGE, "created_at": TOO_BIG}]}, "edges[0].created_at"),
    ({"entries": [], "projects": [{"id": "p", "name": "P", "created_at": TOO_BIG}]}, "projects[0].created_at"),
    ({"entries": [], "projects": [{"id": "p", "name": "P", "updated_at": TOO_BIG}]}, "projects[0].updated_at"),
])
def test_an_integer_outside_64_bits_is_refused_naming_the_field(brain, ctx, data, where):
    with pytest.raises(InvalidInput) as refused:
        restore(brain, ctx, data)  # before: OverflowError from SQLite, a 500
    assert where in refused.value.message


def test_the_64_bit_limits_themselves_are_restored(brain, ctx):
    assert restore(brain, ctx, {"entries": [{**ENTRY, "created_at": 2**63 - 1, "when_at": -(2**63)}]})["imported"] == 1


def test_an_id_that_holds_different_content_here_fails_with_a_reason(brain, ctx):
    restore(brain, ctx, {"entries": [ENTRY]})
    page = restore(brain, ctx, {"entries": [{**ENTRY, "content": "A different note under the same id"}]})
    assert (page["imported"], page["skipped"], page["failed"]) == (0, 0, 1)
    assert page["results"] == [{"id": "note-1", "error": "The ID already holds a different memory"}]
    assert brain.transfer.export(ctx)["entries"][0]["content"] == ENTRY["content"]


def test_only_a_true_repeat_is_skipped(brain, ctx):
    restore(brain, ctx, {"entries": [ENTRY]})
    page = restore(brain, ctx, {"entries": [{**ENTRY, "tags": ["retagged"]}]})  # same id, same content
    assert (page["imported"], page["skipped"], page["failed"], page["results"]) == (0, 1, 0, [])


@pytest.mark.parametrize("forgotten", [False, True])
def test_an_id_taken_outside_the_callers_workspaces_answers_as_an_unknown_id_does(brain, ctx, forgotten):
    """Nothing in Bob's answer may tell him the owner holds (or held) that id: his memory is restored as an
    unknown id's would be, under a stand-in id, the same on a re-run, and his edges follow it there."""
    restore(brain, ctx, {"entries": [ENTRY, OTHER]})
    if forgotten:
        brain.memories.forget(ctx, ENTRY["id"])
    bob = Context(Identity("bob", "Bob", "member", "personal-bob"), request_id="req-bob")
    for run in range(2):  # a re-run changes nothing, as for any id
        page = restore(brain, bob, {"entries": [ENTRY, OTHER], "edges": [EDGE]})
        assert page["results"] == [] and page["failed"] == page["edges_failed"] == 0
        assert (page["imported"], page["skipped"], page["edges_imported"]) == ((2, 0, 1) if run == 0 else (0, 2, 0))
    exported = brain.transfer.export(bob)
    assert sorted(e["content"] for e in exported["entries"]) == sorted([ENTRY["content"], OTHER["content"]])
    stand_in = {e["id"] for e in exported["entries"]}
    assert ENTRY["id"] not in stand_in and OTHER["id"] not in stand_in and len(stand_in) == 2
    assert [(e["source_id"] in stand_in, e["target_id"] in stand_in) for e in exported["edges"]] == [(True, True)]
    mine = [e["content"] for e in brain.transfer.export(ctx)["entries"]]
    assert mine == ([OTHER["content"]] if forgotten else [ENTRY["content"], OTHER["content"]])


def test_an_id_listed_twice_with_different_content_restores_the_oldest_and_reports_the_other(brain, ctx):
    later = {**ENTRY, "content": "The same id, other text", "created_at": ENTRY["created_at"] + 1}
    for limit in (40, 1):
        fresh = {**ENTRY, "id": f"twice-{limit}"}
        payload = {"entries": [{**later, "id": fresh["id"]}, fresh, fresh]}
        pages = [restore(brain, ctx, payload, limit=limit, offset=offset) for offset in range(0, 3, limit)]
        counts = [sum(p[key] for p in pages) for key in ("imported", "skipped", "failed")]
        assert counts == [1, 1, 1], limit  # the oldest restored, its repeat skipped, the other text reported
        assert [r for p in pages for r in p["results"]] == [
            {"id": fresh["id"], "error": "The ID is listed twice with different content; the first was restored"}]


def test_a_forgotten_id_is_not_restored_and_says_why(brain, ctx):
    restore(brain, ctx, {"entries": [ENTRY]})
    brain.memories.forget(ctx, "note-1")
    page = restore(brain, ctx, {"entries": [ENTRY]})
    assert page["results"] == [{"id": "note-1", "error": "The ID belongs to a memory that was forgotten"}]
    assert page["failed"] == 1 and brain.transfer.export(ctx)["entries"] == []


def test_edges_are_restored_in_the_same_call_as_the_last_entries(brain, ctx):
    page = restore(brain, ctx, {"entries": [ENTRY, OTHER], "edges": [EDGE]})
    assert (page["imported"], page["edges_imported"], page["remaining_entries"], page["remaining_edges"]) == (
        2, 1, 0, 0)
    assert (page["next_offset"], page["next_edge_offset"]) == (2, 1)


def test_a_page_that_ends_the_entries_also_takes_a_page_of_edges(brain, ctx):
    entries = [{**ENTRY, "id": f"n{n}", "created_at": ENTRY["created_at"] + n} for n in range(3)]
    edges = [{**EDGE, "source_id": "n0", "target_id": f"n{n}"} for n in (1, 2)] + [
        {**EDGE, "source_id": "n1", "target_id": "n2"}]
    payload = {"entries": entries, "edges": edges}
    first = restore(brain, ctx, payload, limit=2)
    assert (first["imported"], first["edges_imported"], first["next_offset"], first["next_edge_offset"]) == (2, 0, 2, 0)
    second = restore(brain, ctx, payload, limit=2, offset=2)
    assert (second["imported"], second["edges_imported"], second["remaining_edges"]) == (1, 2, 1)
    third = restore(brain, ctx, payload, limit=2, offset=3, edge_offset=2)
    assert (third["imported"], third["edges_imported"], third["remaining_edges"]) == (0, 1, 0)


def test_a_page_with_a_time_budget_stops_between_slices_and_resumes_where_it_answered(brain):
    """On Lambda a page of 1,000 must answer before the request's deadline: it restores slices until its budget
    is spent, then answers with the offsets it reached; resending from them restores the rest exactly once."""
    ticks = iter(range(10_000))
    brain.transfer.budget_s, brain.transfer.timer = 1.5, lambda: float(next(ticks))  # each look: a second later
    ctx = Context(brain.owner, "test")
    entries = [{"id": f"n{i}", "content": f"Imported note number {i} about the harbour",
                "created_at": 1_700_000_000_000 + i} for i in range(100)]
    edges = [{"source_id": f"n{i}", "target_id": f"n{i + 1}", "type": "relates_to"} for i in range(45)]
    data = {"version": 3, "entries": entries, "edges": edges}
    first = restore(brain, ctx, data, limit=1000)
    assert first["imported"] == 80 and first["next_offset"] == 80 and first["remaining_entries"] == 20
    assert first["edges_imported"] == 0 and first["next_edge_offset"] == 0
    pages = [first]
    while pages[-1]["remaining_entries"] or pages[-1]["remaining_edges"]:
        pages.append(restore(brain, ctx, data, limit=1000, offset=pages[-1]["next_offset"],
                             edge_offset=pages[-1]["next_edge_offset"]))
        assert len(pages) < 10
    assert sum(p["imported"] for p in pages) == 100 and sum(p["skipped"] for p in pages) == 0
    assert sum(p["edges_imported"] for p in pages) == 45 and sum(p["edges_skipped"] for p in pages) == 0
    assert len(pages) == 3 and brain.queries.count(ctx) == 100


def test_without_a_budget_a_page_is_restored_whole(brain):
    ctx = Context(brain.owner, "test")
    entries = [{"id": f"n{i}", "content": f"Imported note number {i}", "created_at": 1_700_000_000_000 + i}
               for i in range(100)]
    answer = restore(brain, ctx, {"version": 3, "entries": entries}, limit=1000)
    assert answer["imported"] == 100 and answer["remaining_entries"] == 0


def test_a_member_cannot_tell_an_id_someone_holds_from_an_id_nobody_holds(brain, ctx):
    """Issue 62: after Bob imports one id the owner holds and one nobody holds, every read of either answers the
    same: both went to stand-ins, so reading either id finds nothing, and both memories are his, found by words."""
    restore(brain, ctx, {"entries": [ENTRY]})
    bob = Context(Identity("bob", "Bob", "member", "personal-bob"), request_id="req-bob")
    unused = {**OTHER, "id": "3f6f3c1a-6d3e-4e7a-9d7c-0a1b2c3d4e5f", "content": "Bob's own note about kestrels"}
    page = restore(brain, bob, {"entries": [ENTRY, unused]})
    assert (page["imported"], page["results"]) == (2, [])
    for probed in (ENTRY["id"], unused["id"]):
        with pytest.raises(NotFound):
            brain.memories.load(bob, probed)
    kept = sorted(e["content"] for e in brain.transfer.export(bob)["entries"])
    assert kept == sorted([ENTRY["content"], unused["content"]])
    # The owner restoring a brain keeps the ids nobody holds, as before.
    restore(brain, ctx, {"entries": [unused]})
    assert brain.memories.load(ctx, unused["id"])[0].content == unused["content"]
