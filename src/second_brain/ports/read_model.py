"""The read model port: entries as the API shows them, and the keyword search over them."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class EntryRow:
    id: str
    content: str
    tags: tuple[str, ...]
    source: str
    workspace: str
    actor: str
    created_at: int
    updated_at: int
    importance_score: int = 0
    recall_count: int = 0
    contradiction_wins: int = 0
    contradiction_losses: int = 0
    indexed: bool = False


@dataclass(frozen=True)
class Filters:
    """Which entries a read may see: always a workspace scope, optionally narrowed."""

    workspaces: tuple[str, ...]
    tag: str | None = None
    after: int | None = None  # unix ms, inclusive
    before: int | None = None  # unix ms, inclusive
    kind: str | None = None
    actor: str | None = None


@dataclass(frozen=True)
class KeywordHit:
    entry: EntryRow
    score: float  # higher is better; comparable only within one search


@dataclass(frozen=True)
class TagCount:
    tag: str
    count: int


class ReadModel(Protocol):
    def get(self, entry_id: str, workspaces: Sequence[str]) -> EntryRow | None:
        """One entry by id, or None if it does not exist in those workspaces."""

    def recent(self, filters: Filters, limit: int) -> list[EntryRow]:
        """Newest first."""

    def count(self, workspaces: Sequence[str]) -> int:
        """Entries in those workspaces."""

    def tag_counts(self, workspaces: Sequence[str]) -> list[TagCount]:
        """Every tag in use, alphabetically, with how many entries carry it."""

    def keyword_search(self, terms: Sequence[str], short_terms: Sequence[str], filters: Filters, limit: int) -> list[KeywordHit]:
        """Entries matching any term, best first; recall exclusions and filters applied before the cut."""

    def stats(self, workspaces: Sequence[str], now: int, grace_ms: int) -> dict:
        """Summary figures for GET /stats."""
