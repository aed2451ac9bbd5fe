"""The opt-in all-mpnet-base-v2 embedder (issue 61): its ONNX graph, built without torch, computes what the
encoder computes (checked against the same encoder in numpy on a small random MPNet), and the embedder loads only
what `make mpnet` built and checked."""

import hashlib
import json
import struct

import numpy as np
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, processors

from second_brain.adapters.embedder import mpnet_graph
from second_brain.adapters.embedder.mpnet import MPNetEmbedder
from second_brain.domain.errors import ModelUnavailable
from second_brain.embedding import load_embedder
from second_brain.settings import Settings

HIDDEN, HEADS, LAYERS, POSITIONS = 16, 4, 2, 64
VOCAB = ["<s>", "<pad>", "</s>", "<unk>", "the", "cat", "sits", "outside", "plays", "in", "garden", "a", "dog"]


def tiny_weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def r(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (rng.normal(size=shape) * scale).astype(np.float32)

    weights = {"embeddings.word_embeddings.weight": r(len(VOCAB), HIDDEN),
               "embeddings.position_embeddings.weight": r(POSITIONS, HIDDEN),
               "embeddings.LayerNorm.weight": r(HIDDEN), "embeddings.LayerNorm.bias": r(HIDDEN),
               "encoder.relative_attention_bias.weight": r(mpnet_graph.BUCKETS, HEADS)}
    for layer in range(LAYERS):
        at = f"encoder.layer.{layer}."
        for name in "qkvo":
            weights[at + f"attention.attn.{name}.weight"] = r(HIDDEN, HIDDEN, scale=0.3)
            weights[at + f"attention.attn.{name}.bias"] = r(HIDDEN)
        weights[at + "intermediate.dense.weight"], weights[at + "intermediate.dense.bias"] = r(4 * HIDDEN, HIDDEN,
                                                                                              scale=0.3), r(4 * HIDDEN)
        weights[at + "output.dense.weight"], weights[at + "output.dense.bias"] = r(HIDDEN, 4 * HIDDEN, scale=0.3), r(
            HIDDEN)
        for norm in ("attention.LayerNorm", "output.LayerNorm"):
            weights[at + norm + ".weight"], weights[at + norm + ".bias"] = r(HIDDEN), r(HIDDEN)
    return weights


def test_the_graph_computes_what_the_encoder_computes():
    import onnxruntime

    weights = tiny_weights()
    ids = np.array([[0, 4, 5, 6, 2, 1, 1], [0, 4, 12, 8, 9, 10, 2]], dtype=np.int64)
    mask = (ids != mpnet_graph.PAD).astype(np.int64)
    expected = mpnet_graph.forward(weights, ids, mask, HEADS)
    session = onnxruntime.InferenceSession(mpnet_graph.graph(weights, HEADS).SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    position_ids, buckets = mpnet_graph.positions(mask)
    got = session.run(None, {"input_ids": ids, "attention_mask": mask, "position_ids": position_ids,
                             "position_buckets": buckets})[0]
    real = mask.astype(bool)
    assert np.abs(got - expected)[real].max() < 1e-4
    # Padding changes nothing for the real tokens: the first row alone gives the same states.
    alone = mpnet_graph.forward(weights, ids[:1, :5], mask[:1, :5], HEADS)
    assert np.abs(alone[0] - expected[0, :5]).max() < 1e-4
    # The same weights build the same bytes: what the installer checks against a fixed hash.
    assert mpnet_graph.graph(weights, HEADS).SerializeToString() == mpnet_graph.graph(weights,
                                                                                      HEADS).SerializeToString()


def test_positions_count_from_the_padding_index_and_buckets_follow_t5():
    position_ids, _ = mpnet_graph.positions(np.array([[1, 1, 1, 0, 0]]))
    assert position_ids.tolist() == [[2, 3, 4, 1, 1]]
    relative = np.array([-200, -20, -8, -7, -1, 0, 1, 7, 8, 20, 200])
    # Keys before the query (negative) take the upper half; exact up to 7 steps, then log-spaced to 128.
    assert mpnet_graph.bucket(relative).tolist() == [15, 10, 8, 7, 1, 0, 17, 23, 24, 26, 31]


def test_safetensors_are_read_as_written(tmp_path):
    tensors = {"a.weight": np.arange(6, dtype=np.float32).reshape(2, 3), "b.ids": np.array([[7, 8]], np.int64)}
    header, data, offset = {"__metadata__": {"format": "pt"}}, b"", 0
    for name, value in tensors.items():
        raw = value.tobytes()
        header[name] = {"dtype": "F32" if value.dtype == np.float32 else "I64", "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        data, offset = data + raw, offset + len(raw)
    encoded = json.dumps(header).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + data)
    read = mpnet_graph.read_safetensors(path)
    assert set(read) == set(tensors) and all(np.array_equal(read[n], tensors[n]) for n in tensors)


@pytest.fixture
def installed(tmp_path):
    """A folder as `make mpnet` leaves it, with the small random model and a word-level tokenizer of its own."""
    folder = tmp_path / "mpnet"
    folder.mkdir()
    graph = mpnet_graph.graph(tiny_weights(), HEADS).SerializeToString()
    (folder / "model.onnx").write_bytes(graph)
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0),
                                                                                                   ("</s>", 2)])
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder, hashlib.sha256(graph).hexdigest()


def test_the_embedder_gives_unit_vectors_a_text_at_a_time(installed):
    folder, digest = installed
    model = MPNetEmbedder(folder, threads=1, expected=digest)
    rows = model.embed_batch(["the cat sits outside", "a dog plays in the garden", "the cat sits outside"])
    assert rows.shape == (3, HIDDEN) and np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert np.allclose(rows[0], rows[2]) and not np.allclose(rows[0], rows[1])
    assert np.allclose(model.embed_query("the cat sits outside"), rows[0])  # no instructions: a query is a text
    assert model.embed_batch([]).shape == (0, model.dimension)


def test_only_the_checked_graph_loads(installed, tmp_path):
    folder, digest = installed
    with pytest.raises(ModelUnavailable, match="is altered"):
        MPNetEmbedder(folder, expected="0" * 64)
    with pytest.raises(ModelUnavailable, match="make mpnet"):
        MPNetEmbedder(tmp_path / "nowhere")
    assert load_embedder(Settings(data_dir=tmp_path / "b", embedder="mpnet", mpnet_dir=tmp_path / "nowhere")) is None
