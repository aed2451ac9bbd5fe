"""The vector index's store against a forget or deprecation appended at the worst moment, forced by hooks."""

from contextlib import contextmanager

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.adapters.vector_index import sqlite as vector_sqlite
from second_brain.ports.read_model import Filters
from tests.support.brains import make_brain, sqlite_brain

WS = ("personal-owner",)
ENDINGS = {
    "forgotten": lambda brain, ctx, memory_id: brain.memories.forget(ctx, memory_id),
    "deprecated": lambda brain, ctx, memory_id: brain.memories.set_status(ctx, memory_id, "deprecated"),
}


@pytest.fixture
def embedder():
    return FakeEmbedder()


@pytest.fixture
def brain(tmp_path, clock, embedder):
    brain = sqlite_brain(tmp_path, clock, embedder)
    yield brain
    brain.close()


def after_next_write(monkeypatch, db, action) -> None:
    """Run `action` once, right after the next write transaction commits and releases the write lock."""
    write, pending = db.write, [action]

    @contextmanager
    def hooked():
        with write() as conn:
            yield conn
        if pending:
            pending.pop()()

    monkeypatch.setattr(db, "write", hooked)


def assert_no_vectors_anywhere(brain, embedder, memory_id: str) -> None:
    hits = brain.vectors.search(embedder.embed_batch(["quartz ledger reconciliation"])[0], Filters(WS), 5)
    assert memory_id not in {h.entry_id for h in hits}
    assert brain.vectors.vector_of(memory_id) is None
    assert brain.vectors.is_indexed(memory_id) is False and brain.vectors.vector_count(memory_id) == 0


@pytest.mark.parametrize("ending", ENDINGS)
def test_an_ending_committed_right_after_the_store_commits_removes_its_vectors(brain, ctx, embedder,
                                                                              monkeypatch, ending):
    memory = brain.memories.capture(ctx, "quartz ledger reconciliation", [], "api")
    # The next write is the indexer's store: the ending lands between its commit and anything after it.
    after_next_write(monkeypatch, brain.db, lambda: ENDINGS[ending](brain, ctx, memory.id))
    brain.indexer.run_once(100)
    assert_no_vectors_anywhere(brain, embedder, memory.id)


@pytest.mark.parametrize("ending", ENDINGS)
def test_an_ending_committed_while_the_indexer_embeds_keeps_the_vectors_out(brain, ctx, embedder,
                                                                           monkeypatch, ending):
    memory = brain.memories.capture(ctx, "quartz ledger reconciliation", [], "api")
    read_pending = brain.vectors.pending

    def pending_then_ending(*args, **kwargs):
        found = read_pending(*args, **kwargs)
        ENDINGS[ending](brain, ctx, memory.id)  # after the indexer read what to embed, before it stores
        return found

    monkeypatch.setattr(brain.vectors, "pending", pending_then_ending)
    report = brain.indexer.run_once(100)
    assert report.vectorized == 0
    assert_no_vectors_anywhere(brain, embedder, memory.id)
    if ending == "deprecated":
        assert brain.queries.entry(ctx, memory.id)["indexed"] is False


def test_compaction_after_many_forgets_keeps_every_live_row(brain, embedder, monkeypatch):
    # Compaction runs inside a store's write, so it works on the matrix alone; fill it directly.
    vectors, texts = brain.vectors, [f"note number {n}" for n in range(2400)]
    for n, vector in enumerate(embedder.embed_batch(texts)):
        vectors._add_row(f"m{n}", n, 0, "personal-owner", False, vector)
    for n in range(0, 2400, 2):
        vectors._forget_rows(f"m{n}")
    assert vectors._size < 2400 and vectors._size - vectors._dead == 1200  # compacted once on the way
    for n in (1, 777, 2399):
        assert vectors.vector_of(f"m{n}") == pytest.approx(embedder.embed_batch([texts[n]])[0], abs=1e-3)
        assert vectors.scores_for(embedder.embed_batch([texts[n]])[0], [f"m{n}"])[f"m{n}"].score > 0.99
    assert vectors.vector_of("m2") is None
    # The int8 codes of the first k-NN pass were grown and compacted in step with the matrix.
    query, scope = embedder.embed_batch([texts[777]])[0], Filters(("personal-owner",))
    two_pass = vectors.search(query, scope, 10)
    monkeypatch.setattr(vector_sqlite, "_SIMD", None)
    whole = vectors.search(query, scope, 10)
    assert [h.entry_id for h in two_pass] == [h.entry_id for h in whole] and two_pass[0].entry_id == "m777"
    assert [h.score for h in two_pass] == pytest.approx([h.score for h in whole], abs=1e-6, rel=0)


@pytest.mark.opensearch
@pytest.mark.parametrize("ending", ENDINGS)
def test_opensearch_store_racing_an_ending_leaves_no_passages(request, tmp_path, clock, embedder, ctx, monkeypatch,
                                                               ending):
    """On OpenSearch the ending is projected after the store read the entry, just before it writes the passages
    (so the projection had none to delete), and the guarded entry update then fails."""
    from second_brain.adapters.opensearch import vector_index

    brain = make_brain("opensearch", request, tmp_path, clock, embedder)
    try:
        memory = brain.memories.capture(ctx, "quartz ledger reconciliation", [], "api")
        bulk, pending = vector_index.helpers.bulk, [lambda: ENDINGS[ending](brain, ctx, memory.id)]

        def hooked(*args, **kwargs):
            if pending:
                pending.pop()()
            return bulk(*args, **kwargs)

        monkeypatch.setattr(vector_index.helpers, "bulk", hooked)
        assert brain.indexer.run_once(10).vectorized == 0
        assert_no_vectors_anywhere(brain, embedder, memory.id)
    finally:
        brain.close()
