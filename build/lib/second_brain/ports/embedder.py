"""The embedder port: text in, unit-length float32 vectors out."""

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    model_id: str
    dimension: int

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text, shape (len(texts), dimension)."""
