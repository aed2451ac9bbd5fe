"""Recalls noted outside the log, folded into it later: where appending a count on every recall would make the
log's busiest writer the one that only reads (on AWS, a recall costs one small write instead of a transaction)."""

from collections.abc import Iterator, Sequence
from typing import NamedTuple, Protocol


class Tallied(NamedTuple):
    """One recall's memories, noted: who recalled them, in which request, on which day (the brain's time zone)
    and when."""

    key: str
    actor: str
    request_id: str
    memory_ids: tuple[str, ...]
    day: str
    at: int


class RecallTally(Protocol):
    def note(self, tallied: Tallied) -> None:
        """Keep one recall's memories until the next fold."""

    def due(self, days: Sequence[str]) -> Iterator[Tallied]:
        """Every recall noted on these days and not yet dropped."""

    def drop(self, tallied: Tallied) -> None:
        """Forget a noted recall: it was folded into the log."""
