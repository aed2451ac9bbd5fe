"""The index check port: the projections compared with the log they are made from, and repaired."""

from collections.abc import Sequence
from typing import Protocol


class IndexCheck(Protocol):
    def verify(self, memory_ids: Sequence[str], whole: bool = False) -> dict[str, int]:
        """Compare these memories' rows, keyword index entries and vectors with their streams and repair what
        differs; with `whole`, also the index-wide invariants (kept counts, the keyword index as a whole, vectors
        missing or stale anywhere). Counts by kind: checked, drifted, repaired, ..."""
