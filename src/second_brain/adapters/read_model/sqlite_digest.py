"""What compression reads in SQLite: the memories a digest may roll up, and the volumes worth one, per workspace."""

from collections.abc import Sequence

from ...domain import text
from ...domain.memory import DIGEST_MIN_ENTRIES, DIGEST_RECALL_GRACE_MS
from ...ports.read_model import EntryRow, Filters, WorkspaceTagCount
from .sqlite_sql import SQLiteReads, marks, newest_in_scope, row_of, scope_sql

# memory.digest_candidate on the entries alias `e`; parameters: CANDIDATE_PARAMS.
CANDIDATE = ("e.importance_score < ? AND e.contradiction_wins = 0 AND e.recall_count < 2 AND e.source != ?"
             " AND NOT EXISTS (SELECT 1 FROM entry_tags x WHERE x.entry_rid = e.rid AND x.tag IN"
             f" ({marks(text.NEVER_DIGESTED)}))")
CANDIDATE_PARAMS = (text.PROTECTED_IMPORTANCE, text.SYSTEM_SOURCE, *text.NEVER_DIGESTED)


class SQLiteDigestReads(SQLiteReads):
    def digest_pool(self, filters: Filters, now: int, limit: int) -> list[EntryRow]:
        # memory.digest_eligible: a candidate, and never recalled or recalled once but no longer recent
        condition = f"{CANDIDATE} AND (e.recall_count = 0 OR e.created_at < ?)"
        params = (*CANDIDATE_PARAMS, now - DIGEST_RECALL_GRACE_MS)
        tags = [t for t in (filters.tag, *filters.any_tags) if t]
        if not filters.workspaces:
            return []
        if not tags:
            sql, scoped = newest_in_scope("e.*", filters, limit, condition, params)
            return [row_of(r) for r in self._read(sql, scoped).fetchall()]
        where, scoped = scope_sql(filters)  # driven by the tags' index: a tag is a small part of a large brain
        return [row_of(r) for r in self._read(
            f"SELECT e.* FROM entries e WHERE e.rid IN (SELECT entry_rid FROM entry_tags WHERE tag IN ({marks(tags)}))"
            f" AND {where} AND {condition} ORDER BY e.created_at DESC, e.rid DESC LIMIT ?",
            (*tags, *scoped, *params, limit)).fetchall()]

    def digest_volumes(self, workspaces: Sequence[str], now: int) -> list[WorkspaceTagCount]:
        """The kept counts of candidates, less those recalled once within the grace period (found through the
        recent end of the workspace index)."""
        if not workspaces:
            return []
        held = {(ws, tag): n for ws, tag, n in self._read(
            f"SELECT e.workspace, t.tag, COUNT(*) FROM entries e JOIN entry_tags t ON t.entry_rid = e.rid"
            f" WHERE e.workspace IN ({marks(workspaces)}) AND e.created_at >= ? AND e.recall_count = 1 AND {CANDIDATE}"
            " GROUP BY e.workspace, t.tag",
            (*workspaces, now - DIGEST_RECALL_GRACE_MS, *CANDIDATE_PARAMS)).fetchall()}
        rows = self._read(
            f"SELECT workspace, tag, digest_candidates FROM tag_counts WHERE workspace IN ({marks(workspaces)})"
            " AND digest_candidates >= ?", (*workspaces, DIGEST_MIN_ENTRIES)).fetchall()
        counts = [WorkspaceTagCount(ws, tag, n - held.get((ws, tag), 0)) for ws, tag, n in rows]
        return sorted((c for c in counts if c.count >= DIGEST_MIN_ENTRIES),
                      key=lambda c: (-c.count, c.workspace, c.tag))
