"""The vector index port: per-memory passage vectors, searched with filters applied before the cut."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .read_model import Filters


@dataclass(frozen=True)
class PendingEntry:
    id: str
    content: str
    version: int  # the content version these vectors must match to count as indexed
    workspace: str = ""


@dataclass(frozen=True)
class PassageVector:
    text_hash: str
    is_update: bool
    vector: np.ndarray


@dataclass(slots=True)  # read-only; not frozen for the cost of building hundreds a recall (see EntryRow)
class VectorHit:
    entry_id: str
    score: float  # cosine of the best passage
    is_update: bool


class VectorIndex(Protocol):
    def pending(self, limit: int, ids: Sequence[str] | None = None) -> list[PendingEntry]:
        """Entries whose vectors are missing or older than their content, oldest first (only `ids`, if given)."""

    def vector_count(self, entry_id: str) -> int:
        """How many passage vectors the entry has."""

    def pending_count(self, older_than: int | None = None, workspaces: Sequence[str] | None = None) -> int:
        """How many entries are pending (only those created before `older_than`, and in `workspaces`, if given)."""

    def is_indexed(self, entry_id: str) -> bool:
        """Whether the entry's vectors match its current content."""

    def cached(self, model_id: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors already computed for these texts by this model."""

    def store(self, model_id: str, entry: PendingEntry, passages: Sequence[PassageVector]) -> bool:
        """Replace an entry's vectors; False if its content moved on meanwhile (it stays pending)."""

    def search(self, query: np.ndarray, filters: Filters, limit: int) -> list[VectorHit]:
        """Best passage per memory, highest cosine first, every filter applied before the cut."""

    def scores_for(self, query: np.ndarray, entry_ids: Sequence[str]) -> dict[str, VectorHit]:
        """The best passage cosine of each of these memories that has vectors."""

    def vector_of(self, entry_id: str) -> np.ndarray | None:
        """A representative vector of a memory (its first passage), for diversity."""

    def vectors_of(self, entry_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The representative vector of each of these memories that has one, read at once."""
