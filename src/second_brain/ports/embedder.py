"""The embedder port: text in, unit-length float32 vectors out."""

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    model_id: str
    dimension: int
    query_floor: float  # a query-to-note cosine at or under this is no relation in this model's eyes (recall's floor)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per stored text (a memory's passage), shape (len(texts), dimension)."""

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a search query: models trained with a query instruction get it here."""


class QueryAsPassage:
    """For models trained without a query instruction: a query is embedded like any stored text."""

    query_floor = 0.3  # measured on all-MiniLM-L6-v2; the cloud models have no measurement of their own yet

    def embed_query(self: Embedder, text: str) -> np.ndarray:
        return self.embed_batch([text])[0]


def is_ready(embedder: Embedder) -> bool:
    """Whether an embedder can embed now: one whose model is still loading, or failed to load, says `ready = False`
    (adapters/embedder/background.py); every other is ready once made."""
    return bool(getattr(embedder, "ready", True))


def is_loading(embedder: Embedder) -> bool:
    """Whether an embedder that is not ready may still become so (its model is loading)."""
    return bool(getattr(embedder, "loading", False))
