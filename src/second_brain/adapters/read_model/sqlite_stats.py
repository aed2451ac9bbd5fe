"""Summary figures for GET /stats in SQLite."""

from collections.abc import Sequence

from ...domain import text
from ...domain.memory import DIGEST_MIN_ENTRIES, DIGEST_RECALL_GRACE_MS
from ...ports.read_model import BrainStats, Filters, TagCount
from .sqlite_sql import SQLiteReads, scope_sql


class SQLiteStats(SQLiteReads):
    def tag_counts(self, workspaces: Sequence[str]) -> list[TagCount]:
        where, params = scope_sql(Filters(tuple(workspaces)))
        rows = self._read(
            f"SELECT t.tag, COUNT(*) FROM entry_tags t JOIN entries e ON e.rid = t.entry_rid WHERE {where}"
            " GROUP BY t.tag ORDER BY t.tag",
            params,
        ).fetchall()
        return [TagCount(tag, count) for tag, count in rows]

    def tag_count(self, tag: str, workspaces: Sequence[str]) -> int:
        where, params = scope_sql(Filters(tuple(workspaces)))
        return self._read(
            f"SELECT COUNT(*) FROM entry_tags t JOIN entries e ON e.rid = t.entry_rid WHERE t.tag = ? AND {where}",
            (tag, *params),
        ).fetchone()[0]

    def stats(self, workspaces: Sequence[str], now: int) -> BrainStats:
        where, params = scope_sql(Filters(tuple(workspaces)))
        count, avg = self._read(
            f"SELECT COUNT(*), AVG(importance_score) FROM entries e WHERE {where}", params
        ).fetchone()
        unclassified = self._read(
            f"SELECT COUNT(*) FROM entries e WHERE {where} AND NOT EXISTS (SELECT 1 FROM entry_tags t"
            " WHERE t.entry_rid = e.rid AND (t.tag LIKE 'status:%' OR t.tag LIKE 'kind:%'))",
            params,
        ).fetchone()[0]
        return BrainStats(count, None if avg is None else round(avg, 1), tuple(self.tag_counts(workspaces)),
                          self._digest_candidates(where, params, now), unclassified)

    def _digest_candidates(self, where: str, params: Sequence[object], now: int) -> tuple[TagCount, ...]:
        # memory.digest_eligible, in SQL
        never = ", ".join("?" for _ in text.NEVER_DIGESTED)
        rows = self._read(
            f"SELECT t.tag, COUNT(*) FROM entry_tags t JOIN entries e ON e.rid = t.entry_rid WHERE {where}"
            " AND e.importance_score < ? AND e.contradiction_wins = 0"
            " AND (e.recall_count = 0 OR (e.recall_count < 2 AND e.created_at < ?))"
            f" AND NOT EXISTS (SELECT 1 FROM entry_tags x WHERE x.entry_rid = e.rid AND x.tag IN ({never}))"
            " GROUP BY t.tag HAVING COUNT(*) >= ? ORDER BY COUNT(*) DESC, t.tag",
            (*params, text.PROTECTED_IMPORTANCE, now - DIGEST_RECALL_GRACE_MS, *text.NEVER_DIGESTED,
             DIGEST_MIN_ENTRIES),
        ).fetchall()
        return tuple(TagCount(tag, n) for tag, n in rows)
