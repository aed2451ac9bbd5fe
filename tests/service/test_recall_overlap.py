"""Recall's two arms at once (issue 43): the query is embedded, and its nearest memories found (issue 65), while the
keyword arm reads the index, so a recall waits for the longer of the two rather than their sum; what the meaning side
searches for is unchanged."""

import threading

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app.recall.pipeline import RecallRequest
from second_brain.ports.read_model import Filters
from tests.support.brains import sqlite_brain

WS = ("personal-owner",)
WAIT = 5.0  # seconds the keyword arm waits to see the query embedded: a sequential recall fails by then


class RecordingEmbedder(FakeEmbedder):
    """The fake embedder, saying which queries it embedded, on which thread."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []
        self.embedded = threading.Event()
        self.threads: set[str] = set()

    def embed_query(self, text):
        self.queries.append(text)
        self.threads.add(threading.current_thread().name)
        self.embedded.set()
        return super().embed_query(text)


@pytest.fixture
def embedder():
    return RecordingEmbedder()


@pytest.fixture
def brain(tmp_path, clock, embedder):
    brain = sqlite_brain(tmp_path, clock, embedder)
    yield brain
    brain.close()


def test_the_query_is_embedded_while_the_keyword_arm_reads(brain, ctx, embedder):
    note = brain.memories.capture(ctx, "The quarterly budget review moved to Thursday", [], "api").id
    brain.indexer.run_once(100)
    embedder.queries.clear()
    embedder.embedded.clear()
    seen_during_keyword_arm = []
    term_stats = brain.recall.read_model.term_stats

    def waiting_term_stats(*args, **kwargs):
        seen_during_keyword_arm.append(embedder.embedded.wait(WAIT))
        return term_stats(*args, **kwargs)

    brain.recall.read_model.term_stats = waiting_term_stats
    answer = brain.recall.recall(ctx, RecallRequest("budget review", 5, Filters(WS)))
    assert seen_during_keyword_arm == [True]
    assert [r["id"] for r in answer["results"]] == [note]
    assert embedder.queries == ["budget review"]  # embedded once: the early vector is the one searched with
    assert threading.current_thread().name not in embedder.threads


def test_the_nearest_memories_are_found_while_the_keyword_arm_reads(brain, ctx):
    """The vector search (3 ms of a 100k brain's everyday-words recall) waited for the keyword arm to end; it runs
    right after the embedding, on the embedding thread, with the recall's own filters and pool."""
    note = brain.memories.capture(ctx, "The quarterly budget review moved to Thursday", [], "api").id
    brain.indexer.run_once(100)
    searched = threading.Event()
    search, calls = brain.recall.vectors.search, []

    def recording_search(vector, filters, limit):
        calls.append((threading.current_thread().name, filters, limit))
        searched.set()
        return search(vector, filters, limit)

    brain.recall.vectors.search = recording_search
    seen_during_keyword_arm = []
    term_stats = brain.recall.read_model.term_stats

    def waiting_term_stats(*args, **kwargs):
        seen_during_keyword_arm.append(searched.wait(WAIT))
        return term_stats(*args, **kwargs)

    brain.recall.read_model.term_stats = waiting_term_stats
    answer = brain.recall.recall(ctx, RecallRequest("budget review", 5, Filters(WS)))
    assert seen_during_keyword_arm == [True]
    assert [r["id"] for r in answer["results"]] == [note]
    assert len(calls) == 1  # searched once: the early search is the one used
    thread, filters, limit = calls[0]
    assert thread != threading.current_thread().name and filters.workspaces == WS
    assert limit == brain.config.recall_config().vector_pool


def test_a_query_naming_a_speaker_is_embedded_again_without_the_name(brain, ctx, embedder):
    """The early embedding cannot know who speaks in the brain; once the keyword arm shows "Melanie" is a speaker,
    the meaning side searches with the name left out, as it did before the arms ran at once."""
    brain.memories.capture(ctx, "Melanie: I painted a lake at sunrise last week.", [], "api")
    brain.memories.capture(ctx, "Melanie: next I want to try the harbour at night.", [], "api")
    brain.indexer.run_once(100)
    embedder.queries.clear()
    brain.recall.recall(ctx, RecallRequest("What did Melanie paint?", 5, Filters(WS)))
    # The name-less query is embedded; the early one (with the name) runs beside the keyword arm and may finish
    # after it, or not be needed at all once that arm has answered.
    assert "What did they paint?" in embedder.queries
    assert set(embedder.queries) <= {"What did Melanie paint?", "What did they paint?"}


def test_an_embedder_failure_still_answers_from_the_keywords(brain, ctx, embedder):
    note = brain.memories.capture(ctx, "Renewed the passport at the consulate", [], "api").id
    brain.indexer.run_once(100)

    def failing(text):
        raise RuntimeError("model crashed")

    embedder.embed_query = failing
    answer = brain.recall.recall(ctx, RecallRequest("passport", 5, Filters(WS)))
    assert [r["id"] for r in answer["results"]] == [note]
    assert answer["semantic_unavailable"] is True
