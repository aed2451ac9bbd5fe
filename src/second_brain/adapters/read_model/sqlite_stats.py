"""Summary figures for GET /stats in SQLite."""

from collections.abc import Sequence

from ...domain.memory import DIGEST_MIN_ENTRIES, DIGEST_RECALL_GRACE_MS
from ...ports.read_model import BrainStats, Filters, TagCount
from .sqlite_digest import CANDIDATE, CANDIDATE_PARAMS
from .sqlite_sql import SQLiteReads, marks, scope_sql


class SQLiteStats(SQLiteReads):
    """Read from the counts the projection keeps (`workspace_counts`, `tag_counts`): a few rows, at any size."""

    def tag_counts(self, workspaces: Sequence[str]) -> list[TagCount]:
        rows = self._read(
            f"SELECT tag, SUM(n) FROM tag_counts WHERE workspace IN ({marks(workspaces)}) GROUP BY tag"
            " HAVING SUM(n) > 0 ORDER BY tag",
            tuple(workspaces),
        ).fetchall()
        return [TagCount(tag, count) for tag, count in rows]

    def tag_count(self, tag: str, workspaces: Sequence[str]) -> int:
        return self._read(
            f"SELECT COALESCE(SUM(n), 0) FROM tag_counts WHERE tag = ? AND workspace IN ({marks(workspaces)})",
            (tag, *workspaces),
        ).fetchone()[0]

    def stats(self, workspaces: Sequence[str], now: int) -> BrainStats:
        count, importance, unclassified = self._read(
            "SELECT COALESCE(SUM(n), 0), COALESCE(SUM(importance), 0), COALESCE(SUM(unclassified), 0)"
            f" FROM workspace_counts WHERE workspace IN ({marks(workspaces)})",
            tuple(workspaces),
        ).fetchone()
        return BrainStats(count, round(importance / count, 1) if count else None, tuple(self.tag_counts(workspaces)),
                          self._digest_candidates(workspaces, now), unclassified)

    def _digest_candidates(self, workspaces: Sequence[str], now: int) -> tuple[TagCount, ...]:
        """memory.digest_eligible: the kept count of `digest_candidate`s, less those recalled once lately (found
        through the recent end of the workspace index, however large the brain)."""
        where, params = scope_sql(Filters(tuple(workspaces)))
        held = dict(self._read(
            f"SELECT t.tag, COUNT(*) FROM entries e JOIN entry_tags t ON t.entry_rid = e.rid WHERE {where}"
            f" AND e.created_at >= ? AND e.recall_count = 1 AND {CANDIDATE} GROUP BY t.tag",
            (*params, now - DIGEST_RECALL_GRACE_MS, *CANDIDATE_PARAMS),
        ).fetchall())
        counts = {tag: n - held.get(tag, 0) for tag, n in self._read(
            f"SELECT tag, SUM(digest_candidates) FROM tag_counts WHERE workspace IN ({marks(workspaces)})"
            " GROUP BY tag", tuple(workspaces)).fetchall()}
        return tuple(TagCount(tag, n) for tag, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
                     if n >= DIGEST_MIN_ENTRIES)
