"""The nightly jobs of this module's authors (housekeeping, index check, graph pass, staleness) through the
runner, on the real SQLite brain and on OpenSearch: what each appends, what it repairs, and that a second run
changes nothing."""

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations
from second_brain.app.memories.service import Context
from second_brain.app.transfer import parse_payload
from second_brain.bootstrap import build
from second_brain.domain.events import StalenessJudged, memory_stream
from second_brain.domain.staleness import STALE_TAG
from second_brain.entrypoints.mcp.render import render_recall
from second_brain.settings import Settings
from tests.support.brains import make_brain, sqlite_only

DAY = 24 * 3600 * 1000
WS = ("personal-owner",)


@pytest.fixture(params=["sqlite", "opensearch"])
def brain(request, tmp_path, clock):
    brain = make_brain(request.param, request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


def owner(brain) -> Context:
    return Context(brain.team.owner_identity(), "test")


def capture(brain, text: str, tags=()) -> str:
    return brain.memories.capture(owner(brain), text, list(tags), "api").id


def restore(brain, *contents: str, embed: bool = True) -> list[str]:
    """Memories restored from a backup: not linked at capture, and not embedded until the indexer runs."""
    entries = [{"id": f"m{i}", "content": c, "tags": [], "source": "api", "created_at": 1_700_000_000_000 + i}
               for i, c in enumerate(contents)]
    brain.transfer.import_page(owner(brain), parse_payload({"version": 3, "entries": entries}), 1000)
    if embed:
        brain.indexer.run_once(100)
    return [e["id"] for e in entries]


def entry(brain, memory_id: str) -> dict:
    return brain.queries.entry(owner(brain), memory_id)


def run(brain, job: str) -> dict:
    [summary] = brain.maintenance.run([job])
    assert summary["errors"] == [], summary
    return summary["counts"]


def test_staleness_flags_changeable_old_memories_with_a_reason_and_clears_lasting_ones(brain, clock):
    works = capture(brain, "Dana works at Acme Robotics in the hardware team")
    meeting = capture(brain, "Quarterly planning meeting with the board in room 4")
    birthday = capture(brain, "Dana's birthday is on the 3rd of May", tags=[STALE_TAG])
    plain = capture(brain, "The blue notebook holds the garden sketches")
    clock.advance(100 * DAY)
    fresh = capture(brain, "Omar lives in Lisbon since the spring")

    assert run(brain, "staleness") == {"checked": 5, "flagged": 2, "cleared": 1}
    tags = {i: entry(brain, i)["tags"] for i in (works, meeting, birthday, plain, fresh)}
    assert STALE_TAG in tags[works] and STALE_TAG in tags[meeting]
    assert STALE_TAG not in tags[birthday] and STALE_TAG not in tags[plain] and STALE_TAG not in tags[fresh]
    [judged] = [e.event for e in brain.store.read_stream(memory_stream(works)) if isinstance(e.event, StalenessJudged)]
    assert judged.stale and "works at" in judged.reason and "100 days" in judged.reason
    assert judged.reason.startswith("Possibly out of date")
    [shown] = [t for t in entry(brain, works)["timeline"] if t["event"] == "staleness_judged"]
    assert shown["actor_name"] == "Second Brain" and shown["payload"] == {"stale": True, "reason": judged.reason}

    assert run(brain, "staleness") == {"checked": 5}  # idempotent: nothing left to change
    shown = render_recall(operations.recall(brain, owner(brain), "Acme Robotics", 5), 12_000)
    assert "Dana works at Acme Robotics" in shown and "true as of 2026-01-01, verify before asserting" in shown


def test_staleness_resumes_from_its_cursor_when_bounded(brain, clock):
    brain.maintenance.jobs["staleness"].per_run = 2
    ids = [capture(brain, f"Person {n} works at company number {n}") for n in range(5)]
    clock.advance(91 * DAY)
    first, second, third = (brain.maintenance.run(["staleness"])[0] for _ in range(3))
    assert (first["counts"], first["complete"]) == ({"checked": 2, "flagged": 2}, False)
    assert (second["counts"], second["complete"]) == ({"checked": 2, "flagged": 2}, False)
    assert (third["counts"], third["complete"]) == ({"checked": 1, "flagged": 1}, True)
    assert all(STALE_TAG in entry(brain, i)["tags"] for i in ids)


def test_graph_pass_links_unlinked_memories_and_prunes_weak_old_inferred_edges(brain, clock):
    a, b, c = restore(brain, "solar panel inverter maintenance schedule for the roof",
                      "solar panel inverter maintenance schedule for the barn roof", "a recipe for lemon cake")
    assert not brain.links.connections(owner(brain), a, None)  # restored memories bring their own edges: none here
    counts = run(brain, "graph")
    assert counts == {"linked": 1, "unlinkable": 1}  # a with b (then b is linked too); c has no neighbour
    assert [n["id"] for n in brain.links.connections(owner(brain), a, None)] == [b]
    assert "linked" not in run(brain, "graph")

    brain.links.link(owner(brain), a, c, "relates_to", 0.2, "inferred")
    brain.links.link(owner(brain), b, c, "caused_by", 0.1, "explicit")
    clock.advance(6 * DAY)
    assert run(brain, "graph").get("pruned", 0) == 0  # weak, but not a week old yet
    clock.advance(2 * DAY)
    assert run(brain, "graph")["pruned"] == 1
    assert {n["id"] for n in brain.links.connections(owner(brain), c, None)} == {b}  # the explicit edge stays


def test_index_check_repairs_a_projection_that_drifted_from_the_log(brain, clock):
    ids = [capture(brain, f"note {n} about the harbour crane {n}") for n in range(3)]
    target = ids[1]
    truth = entry(brain, target)
    # Break the projection behind the log's back.
    if brain.backend == "sqlite":
        with brain.db.write() as conn:
            conn.execute("UPDATE entries SET content = 'garbled', tags = '[]' WHERE id = ?", (target,))
    else:
        ix = brain.store.projections[0].indexes
        ix.client.update(index=ix.entries, id=target, body={"doc": {"content": "garbled", "tags": []}}, refresh=True)
    assert entry(brain, target)["content"] == "garbled"

    counts = run(brain, "index")
    assert counts["drifted"] == 1 and counts["repaired"] == 1 and counts["checked"] == 3
    repaired = entry(brain, target)
    assert (repaired["content"], repaired["tags"]) == (truth["content"], truth["tags"])
    assert run(brain, "index").get("drifted", 0) == 0


def test_index_check_rebuilds_a_broken_keyword_index_and_kept_counts(brain, clock):
    sqlite_only(brain, "the trigram index and kept counts are SQLite's")
    target = capture(brain, "the walrus migration report")
    capture(brain, "an unrelated note on tides", tags=["sea"])
    with brain.db.write() as conn:
        rid = conn.execute("SELECT rid, content FROM entries WHERE id = ?", (target,)).fetchone()
        conn.execute("INSERT INTO entries_fts (entries_fts, rowid, content) VALUES ('delete', ?, ?)", tuple(rid))
        conn.execute("UPDATE workspace_counts SET n = n + 5")
        conn.execute("UPDATE tag_counts SET n = 7 WHERE tag = 'sea'")
        conn.execute("DELETE FROM hour_counts")  # the brief's counts too
        assert not conn.execute("SELECT rowid FROM entries_fts WHERE entries_fts MATCH '\"walrus\"'").fetchone()
    counts = run(brain, "index")
    assert counts["keyword_index_rebuilt"] == 1 and counts["counts_rebuilt"] == 1
    with brain.db.write() as conn:
        assert conn.execute("SELECT n FROM workspace_counts").fetchone()[0] == 2
        assert conn.execute("SELECT n FROM tag_counts WHERE tag = 'sea'").fetchone()[0] == 1
        assert conn.execute("SELECT SUM(n) FROM hour_counts").fetchone()[0] == 2
        assert conn.execute("SELECT rowid FROM entries_fts WHERE entries_fts MATCH '\"walrus\"'").fetchone()
    assert "keyword_index_rebuilt" not in run(brain, "index")


@pytest.mark.parametrize("drift", ["unindexed", "stray"])
def test_index_check_rebuilds_a_broken_words_index(brain, clock, drift):
    sqlite_only(brain, "the words index is SQLite's")
    target = capture(brain, "the walrus migration report")
    capture(brain, "an unrelated note on tides")
    with brain.db.write() as conn:
        rid, content = conn.execute("SELECT rid, content FROM entries WHERE id = ?", (target,)).fetchone()
        if drift == "unindexed":
            conn.execute("INSERT INTO entries_words (entries_words, rowid, content) VALUES ('delete', ?, ?)",
                         (rid, content))
        else:
            conn.execute("INSERT INTO entries_words (rowid, content) VALUES (?, 'a stray sealion')", (rid + 100,))
    assert run(brain, "index")["keyword_index_rebuilt"] == 1
    assert brain.recall.read_model.spellings(["walrs", "sealon"], ("personal-owner",)) == {
        "walrs": {"walrus": 1}, "sealon": {}}
    assert "keyword_index_rebuilt" not in run(brain, "index")


def test_a_brain_written_before_the_words_index_gets_it_from_its_rows_when_opened(tmp_path, clock, ctx):
    settings = Settings(data_dir=tmp_path / "brain")
    brain = build(settings, clock, FakeEmbedder())
    brain.memories.capture(ctx, "the walrus migration report", [], "api")
    with brain.db.write() as conn:
        conn.execute("DROP TABLE entries_words_vocab")
        conn.execute("DROP TABLE entries_words")
    brain.close()
    brain = build(settings, clock, FakeEmbedder())
    try:
        assert brain.recall.read_model.spellings(["walrs"], ("personal-owner",)) == {"walrs": {"walrus": 1}}
    finally:
        brain.close()


def test_index_check_requeues_memories_whose_vectors_went_missing(brain, clock):
    target = capture(brain, "vectors for the lighthouse log")
    brain.indexer.run_once(10)
    assert brain.vectors.is_indexed(target)
    if brain.backend == "sqlite":
        with brain.db.write() as conn:
            conn.execute("DELETE FROM vector_state WHERE entry_id = ?", (target,))
    else:
        ix = brain.store.projections[0].indexes
        ix.delete_passages(target)
    assert run(brain, "index")["vectors_requeued"] == 1
    assert [p.id for p in brain.vectors.pending(10)] == [target]


def test_housekeeping_retires_day_old_idempotency_answers(brain, clock):
    first = brain.memories.capture(owner(brain), "key one first", [], "api", idempotency_key="k-1")
    again = brain.memories.capture(owner(brain), "key one first", [], "api", idempotency_key="k-1")
    assert again.id == first.id
    clock.advance(DAY + 1)
    assert run(brain, "housekeeping")["keys_expired"] == 1
    assert "keys_expired" not in run(brain, "housekeeping")
    later = brain.memories.capture(owner(brain), "a different note for an old key", [], "api", idempotency_key="k-1")
    assert later.id != first.id  # the key is free again: not a 409, not the old answer
    assert brain.memories.capture(owner(brain), "a different note for an old key", [], "api",
                                  idempotency_key="k-1").id == later.id


def test_housekeeping_embeds_what_is_pending(brain, clock):
    ids = restore(brain, "pending note one", "pending note two", "pending note three", embed=False)
    assert brain.vectors.pending_count() == 3
    assert run(brain, "housekeeping")["embedded"] == 3
    assert all(brain.vectors.is_indexed(i) for i in ids)



def test_index_check_rebuilds_the_briefs_kept_counts_alone(brain, clock):
    sqlite_only(brain, "the brief's kept counts are SQLite's")
    capture(brain, "a note for the brief", tags=["garden"])
    with brain.db.write() as conn:
        conn.execute("DELETE FROM hour_counts")
    assert run(brain, "index")["counts_rebuilt"] == 1
    with brain.db.write() as conn:
        assert conn.execute("SELECT SUM(n) FROM hour_counts").fetchone()[0] == 1
        assert conn.execute("SELECT SUM(n) FROM day_tag_counts WHERE tag = 'garden'").fetchone()[0] == 1
