"""The read model in SQLite: entries as the API shows them, the graph, projects and exports; with keyword
search (sqlite_search.py) and stats (sqlite_stats.py), every read port over one database. The tables are
written by the projection in sqlite_projection.py."""

import json
from collections.abc import Sequence

from ...ports.read_model import Connection, EdgeRow, EntryRow, Filters, LinkedPair, ProjectRow
from .sqlite_brief import SQLiteBriefReads
from .sqlite_digest import SQLiteDigestReads
from .sqlite_graph_view import SQLiteGraphView
from .sqlite_search import SQLiteKeywordSearch
from .sqlite_sql import NOT_DEPRECATED, marks, newest_in_scope, row_of, scope_sql
from .sqlite_stats import SQLiteStats

# LIST_ORDERS as SQL; rid (insertion order) breaks ties as OpenSearch's seq does.
ORDER_SQL = {"oldest": "e.created_at ASC, e.rid ASC", "updated": "e.updated_at DESC, e.rid DESC",
             "important": "e.importance_score DESC, e.created_at DESC, e.rid DESC"}


class SQLiteReadModel(SQLiteKeywordSearch, SQLiteStats, SQLiteBriefReads, SQLiteGraphView, SQLiteDigestReads):
    def get(self, entry_id: str, workspaces: Sequence[str]) -> EntryRow | None:
        where, params = scope_sql(Filters(tuple(workspaces)), by_id=True)
        row = self._read(f"SELECT e.* FROM entries e WHERE e.id = ? AND {where}", (entry_id, *params)).fetchone()
        return row_of(row) if row else None

    def many(self, entry_ids: Sequence[str], workspaces: Sequence[str]) -> dict[str, EntryRow]:
        ids = list(dict.fromkeys(entry_ids))
        if not ids or not workspaces:
            return {}
        where, params = scope_sql(Filters(tuple(workspaces)), by_id=True)
        rows = self._read(f"SELECT e.* FROM entries e WHERE e.id IN ({marks(ids)}) AND {where}",
                          (*ids, *params)).fetchall()
        return {row.id: row for row in map(row_of, rows)}

    def recent(self, filters: Filters, limit: int, order: str = "newest", offset: int = 0) -> list[EntryRow]:
        if not filters.workspaces:
            return []
        if order == "newest":
            sql, params = newest_in_scope("e.*", filters, limit + offset)
            return [row_of(r) for r in self._read(sql, params).fetchall()[offset:]]
        where, params = scope_sql(filters)
        rows = self._read(f"SELECT e.* FROM entries e WHERE {where} ORDER BY {ORDER_SQL[order]} LIMIT ? OFFSET ?",
                          (*params, limit, offset)).fetchall()
        return [row_of(r) for r in rows]

    def count(self, workspaces: Sequence[str]) -> int:
        return self._read(f"SELECT COALESCE(SUM(n), 0) FROM workspace_counts WHERE workspace IN ({marks(workspaces)})",
                          tuple(workspaces)).fetchone()[0]

    def count_matching(self, filters: Filters) -> int:
        if not filters.workspaces:
            return 0
        where, params = scope_sql(filters)
        found: int = self._read(f"SELECT COUNT(*) FROM entries e WHERE {where}", params).fetchone()[0]
        return found

    def connections(self, entry_id: str, workspaces: Sequence[str], link_type: str | None, limit: int,
                    superseded: bool = False, deprecated: bool = False) -> list[Connection]:
        where, params = scope_sql(Filters(tuple(workspaces)), by_id=True)
        typed = " AND type = ?" if link_type else ""
        visible = f"(x.type = 'supersedes' OR {NOT_DEPRECATED})" if superseded else NOT_DEPRECATED
        visible = "1" if deprecated else visible
        rows = self._read(
            "SELECT e.*, x.type AS link_type, x.weight, x.provenance, x.created_at AS linked_at, x.outgoing FROM ("
            " SELECT target_id AS other, type, weight, provenance, created_at, 1 AS outgoing FROM edges"
            f" WHERE source_id = ?{typed}"
            " UNION ALL"
            f" SELECT source_id, type, weight, provenance, created_at, 0 FROM edges WHERE target_id = ?{typed}"
            f") x JOIN entries e ON e.id = x.other WHERE {where} AND {visible}"
            " ORDER BY x.weight DESC, x.created_at DESC LIMIT ?",
            (entry_id, *([link_type] if link_type else []), entry_id, *([link_type] if link_type else []),
             *params, limit),
        ).fetchall()
        return [Connection(row_of(r), r["link_type"], r["weight"], r["provenance"], r["linked_at"], bool(r["outgoing"]))
                for r in rows]

    def linked_pairs(self, ids: Sequence[str], workspaces: Sequence[str], types: Sequence[str]) -> list[LinkedPair]:
        if not ids or not workspaces or not types:
            return []
        kinds, keys = marks(types), marks(ids)
        edges = [EdgeRow(*r) for r in self._read(
            "SELECT source_id, target_id, type, weight, provenance, created_at FROM edges"
            f" WHERE source_id IN ({keys}) AND type IN ({kinds})"
            " UNION SELECT source_id, target_id, type, weight, provenance, created_at FROM edges"
            f" WHERE target_id IN ({keys}) AND type IN ({kinds})"
            " ORDER BY created_at DESC, source_id, target_id, type", (*ids, *types, *ids, *types),
        ).fetchall()]
        ends = list({end for edge in edges for end in (edge.source_id, edge.target_id)})
        rows = {row.id: row for row in map(row_of, self._read(
            f"SELECT e.* FROM entries e WHERE e.id IN ({marks(ends)}) AND +e.workspace IN ({marks(workspaces)})",
            (*ends, *workspaces)).fetchall())} if ends else {}
        return [LinkedPair(edge, rows[edge.source_id], rows[edge.target_id]) for edge in edges
                if edge.source_id in rows and edge.target_id in rows]

    def all_entries(self, workspaces: Sequence[str]) -> list[EntryRow]:
        marks = ", ".join("?" for _ in workspaces)
        rows = self._read(f"SELECT e.* FROM entries e WHERE e.workspace IN ({marks}) ORDER BY e.created_at, e.rid",
                          tuple(workspaces)).fetchall()
        return [row_of(r) for r in rows]

    def all_edges(self, workspaces: Sequence[str]) -> list[EdgeRow]:
        """Edges with both ends readable: an end shared or taken back since the link was made may be elsewhere."""
        marks = ", ".join("?" for _ in workspaces)
        rows = self._read(
            "SELECT x.source_id, x.target_id, x.type, x.weight, x.provenance, x.created_at FROM edges x"
            " JOIN entries s ON s.id = x.source_id JOIN entries t ON t.id = x.target_id"
            f" WHERE s.workspace IN ({marks}) AND t.workspace IN ({marks})"
            " ORDER BY x.created_at, x.source_id, x.target_id, x.type", (*workspaces, *workspaces),
        ).fetchall()
        return [EdgeRow(*r) for r in rows]

    def anchored(self, workspaces: Sequence[str], before: int, after: int | None = None) -> list[EntryRow]:
        where, params = scope_sql(Filters(tuple(workspaces)))
        rows = self._read(
            f"SELECT e.* FROM entries e WHERE e.when_at IS NOT NULL AND e.when_at < ? AND e.when_at >= ? AND {where}"
            f" AND {NOT_DEPRECATED} ORDER BY e.when_at",
            (before, -(2**63) if after is None else after, *params),
        ).fetchall()
        return [row_of(r) for r in rows]

    def loops(self, workspaces: Sequence[str], limit: int, offset: int) -> tuple[list[EntryRow], int]:
        where, params = scope_sql(Filters(tuple(workspaces), tag="task"))
        total = self._read(f"SELECT COUNT(*) FROM entries e WHERE {where}", params).fetchone()[0]
        rows = self._read(
            f"SELECT e.* FROM entries e WHERE {where} ORDER BY e.created_at DESC, e.rid DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()
        return [row_of(r) for r in rows], total

    def projects(self, workspaces: Sequence[str], include_archived: bool = True) -> list[ProjectRow]:
        marks = ", ".join("?" for _ in workspaces)
        archived = "" if include_archived else " AND status = 'active'"
        rows = self._read(
            f"SELECT * FROM projects WHERE workspace IN ({marks}){archived} ORDER BY name COLLATE NOCASE, slug",
            tuple(workspaces),
        ).fetchall() if workspaces else []
        return [ProjectRow(r["slug"], r["workspace"], r["name"], r["description"], tuple(json.loads(r["aliases"])),
                           r["status"], r["created_at"], r["updated_at"]) for r in rows]

