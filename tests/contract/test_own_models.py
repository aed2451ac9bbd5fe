"""Models you bring (issue 61): an embedder behind any OpenAI-compatible /v1/embeddings endpoint and a cross-encoder
behind a /rerank endpoint of the common shape, against a real HTTP stand-in that answers the documented requests.
A change of model re-embeds the brain in the background, and recall never mixes two models' vectors."""

import numpy as np
import pytest

from second_brain.adapters.embedder.openai_compat import OpenAICompatibleEmbedder
from second_brain.adapters.reranker.http import HttpReranker
from second_brain.app.memories.service import Context
from second_brain.app.recall.pipeline import RecallRequest
from second_brain.bootstrap import build, load_reranker
from second_brain.domain.errors import SemanticUnavailable
from second_brain.embedding import load_embedder
from second_brain.ports.read_model import Filters
from second_brain.settings import Settings
from tests.support.model_server import DIMENSION, ModelServer

WS = ("personal-owner",)


@pytest.fixture
def server():
    server = ModelServer()
    yield server
    server.close()


def test_the_embedder_asks_the_documented_shape_and_reads_rows_by_index(server):
    model = OpenAICompatibleEmbedder(server.url + "/v1", "stand-in-a", query_prefix="search_query: ",
                                     passage_prefix="search_document: ")
    assert model.dimension == DIMENSION and model.model_id.startswith(f"openai:stand-in-a:{DIMENSION}:")
    texts = [f"note number {n} about tulips" for n in range(70)]
    rows = model.embed_batch(texts)
    assert rows.shape == (70, DIMENSION) and np.allclose(np.linalg.norm(rows, axis=1), 1.0)  # normalised here
    # The server answered each batch in reverse order: the rows follow `index`, not the order of the answer.
    alone = model.embed_batch([texts[5]])[0]
    assert np.allclose(rows[5], alone)
    batches = [body for path, body in server.requests if path == "/v1/embeddings"]
    assert [len(b["input"]) for b in batches[1:4]] == [32, 32, 6]  # after the dimension probe, 32 per request
    assert all(b["model"] == "stand-in-a" for b in batches)
    assert batches[1]["input"][0] == "search_document: note number 0 about tulips"
    model.embed_query("tulips")
    assert server.requests[-1][1]["input"] == ["search_query: tulips"]
    # Instructions are part of the model's id: changing them is a change of model.
    assert OpenAICompatibleEmbedder(server.url + "/v1", "stand-in-a").model_id != model.model_id


def test_a_failing_endpoint_is_one_clear_error(server):
    model = OpenAICompatibleEmbedder(server.url + "/v1", "stand-in-a")
    server.fail = True
    with pytest.raises(SemanticUnavailable, match="embedding model at .*/v1/embeddings failed"):
        model.embed_batch(["a note"])
    with pytest.raises(SemanticUnavailable):
        OpenAICompatibleEmbedder(server.url + "/nothing-here", "stand-in-a")  # 404: no model to ask


@pytest.mark.parametrize("style", ["cohere", "tei"])
def test_the_reranker_speaks_both_common_shapes(server, style):
    reranker = HttpReranker(server.url + "/rerank", "bge-reranker-v2-m3", style)
    passages = ["the cat sat", "tulips bloom in spring in the garden", "garden tulips"]
    assert reranker.rerank("tulips in the garden", passages) == [1.0, 4.0, 2.0]  # in the passages' order
    path, body = server.requests[-1]
    if style == "cohere":
        assert body == {"model": "bge-reranker-v2-m3", "query": "tulips in the garden", "documents": passages,
                        "top_n": 3}
    else:
        assert body["texts"] == passages and body["query"] == "tulips in the garden"
    server.fail = True
    with pytest.raises(SemanticUnavailable, match="reranker at"):
        reranker.rerank("tulips", passages)


def test_the_settings_choose_them(server, tmp_path):
    settings = Settings(data_dir=tmp_path / "brain", embedder="openai", embedding_url=server.url + "/v1",
                        embedding_model="stand-in-a", reranker="http", reranker_url=server.url + "/rerank",
                        reranker_style="tei")
    embedder = load_embedder(settings)
    assert isinstance(embedder, OpenAICompatibleEmbedder) and embedder.dimension == DIMENSION
    reranker = load_reranker(settings)
    assert isinstance(reranker, HttpReranker) and reranker.rerank("tulips", ["tulips", "roses"]) == [1.0, 0.0]
    down = Settings(data_dir=tmp_path / "other", embedder="openai", embedding_url="http://127.0.0.1:9/v1",
                    embedding_timeout=2)
    assert load_embedder(down) is None  # keyword-only recall, said in the log


def test_a_change_of_model_re_embeds_and_recall_never_mixes_two(server, tmp_path, clock):
    def brain_with(model):
        settings = Settings(data_dir=tmp_path / "brain", embedder="openai", embedding_url=server.url + "/v1",
                            embedding_model=model)
        return build(settings, clock=clock)

    def embedded(brain):
        conn = brain.vectors.db.connection()
        return dict(conn.execute("SELECT model_id, COUNT(*) FROM vector_state GROUP BY model_id").fetchall())

    brain = brain_with("stand-in-a")
    ctx = Context(brain.owner, "test")
    ids = [brain.memories.capture(ctx, f"Tulip bulbs go in the north bed, row {n}", [], "api").id for n in range(6)]
    brain.indexer.run_once(100)
    first = brain.recall.recall(ctx, RecallRequest("tulip bulbs north bed", 3, Filters(WS)))
    assert first["results"] and not first["semantic_unavailable"]
    model_a = brain.recall.embedder.model_id
    assert embedded(brain) == {model_a: 6}
    brain.close()

    brain = brain_with("stand-in-b")  # the same data directory, another model
    model_b = brain.recall.embedder.model_id
    assert model_b != model_a
    pending = brain.vectors.db.connection().execute("SELECT COUNT(*) FROM vector_pending").fetchone()[0]
    assert pending == 6  # every memory queued again for the new model
    # Before the background indexer has run, no vector of the old model answers a search.
    vector = brain.recall.embedder.embed_query("tulip bulbs north bed")
    assert brain.vectors.search(vector, Filters(WS), 10) == []
    assert brain.indexer.run_once(2).vectorized == 2
    assert len(brain.vectors.search(vector, Filters(WS), 10)) == 2  # only what the new model has embedded
    while brain.indexer.run_once(100).remaining:
        pass
    assert embedded(brain) == {model_b: 6}
    answer = brain.recall.recall(ctx, RecallRequest("tulip bulbs north bed", 6, Filters(WS)))
    assert {r["id"] for r in answer["results"]} == set(ids)
    brain.close()
