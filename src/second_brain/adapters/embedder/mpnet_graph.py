"""all-mpnet-base-v2 without torch: its safetensors read with numpy, its encoder written as an ONNX graph with the
`onnx` package (at install: `make mpnet`), and the same encoder in numpy to check the graph against.

MPNet is a BERT-shaped encoder (Song et al. 2020; Hugging Face `MPNetModel`): word and learned absolute position
embeddings (positions counted from padding_idx + 1 over the real tokens), then per layer self-attention whose
scores carry a learned relative position bias (32 buckets, T5's bidirectional bucketing, shared by every layer),
a residual and LayerNorm, a GELU feed-forward, a residual and LayerNorm. The sentence vector is the mean of the
last hidden states over the real tokens (sentence-transformers' pooling for this model), normalised by the caller.

The graph takes `input_ids`, `attention_mask` and `position_ids` (B, T) and `position_buckets` (T, T) and gives
the last hidden states (B, T, H): the two position inputs are cheap integer arithmetic done by `positions`.
"""

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

PAD = 1  # <pad>: the padding_idx position ids count from
BUCKETS = 32
MAX_DISTANCE = 128
EPS = 1e-5
DTYPES = {"F32": np.float32, "I64": np.int64, "F16": np.float16}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file: an 8-byte header length, a JSON header of offsets, the raw data."""
    with path.open("rb") as file:
        size = struct.unpack("<Q", file.read(8))[0]
        header = json.loads(file.read(size))
        data = file.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype=DTYPES[info["dtype"]]).reshape(info["shape"]).copy()
    return tensors


def positions(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The position ids (B, T) of a padded batch and the relative position buckets (T, T) of its length."""
    position_ids = np.cumsum(mask, axis=1) * mask + PAD
    length = mask.shape[1]
    relative = np.arange(length)[None, :] - np.arange(length)[:, None]  # memory - context
    return position_ids.astype(np.int64), bucket(relative)


def bucket(relative: np.ndarray) -> np.ndarray:
    """T5's bidirectional relative position buckets, as MPNet computes them."""
    n = -relative
    half = BUCKETS // 2
    out = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    with np.errstate(divide="ignore"):
        large = exact + (np.log(np.maximum(n, 1) / exact) / math.log(MAX_DISTANCE / exact) * (half - exact))
    large = np.minimum(large.astype(np.int64), half - 1)
    return (out + np.where(n < exact, n, large)).astype(np.int64)


def layers_of(weights: dict[str, np.ndarray]) -> int:
    return len({name.split(".")[2] for name in weights if name.startswith("encoder.layer.")})


def forward(weights: dict[str, np.ndarray], ids: np.ndarray, mask: np.ndarray, heads: int) -> np.ndarray:
    """The encoder's last hidden states in numpy: the reference the ONNX graph is checked against."""
    position_ids, buckets = positions(mask)
    x = weights["embeddings.word_embeddings.weight"][ids] + weights["embeddings.position_embeddings.weight"][
        position_ids]
    x = _norm(x, weights, "embeddings.LayerNorm")
    bias = weights["encoder.relative_attention_bias.weight"][buckets].transpose(2, 0, 1)[None]  # (1, heads, T, T)
    blocked = (1.0 - mask[:, None, None, :].astype(np.float32)) * np.finfo(np.float32).min
    batch, length, hidden = x.shape
    size = hidden // heads
    for layer in range(layers_of(weights)):
        at = f"encoder.layer.{layer}."

        def split(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, length, heads, size).transpose(0, 2, 1, 3)

        q, k, v = (split(_linear(x, weights, at + f"attention.attn.{n}")) for n in "qkv")
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + bias + blocked
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        context = (scores / scores.sum(axis=-1, keepdims=True)) @ v
        context = context.transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = _norm(_linear(context, weights, at + "attention.attn.o") + x, weights, at + "attention.LayerNorm")
        inner = _linear(x, weights, at + "intermediate.dense")
        inner = 0.5 * inner * (1.0 + np.vectorize(math.erf)(inner / math.sqrt(2.0)).astype(np.float32))
        x = _norm(_linear(inner, weights, at + "output.dense") + x, weights, at + "output.LayerNorm")
    return x.astype(np.float32)


def _linear(x: np.ndarray, weights: dict[str, np.ndarray], name: str) -> np.ndarray:
    return x @ weights[name + ".weight"].T + weights[name + ".bias"]


def _norm(x: np.ndarray, weights: dict[str, np.ndarray], name: str) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * weights[name + ".weight"] + weights[name + ".bias"]


def graph(weights: dict[str, np.ndarray], heads: int) -> Any:
    """The encoder as an ONNX model (opset 17), the weights as initializers: deterministic for given weights."""
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits = []
    hidden = weights["embeddings.word_embeddings.weight"].shape[1]
    size = hidden // heads

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    def op(kind: str, inputs: list[str], output: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [output], name=output, **attrs))
        return output

    for name, value in weights.items():
        if name.startswith(("embeddings.", "encoder.")) and name != "embeddings.position_ids":
            # Linear layers are stored [out, in]: transposed once here, so the graph multiplies x @ W.
            linear_weight = name.startswith("encoder.layer.") and name.endswith(".weight") and value.ndim == 2
            const(name, value.T.copy() if linear_weight else value)
    shape_heads = const("shape_heads", np.array([0, 0, heads, size], dtype=np.int64))
    shape_hidden = const("shape_hidden", np.array([0, 0, hidden], dtype=np.int64))
    scale = const("scale", np.array(1.0 / math.sqrt(size), dtype=np.float32))
    one = const("one", np.array(1.0, dtype=np.float32))
    lowest = const("lowest", np.array(np.finfo(np.float32).min, dtype=np.float32))
    axes_12 = const("axes_12", np.array([1, 2], dtype=np.int64))
    axes_0 = const("axes_0", np.array([0], dtype=np.int64))

    def norm(x: str, name: str) -> str:
        return op("LayerNormalization", [x, name + ".weight", name + ".bias"], f"{name}.out", axis=-1, epsilon=EPS)

    def linear(x: str, name: str) -> str:
        return op("Add", [op("MatMul", [x, name + ".weight"], f"{name}.mm"), name + ".bias"], f"{name}.out")

    words = op("Gather", ["embeddings.word_embeddings.weight", "input_ids"], "words")
    placed = op("Gather", ["embeddings.position_embeddings.weight", "position_ids"], "placed")
    x = norm(op("Add", [words, placed], "embedded"), "embeddings.LayerNorm")
    rel = op("Gather", ["encoder.relative_attention_bias.weight", "position_buckets"], "rel")  # (T, T, heads)
    bias = op("Unsqueeze", [op("Transpose", [rel], "rel_t", perm=[2, 0, 1]), axes_0], "position_bias")
    mask = op("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    blocked = op("Mul", [op("Sub", [one, op("Unsqueeze", [mask, axes_12], "mask_4d")], "unmasked"), lowest],
                 "blocked")
    bias = op("Add", [bias, blocked], "bias_all")  # (B, heads, T, T)
    for layer in range(layers_of(weights)):
        at = f"encoder.layer.{layer}."

        def split(t: str, at: str = at) -> str:
            return op("Transpose", [op("Reshape", [t, shape_heads], t + ".r")], t + ".t", perm=[0, 2, 1, 3])

        q, k, v = (split(linear(x, at + f"attention.attn.{n}")) for n in "qkv")
        k_t = op("Transpose", [k], at + "k_t", perm=[0, 1, 3, 2])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k_t], at + "qk"), scale], at + "qk_s"), bias], at + "scores")
        probs = op("Softmax", [scores], at + "probs", axis=-1)
        context = op("Transpose", [op("MatMul", [probs, v], at + "ctx")], at + "ctx_t", perm=[0, 2, 1, 3])
        context = op("Reshape", [context, shape_hidden], at + "ctx_r")
        x = norm(op("Add", [linear(context, at + "attention.attn.o"), x], at + "attn_res"), at + "attention.LayerNorm")
        inner = linear(x, at + "intermediate.dense")
        inner = _gelu(op, inner, at, const)
        x = norm(op("Add", [linear(inner, at + "output.dense"), x], at + "ffn_res"), at + "output.LayerNorm")
    op("Identity", [x], "last_hidden_state")
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
              for n in ("input_ids", "attention_mask", "position_ids")]
    inputs.append(helper.make_tensor_value_info("position_buckets", TensorProto.INT64, ["tokens", "tokens"]))
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", hidden])
    model = helper.make_model(helper.make_graph(nodes, "mpnet", inputs, [output], inits),
                              opset_imports=[helper.make_opsetid("", 17)], producer_name="second-brain")
    model.ir_version = 8
    return model


def _gelu(op: Any, x: str, at: str, const: Any) -> str:
    """GELU with erf, as the model was trained: 0.5 x (1 + erf(x / sqrt 2))."""
    root = const(at + "sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))
    half = const(at + "half", np.array(0.5, dtype=np.float32))
    one = const(at + "gelu_one", np.array(1.0, dtype=np.float32))
    erf = op("Erf", [op("Div", [x, root], at + "gelu_div")], at + "gelu_erf")
    return op("Mul", [op("Mul", [x, half], at + "gelu_half"), op("Add", [erf, one], at + "gelu_1p")], at + "gelu")
