"""The entries read model and keyword index in SQLite, projected in the append's own transaction."""

import json
import sqlite3
from collections.abc import Sequence

from ...domain import text
from ...domain.events import (
    Envelope,
    MemoryAppended,
    MemoryCaptured,
    MemoryForgotten,
    MemoryRevised,
    StatusChanged,
    TagsChanged,
)
from ...domain.memory import appended
from ...ports.read_model import EntryRow, Filters, KeywordHit, TagCount
from ..sqlite_database import SQLiteDatabase

TABLES = [
    """CREATE TABLE IF NOT EXISTS entries (
        rid INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        workspace TEXT NOT NULL,
        actor TEXT NOT NULL,
        content TEXT NOT NULL,
        tags TEXT NOT NULL,
        source TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        importance_score INTEGER NOT NULL DEFAULT 0,
        recall_count INTEGER NOT NULL DEFAULT 0,
        contradiction_wins INTEGER NOT NULL DEFAULT 0,
        contradiction_losses INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX IF NOT EXISTS entries_by_workspace ON entries (workspace, created_at DESC)",
    """CREATE TABLE IF NOT EXISTS entry_tags (
        tag TEXT NOT NULL, entry_rid INTEGER NOT NULL, PRIMARY KEY (tag, entry_rid)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS entry_tags_by_entry ON entry_tags (entry_rid)",
    # External content: the index holds trigrams only, the text lives once, in entries.
    """CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
        content, content='entries', content_rowid='rid', tokenize='trigram'
    )""",
]
NEVER_RECALLED = ("status:deprecated", "auto-insight", "auto-pattern")
ALWAYS_EXCLUDED = "NOT EXISTS (SELECT 1 FROM entry_tags x WHERE x.entry_rid = e.rid AND x.tag IN (?, ?, ?))"


class SQLiteReadModel:
    name = "entries"

    def __init__(self, db: SQLiteDatabase) -> None:
        self.db = db

    # -- projection -----------------------------------------------------------------

    def create(self, conn: sqlite3.Connection) -> None:
        for statement in TABLES:
            conn.execute(statement)

    def drop(self, conn: sqlite3.Connection) -> None:
        for table in ("entries_fts", "entry_tags", "entries"):
            conn.execute(f"DROP TABLE IF EXISTS {table}")

    def apply(self, conn: sqlite3.Connection, events: Sequence[Envelope]) -> None:
        forgot = False
        for envelope in events:
            memory_id = envelope.stream_id.removeprefix("memory-")
            event = envelope.event
            if isinstance(event, MemoryCaptured):
                cursor = conn.execute(
                    "INSERT INTO entries (id, workspace, actor, content, tags, source, created_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (memory_id, event.workspace, envelope.actor, event.content, json.dumps(event.tags),
                     event.source, envelope.at, envelope.at),
                )
                rid = cursor.lastrowid
                conn.execute("INSERT INTO entries_fts (rowid, content) VALUES (?, ?)", (rid, event.content))
                _write_tags(conn, rid, event.tags)
                continue
            row = conn.execute("SELECT rid, content, tags FROM entries WHERE id = ?", (memory_id,)).fetchone()
            if row is None:
                continue  # an erased stream being replayed: nothing to show
            if isinstance(event, (MemoryAppended, MemoryRevised)):
                content = appended(row["content"], event) if isinstance(event, MemoryAppended) else event.content
                conn.execute("INSERT INTO entries_fts (entries_fts, rowid, content) VALUES ('delete', ?, ?)",
                             (row["rid"], row["content"]))
                conn.execute("UPDATE entries SET content = ?, updated_at = ? WHERE rid = ?",
                             (content, envelope.at, row["rid"]))
                conn.execute("INSERT INTO entries_fts (rowid, content) VALUES (?, ?)", (row["rid"], content))
            elif isinstance(event, (TagsChanged, StatusChanged)):
                tags = event.tags if isinstance(event, TagsChanged) else tuple(
                    text.with_prefixed(json.loads(row["tags"]), "status:", event.status))
                conn.execute("UPDATE entries SET tags = ?, updated_at = ? WHERE rid = ?",
                             (json.dumps(tags), envelope.at, row["rid"]))
                conn.execute("DELETE FROM entry_tags WHERE entry_rid = ?", (row["rid"],))
                _write_tags(conn, row["rid"], tags)
            elif isinstance(event, MemoryForgotten):
                conn.execute("INSERT INTO entries_fts (entries_fts, rowid, content) VALUES ('delete', ?, ?)",
                             (row["rid"], row["content"]))
                conn.execute("DELETE FROM entry_tags WHERE entry_rid = ?", (row["rid"],))
                conn.execute("DELETE FROM entries WHERE rid = ?", (row["rid"],))
                forgot = True
        if forgot:
            # Merge the index segments so no trigram of the forgotten text survives in the file.
            conn.execute("INSERT INTO entries_fts (entries_fts) VALUES ('optimize')")

    # -- queries ----------------------------------------------------------------------

    def get(self, entry_id: str, workspaces: Sequence[str]) -> EntryRow | None:
        where, params = _where(Filters(tuple(workspaces)))
        row = self._read(f"SELECT e.* FROM entries e WHERE e.id = ? AND {where}", (entry_id, *params)).fetchone()
        return _row(row) if row else None

    def recent(self, filters: Filters, limit: int) -> list[EntryRow]:
        where, params = _where(filters)
        rows = self._read(
            f"SELECT e.* FROM entries e WHERE {where} ORDER BY e.created_at DESC, e.rid DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [_row(r) for r in rows]

    def count(self, workspaces: Sequence[str]) -> int:
        where, params = _where(Filters(tuple(workspaces)))
        return self._read(f"SELECT COUNT(*) FROM entries e WHERE {where}", params).fetchone()[0]

    def tag_counts(self, workspaces: Sequence[str]) -> list[TagCount]:
        where, params = _where(Filters(tuple(workspaces)))
        rows = self._read(
            f"SELECT t.tag, COUNT(*) FROM entry_tags t JOIN entries e ON e.rid = t.entry_rid WHERE {where}"
            " GROUP BY t.tag ORDER BY t.tag",
            params,
        ).fetchall()
        return [TagCount(tag, count) for tag, count in rows]

    def keyword_search(
        self, terms: Sequence[str], short_terms: Sequence[str], filters: Filters, limit: int
    ) -> list[KeywordHit]:
        where, params = _where(filters)
        where = f"{where} AND {ALWAYS_EXCLUDED}"
        params = (*params, *NEVER_RECALLED)
        if terms:
            match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
            rows = self._read(
                f"SELECT e.*, -bm25(entries_fts) AS score FROM entries_fts JOIN entries e ON e.rid = entries_fts.rowid"
                f" WHERE entries_fts MATCH ? AND {where} ORDER BY bm25(entries_fts) LIMIT ?",
                (match, *params, limit),
            ).fetchall()
        elif short_terms:
            # Words under three characters cannot match a trigram: scan, newest first, bounded.
            likes = " OR ".join("e.content LIKE ? ESCAPE '\\'" for _ in short_terms)
            rows = self._read(
                f"SELECT e.*, 1.0 AS score FROM entries e WHERE ({likes}) AND {where}"
                " ORDER BY e.created_at DESC LIMIT ?",
                (*(f"%{_escape_like(t)}%" for t in short_terms), *params, limit),
            ).fetchall()
        else:
            return []
        return [KeywordHit(_row(r), float(r["score"])) for r in rows]

    def stats(self, workspaces: Sequence[str], now: int, grace_ms: int) -> dict:
        where, params = _where(Filters(tuple(workspaces)))
        count, avg = self._read(
            f"SELECT COUNT(*), AVG(importance_score) FROM entries e WHERE {where}", params
        ).fetchone()
        unclassified = self._read(
            f"SELECT COUNT(*) FROM entries e WHERE {where} AND NOT EXISTS (SELECT 1 FROM entry_tags t"
            " WHERE t.entry_rid = e.rid AND (t.tag LIKE 'status:%' OR t.tag LIKE 'kind:%'))",
            params,
        ).fetchone()[0]
        # Nothing is embedded yet in this build: every entry past the grace window lacks vectors.
        unvectorized = self._read(
            f"SELECT COUNT(*) FROM entries e WHERE {where} AND e.created_at < ?", (*params, now - grace_ms)
        ).fetchone()[0]
        topics = [tc for tc in self.tag_counts(workspaces) if text.is_topic_tag(tc.tag)]
        top = sorted(topics, key=lambda tc: (-tc.count, tc.tag))[:5]
        return {
            "count": count,
            "avg_importance": None if avg is None else round(avg, 1),
            "top_tags": [tc.tag for tc in top],
            "digest_candidates": self._digest_candidates(where, params, now),
            "unvectorized": unvectorized,
            "unclassified": unclassified,
        }

    def _digest_candidates(self, where: str, params: Sequence[object], now: int) -> list[dict]:
        sixty_days = 60 * 24 * 3600 * 1000
        rows = self._read(
            f"SELECT t.tag, COUNT(*) FROM entry_tags t JOIN entries e ON e.rid = t.entry_rid WHERE {where}"
            " AND e.importance_score < 4 AND e.contradiction_wins = 0"
            " AND (e.recall_count = 0 OR (e.recall_count < 2 AND e.created_at < ?))"
            " AND NOT EXISTS (SELECT 1 FROM entry_tags x WHERE x.entry_rid = e.rid"
            "   AND x.tag IN ('synthesized', 'auto-pattern', 'auto-insight', 'rolled-up'))"
            " GROUP BY t.tag HAVING COUNT(*) >= 10 ORDER BY COUNT(*) DESC, t.tag",
            (*params, now - sixty_days),
        ).fetchall()
        return [{"tag": tag, "count": n} for tag, n in rows if text.is_topic_tag(tag)][:10]

    def _read(self, sql: str, params: Sequence[object]) -> sqlite3.Cursor:
        return self.db.connection().execute(sql, tuple(params))


def _write_tags(conn: sqlite3.Connection, rid: int, tags: Sequence[str]) -> None:
    conn.executemany("INSERT OR IGNORE INTO entry_tags (tag, entry_rid) VALUES (?, ?)", [(t, rid) for t in tags])


def _where(filters: Filters) -> tuple[str, list[object]]:
    """SQL conditions on the entries alias `e` for a filter set; the workspace scope is never optional."""
    if not filters.workspaces:
        return "0", []
    clauses = [f"e.workspace IN ({', '.join('?' for _ in filters.workspaces)})"]
    params: list[object] = list(filters.workspaces)
    for tag in (filters.tag, f"kind:{filters.kind}" if filters.kind else None):
        if tag:
            clauses.append("EXISTS (SELECT 1 FROM entry_tags f WHERE f.entry_rid = e.rid AND f.tag = ?)")
            params.append(tag)
    if filters.after is not None:
        clauses.append("e.created_at >= ?")
        params.append(filters.after)
    if filters.before is not None:
        clauses.append("e.created_at <= ?")
        params.append(filters.before)
    if filters.actor is not None:
        clauses.append("e.actor = ?")
        params.append(filters.actor)
    return " AND ".join(clauses), params


def _escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _row(row: sqlite3.Row) -> EntryRow:
    return EntryRow(
        id=row["id"], content=row["content"], tags=tuple(json.loads(row["tags"])), source=row["source"],
        workspace=row["workspace"], actor=row["actor"], created_at=row["created_at"],
        updated_at=row["updated_at"], importance_score=row["importance_score"], recall_count=row["recall_count"],
        contradiction_wins=row["contradiction_wins"], contradiction_losses=row["contradiction_losses"],
    )
