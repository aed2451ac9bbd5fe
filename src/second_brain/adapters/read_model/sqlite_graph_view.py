"""The graph a dashboard draws, in SQLite: the most linked memories in scope, a level of neighbours at a time,
and the edges among the memories shown."""

from collections.abc import Sequence

from ...domain.brief import HIDDEN
from ...ports.read_model import EdgeRow, EntryRow, Filters
from .sqlite_sql import SQLiteReads, marks, newest_in_scope, row_of, scope_sql

SHOWN = f"NOT EXISTS (SELECT 1 FROM entry_tags h WHERE h.entry_rid = e.rid AND h.tag IN ({marks(HIDDEN)}))"
# Named apart from the entry's own columns (both have created_at) where a row holds the two.
EDGE = ("x.source_id AS edge_source, x.target_id AS edge_target, x.type AS edge_type, x.weight AS edge_weight,"
        " x.provenance AS edge_provenance, x.created_at AS edge_created_at")


class SQLiteGraphView(SQLiteReads):
    def hubs(self, filters: Filters, limit: int) -> list[EntryRow]:
        if not filters.workspaces:
            return []
        where, params = scope_sql(filters, by_id=True)
        scope = marks(filters.workspaces)
        # Degrees from the edges made in scope (a pass over the edges, not the memories), then their ends.
        rows = self._read(
            "SELECT e.* FROM (SELECT id, COUNT(*) AS n FROM (SELECT source_id AS id FROM edges x"
            f" WHERE x.workspace IN ({scope}) UNION ALL SELECT target_id FROM edges x WHERE x.workspace IN ({scope}))"
            f" GROUP BY id) d CROSS JOIN entries e ON e.id = d.id WHERE {where} AND {SHOWN}"
            " ORDER BY d.n DESC, e.importance_score DESC, e.created_at DESC, e.id LIMIT ?",
            (*filters.workspaces, *filters.workspaces, *params, *HIDDEN, limit),
        ).fetchall()
        found = [row_of(r) for r in rows]
        if len(found) < limit:  # too few linked memories: the newest others fill the rest
            seen = {row.id for row in found}
            sql, params = newest_in_scope("e.*", filters, limit, SHOWN, HIDDEN)
            found += [row for row in map(row_of, self._read(sql, params).fetchall()) if row.id not in seen]
        return found[:limit]

    def linked(self, ids: Sequence[str], workspaces: Sequence[str], limit: int) -> list[tuple[EdgeRow, EntryRow]]:
        if not ids or not workspaces:
            return []
        scope = marks(workspaces)
        rows = self._read(
            f"SELECT {EDGE}, e.* FROM (SELECT *, target_id AS other FROM edges WHERE source_id IN ({marks(ids)})"
            f" UNION ALL SELECT *, source_id FROM edges WHERE target_id IN ({marks(ids)})) x"
            f" JOIN entries e ON e.id = x.other WHERE x.workspace IN ({scope}) AND +e.workspace IN ({scope})"
            f" AND {SHOWN} ORDER BY x.weight DESC, x.created_at DESC, x.other LIMIT ?",
            (*ids, *ids, *workspaces, *workspaces, *HIDDEN, limit),
        ).fetchall()
        return [(EdgeRow(*r[:6]), row_of(r)) for r in rows]

    def edges_among(self, ids: Sequence[str], workspaces: Sequence[str]) -> list[EdgeRow]:
        if not ids or not workspaces:
            return []
        rows = self._read(
            f"SELECT {EDGE} FROM edges x WHERE x.source_id IN ({marks(ids)}) AND x.target_id IN ({marks(ids)})"
            f" AND x.workspace IN ({marks(workspaces)}) ORDER BY x.weight DESC, x.created_at, x.source_id,"
            " x.target_id, x.type", (*ids, *ids, *workspaces),
        ).fetchall()
        return [EdgeRow(*r) for r in rows]
