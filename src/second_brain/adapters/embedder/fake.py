"""A deterministic embedder for tests: hashed words and character trigrams, no model."""

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from ...ports.embedder import QueryAsPassage

WORD = re.compile(r"\w+")


class FakeEmbedder(QueryAsPassage):
    """Texts sharing words (or word fragments) get similar vectors; nothing else is modelled."""

    model_id = "fake-hash-v1"

    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension
        self.calls = 0

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORD.findall(text.lower()):
                out[row, self._slot(word)] += 1.0
                for i in range(len(word) - 2):
                    out[row, self._slot("#" + word[i : i + 3])] += 0.3
            norm = np.linalg.norm(out[row])
            out[row] = out[row] / norm if norm else self._unit(text)
        return out

    def _slot(self, feature: str) -> int:
        return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=4).digest(), "little") % self.dimension

    def _unit(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dimension, dtype=np.float32)
        vector[self._slot(text)] = 1.0
        return vector
