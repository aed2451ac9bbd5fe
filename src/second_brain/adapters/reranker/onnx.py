"""A user-supplied ONNX cross-encoder: a directory holding model.onnx and tokenizer.json. No download, ever."""

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...domain.errors import RerankerUnavailable
from ..onnx_session import cpu_session

MAX_TOKENS = 256


class OnnxCrossEncoder:
    def __init__(self, directory: Path | str, threads: int = 0) -> None:
        from tokenizers import Tokenizer

        directory = Path(directory)
        model, tokenizer = directory / "model.onnx", directory / "tokenizer.json"
        for path in (model, tokenizer):
            if not path.is_file():
                raise RerankerUnavailable(f"Reranker directory {directory} has no {path.name}")
        self._session = cpu_session(model, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= self._inputs:
            raise RerankerUnavailable(f"{model} does not take input_ids and attention_mask: not a cross-encoder")
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._lock = threading.Lock()
        self.model_id = f"onnx:{directory.name}"

    def rerank(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        with self._lock:
            encodings = self._tokenizer.encode_batch([(query, p) for p in passages])
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        }
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        logits = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        # One logit per pair, or [not relevant, relevant]: the last column is relevance either way.
        return logits.reshape(len(passages), -1)[:, -1].tolist()
