"""The reranker port: a cross-encoder scoring (query, passage) pairs."""

from collections.abc import Sequence
from typing import Protocol


class Reranker(Protocol):
    model_id: str

    def rerank(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, higher is better."""
