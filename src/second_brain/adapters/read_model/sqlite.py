"""The entries read model and keyword index in SQLite, projected in the append's own transaction."""

import itertools
import json
import sqlite3
import time
from collections.abc import Iterator, Sequence

import numpy as np

from ...domain import text
from ...domain.events import Envelope
from ...domain.links import LinkCreated, LinkRemoved
from ...domain.memory import DIGEST_MIN_ENTRIES, DIGEST_RECALL_GRACE_MS, Memory, fold
from ...domain.projects import (
    ProjectCreated,
    ProjectDeleted,
    ProjectImported,
    ProjectUpdated,
)
from ...ports.read_model import (
    Connection,
    EdgeRow,
    EntryRow,
    Filters,
    KeywordHit,
    ProjectRow,
    TagCount,
    TermStats,
)
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
        contradiction_losses INTEGER NOT NULL DEFAULT 0,
        content_version INTEGER NOT NULL DEFAULT 1,
        when_at INTEGER,
        when_kind TEXT,
        last_recalled TEXT NOT NULL DEFAULT '',
        version INTEGER NOT NULL,
        position INTEGER NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS entries_by_anchor ON entries (when_at) WHERE when_at IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS entries_by_workspace ON entries (workspace, created_at DESC)",
    """CREATE TABLE IF NOT EXISTS entry_tags (
        tag TEXT NOT NULL, entry_rid INTEGER NOT NULL, PRIMARY KEY (tag, entry_rid)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS entry_tags_by_entry ON entry_tags (entry_rid)",
    # External content: the index holds trigrams only, the text lives once, in entries.
    """CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
        content, content='entries', content_rowid='rid', tokenize='trigram'
    )""",
    "CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts_vocab USING fts5vocab(entries_fts, 'row')",
    "CREATE TABLE IF NOT EXISTS entry_counts (workspace TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID",
    """CREATE TABLE IF NOT EXISTS edges (
        source_id TEXT NOT NULL, target_id TEXT NOT NULL, type TEXT NOT NULL, weight REAL NOT NULL,
        provenance TEXT NOT NULL, workspace TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
        PRIMARY KEY (source_id, target_id, type)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS edges_by_target ON edges (target_id)",
    """CREATE TABLE IF NOT EXISTS projects (
        workspace TEXT NOT NULL, slug TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
        aliases TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER,
        PRIMARY KEY (workspace, slug)
    ) WITHOUT ROWID""",
]
# The columns the fold of a memory is written to, in the order _project_memory gives their values.
STATE_COLUMNS = ("workspace", "actor", "content", "tags", "source", "created_at", "updated_at", "importance_score",
                 "recall_count", "last_recalled", "contradiction_wins", "contradiction_losses", "content_version",
                 "when_at", "when_kind", "version", "position")
EXACT_DF_LIMIT = 2000  # count a word exactly when its rarest trigram is in at most this many memories
SHORT_TERM_SAMPLE = 200
DF_CACHE_SECONDS = 60.0
DF_CACHE_SIZE = 50_000
NOT_DEPRECATED = "NOT EXISTS (SELECT 1 FROM entry_tags d WHERE d.entry_rid = e.rid AND d.tag = 'status:deprecated')"
ALWAYS_EXCLUDED = "NOT EXISTS (SELECT 1 FROM entry_tags x WHERE x.entry_rid = e.rid AND x.tag IN (?, ?, ?))"


class SQLiteReadModel:
    name = "entries"
    schema = 7

    def __init__(self, db: SQLiteDatabase) -> None:
        self.db = db
        self._df_cache: dict[str, tuple[int, float]] = {}

    # -- projection -----------------------------------------------------------------

    def create(self, conn: sqlite3.Connection) -> None:
        for statement in TABLES:
            conn.execute(statement)

    def drop(self, conn: sqlite3.Connection) -> None:
        for table in ("entries_fts_vocab", "entries_fts", "entry_tags", "entry_counts", "edges", "projects", "entries"):
            conn.execute(f"DROP TABLE IF EXISTS {table}")

    def apply(self, conn: sqlite3.Connection, events: Sequence[Envelope]) -> None:
        forgot = False
        for stream_id, run in _runs(events):
            if stream_id.startswith("memory-"):
                forgot |= _project_memory(conn, stream_id.removeprefix("memory-"), run)
                continue
            for envelope in run:
                if isinstance(envelope.event, (LinkCreated, LinkRemoved)):
                    _apply_link(conn, envelope.event, envelope.at)
                elif isinstance(envelope.event, (ProjectCreated, ProjectImported, ProjectUpdated, ProjectDeleted)):
                    _apply_project(conn, envelope)
        if forgot:
            # Merge the index segments so no trigram of the forgotten text survives in the file.
            conn.execute("INSERT INTO entries_fts (entries_fts) VALUES ('optimize')")

    # -- queries ----------------------------------------------------------------------

    def get(self, entry_id: str, workspaces: Sequence[str]) -> EntryRow | None:
        where, params = _where(Filters(tuple(workspaces)), by_id=True)
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

    def term_stats(self, terms: Sequence[str], workspaces: Sequence[str]) -> TermStats:
        conn = self.db.connection()
        marks = ", ".join("?" for _ in workspaces)
        total = conn.execute(f"SELECT COALESCE(SUM(n), 0) FROM entry_counts WHERE workspace IN ({marks})",
                             tuple(workspaces)).fetchone()[0] if workspaces else 0
        df: dict[str, int] = {}
        for term in terms:
            if len(term) >= 3:
                # A word occurs in at most as many memories as its rarest trigram: an exact count only when cheap.
                bound = min(self._trigram_df(conn, term[i : i + 3]) for i in range(len(term) - 2))
                df[term] = bound if bound > EXACT_DF_LIMIT else conn.execute(
                    "SELECT COUNT(*) FROM entries_fts WHERE entries_fts MATCH ?", (_phrase(term),)).fetchone()[0]
            else:
                sample = conn.execute(
                    "SELECT SUM(content LIKE ? ESCAPE '\\'), COUNT(*) FROM"
                    " (SELECT content FROM entries ORDER BY rid DESC LIMIT ?)",
                    (f"%{_escape_like(term)}%", SHORT_TERM_SAMPLE),
                ).fetchone()
                df[term] = round((sample[0] or 0) * total / sample[1]) if sample[1] else 0
        return TermStats(total=total, df=df)

    def _trigram_df(self, conn: sqlite3.Connection, trigram: str) -> int:
        # Counting a common trigram walks its whole doclist: cache counts briefly, idf need not be exact.
        trigram = trigram.lower()
        cached = self._df_cache.get(trigram)
        now = time.monotonic()
        if cached and now - cached[1] < DF_CACHE_SECONDS:
            return cached[0]
        row = conn.execute("SELECT doc FROM entries_fts_vocab WHERE term = ?", (trigram,)).fetchone()
        if len(self._df_cache) > DF_CACHE_SIZE:
            self._df_cache.clear()
        self._df_cache[trigram] = (row[0] if row else 0, now)
        return self._df_cache[trigram][0]

    def keyword_search(self, terms: Sequence[str], filters: Filters, limit: int, require_all: bool = False,
                       newest_first: bool = False) -> list[KeywordHit]:
        if not terms:
            return []
        where, params = _recall_where(filters)
        match = (" AND " if require_all else " OR ").join(_phrase(t) for t in terms)
        # bm25 must score every match before it can sort; rowid order streams and stops at the limit.
        order = "entries_fts.rowid DESC" if newest_first else "bm25(entries_fts)"
        rows = self._read(
            f"SELECT e.*, -bm25(entries_fts) AS score FROM entries_fts JOIN entries e ON e.rid = entries_fts.rowid"
            f" WHERE entries_fts MATCH ? AND {where} ORDER BY {order} LIMIT ?",
            (match, *params, limit),
        ).fetchall()
        return [KeywordHit(_row(r), float(r["score"])) for r in rows]

    def scan_search(self, terms: Sequence[str], filters: Filters, limit: int) -> list[KeywordHit]:
        if not terms:
            return []
        where, params = _recall_where(filters)
        likes = " OR ".join("e.content LIKE ? ESCAPE '\\'" for _ in terms)
        rows = self._read(
            f"SELECT e.* FROM entries e WHERE ({likes}) AND {where} ORDER BY e.created_at DESC LIMIT ?",
            (*(f"%{_escape_like(t)}%" for t in terms), *params, limit),
        ).fetchall()
        return [KeywordHit(_row(r), 0.0) for r in rows]

    def hydrate(self, ids: Sequence[str], filters: Filters) -> dict[str, EntryRow]:
        where, params = _recall_where(filters, by_id=True)
        found: dict[str, EntryRow] = {}
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            rows = self._read(
                f"SELECT e.* FROM entries e WHERE e.id IN ({', '.join('?' for _ in batch)}) AND {where}",
                (*batch, *params),
            ).fetchall()
            found.update({r["id"]: _row(r) for r in rows})
        return found

    def neighbours(self, entries: Sequence[EntryRow], reach: int, window_ms: int) -> dict[str, list[tuple[str, int]]]:
        found: dict[str, list[tuple[str, int]]] = {}
        for entry in entries:
            near: list[tuple[str, int]] = []
            for op, order, low, high in (("<", "DESC", entry.created_at - window_ms, entry.created_at),
                                         (">", "ASC", entry.created_at, entry.created_at + window_ms)):
                rows = self._read(
                    f"SELECT id FROM entries WHERE workspace = ? AND created_at BETWEEN ? AND ? AND source = ?"
                    f" AND (created_at, rid) {op} (?, (SELECT rid FROM entries WHERE id = ?))"
                    f" ORDER BY created_at {order}, rid {order} LIMIT ?",
                    (entry.workspace, low, high, entry.source, entry.created_at, entry.id, reach),
                ).fetchall()
                near.extend((row[0], step) for step, row in enumerate(rows, start=1))
            found[entry.id] = near
        return found

    def connections(self, entry_id: str, workspaces: Sequence[str], link_type: str | None, limit: int,
                    superseded: bool = False) -> list[Connection]:
        where, params = _where(Filters(tuple(workspaces)), by_id=True)
        typed = " AND type = ?" if link_type else ""
        visible = f"(x.type = 'supersedes' OR {NOT_DEPRECATED})" if superseded else NOT_DEPRECATED
        rows = self._read(
            "SELECT e.*, x.type AS link_type, x.weight, x.provenance, x.created_at AS linked_at FROM ("
            f" SELECT target_id AS other, type, weight, provenance, created_at FROM edges WHERE source_id = ?{typed}"
            " UNION ALL"
            f" SELECT source_id, type, weight, provenance, created_at FROM edges WHERE target_id = ?{typed}"
            f") x JOIN entries e ON e.id = x.other WHERE {where} AND {visible}"
            " ORDER BY x.weight DESC, x.created_at DESC LIMIT ?",
            (entry_id, *([link_type] if link_type else []), entry_id, *([link_type] if link_type else []),
             *params, limit),
        ).fetchall()
        return [Connection(_row(r), r["link_type"], r["weight"], r["provenance"], r["linked_at"]) for r in rows]

    def all_entries(self, workspaces: Sequence[str]) -> list[EntryRow]:
        marks = ", ".join("?" for _ in workspaces)
        rows = self._read(f"SELECT e.* FROM entries e WHERE e.workspace IN ({marks}) ORDER BY e.created_at, e.rid",
                          tuple(workspaces)).fetchall()
        return [_row(r) for r in rows]

    def all_edges(self, workspaces: Sequence[str]) -> list[EdgeRow]:
        marks = ", ".join("?" for _ in workspaces)
        rows = self._read(
            "SELECT source_id, target_id, type, weight, provenance, created_at FROM edges"
            f" WHERE workspace IN ({marks}) ORDER BY created_at, source_id, target_id, type", tuple(workspaces),
        ).fetchall()
        return [EdgeRow(*r) for r in rows]

    def anchored(self, workspaces: Sequence[str], before: int) -> list[EntryRow]:
        where, params = _where(Filters(tuple(workspaces)))
        rows = self._read(
            f"SELECT e.* FROM entries e WHERE e.when_at IS NOT NULL AND e.when_at < ? AND {where} AND {NOT_DEPRECATED}"
            " ORDER BY e.when_at",
            (before, *params),
        ).fetchall()
        return [_row(r) for r in rows]

    def loops(self, workspaces: Sequence[str], limit: int, offset: int) -> tuple[list[EntryRow], int]:
        where, params = _where(Filters(tuple(workspaces), tag="task"))
        total = self._read(f"SELECT COUNT(*) FROM entries e WHERE {where}", params).fetchone()[0]
        rows = self._read(
            f"SELECT e.* FROM entries e WHERE {where} ORDER BY e.created_at DESC, e.rid DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()
        return [_row(r) for r in rows], total

    def projects(self, workspaces: Sequence[str], include_archived: bool = True) -> list[ProjectRow]:
        marks = ", ".join("?" for _ in workspaces)
        archived = "" if include_archived else " AND status = 'active'"
        rows = self._read(
            f"SELECT * FROM projects WHERE workspace IN ({marks}){archived} ORDER BY name COLLATE NOCASE, slug",
            tuple(workspaces),
        ).fetchall() if workspaces else []
        return [ProjectRow(r["slug"], r["workspace"], r["name"], r["description"], tuple(json.loads(r["aliases"])),
                           r["status"], r["created_at"], r["updated_at"]) for r in rows]

    def tag_count(self, tag: str, workspaces: Sequence[str]) -> int:
        where, params = _where(Filters(tuple(workspaces)))
        return self._read(
            f"SELECT COUNT(*) FROM entry_tags t JOIN entries e ON e.rid = t.entry_rid WHERE t.tag = ? AND {where}",
            (tag, *params),
        ).fetchone()[0]

    def stats(self, workspaces: Sequence[str], now: int) -> dict:
        where, params = _where(Filters(tuple(workspaces)))
        count, avg = self._read(
            f"SELECT COUNT(*), AVG(importance_score) FROM entries e WHERE {where}", params
        ).fetchone()
        unclassified = self._read(
            f"SELECT COUNT(*) FROM entries e WHERE {where} AND NOT EXISTS (SELECT 1 FROM entry_tags t"
            " WHERE t.entry_rid = e.rid AND (t.tag LIKE 'status:%' OR t.tag LIKE 'kind:%'))",
            params,
        ).fetchone()[0]
        topics = [tc for tc in self.tag_counts(workspaces) if text.is_topic_tag(tc.tag)]
        top = sorted(topics, key=lambda tc: (-tc.count, tc.tag))[:5]
        return {
            "count": count,
            "avg_importance": None if avg is None else round(avg, 1),
            "top_tags": [tc.tag for tc in top],
            "digest_candidates": self._digest_candidates(where, params, now),
            "unclassified": unclassified,
        }

    def _digest_candidates(self, where: str, params: Sequence[object], now: int) -> list[dict]:
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
        return [{"tag": tag, "count": n} for tag, n in rows if text.is_topic_tag(tag)][:10]

    def _read(self, sql: str, params: Sequence[object]) -> sqlite3.Cursor:
        return self.db.connection().execute(sql, tuple(params))

    def after_commit(self, events: Sequence[Envelope] | None) -> None:
        """Nothing lives outside the database for this projection."""


def tag_rids(conn: sqlite3.Connection, tags: Sequence[str]) -> np.ndarray:
    """Row ids of the entries carrying any of these tags."""
    rows = conn.execute(
        f"SELECT entry_rid FROM entry_tags WHERE tag IN ({', '.join('?' for _ in tags)})", tuple(tags)
    ).fetchall()
    return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))


def _runs(events: Sequence[Envelope]) -> Iterator[tuple[str, list[Envelope]]]:
    """Consecutive events of one stream, in log order."""
    for stream_id, run in itertools.groupby(events, key=lambda e: e.stream_id):
        yield stream_id, list(run)


def _project_memory(conn: sqlite3.Connection, memory_id: str, run: Sequence[Envelope]) -> bool:
    """Fold a memory's new events into its row (the row is the fold so far); whether the memory went."""
    row = conn.execute("SELECT * FROM entries WHERE id = ?", (memory_id,)).fetchone()
    before = _memory(row) if row else Memory(memory_id)
    after = fold(run, before)
    if not after.exists:
        if row is not None:
            _delete_entry(conn, row)
        return row is not None
    values = (after.workspace, after.actor, after.content, json.dumps(after.tags), after.source, after.created_at,
              after.updated_at, after.importance, after.recall_count, after.last_recalled,
              after.contradiction_wins, after.contradiction_losses, after.content_version, after.when_at,
              after.when_kind, after.version, after.position)
    if row is None:
        rid = conn.execute(f"INSERT INTO entries ({', '.join(STATE_COLUMNS)}, id) VALUES ({', '.join('?' * 18)})",
                           (*values, memory_id)).lastrowid
        conn.execute("INSERT INTO entries_fts (rowid, content) VALUES (?, ?)", (rid, after.content))
        _write_tags(conn, rid, after.tags)
        _count(conn, after.workspace, +1)
        return False
    rid = row["rid"]
    conn.execute(f"UPDATE entries SET {', '.join(f'{c} = ?' for c in STATE_COLUMNS)} WHERE rid = ?", (*values, rid))
    if after.content != before.content:
        conn.execute("INSERT INTO entries_fts (entries_fts, rowid, content) VALUES ('delete', ?, ?)",
                     (rid, before.content))
        conn.execute("INSERT INTO entries_fts (rowid, content) VALUES (?, ?)", (rid, after.content))
    if after.tags != before.tags:
        conn.execute("DELETE FROM entry_tags WHERE entry_rid = ?", (rid,))
        _write_tags(conn, rid, after.tags)
    if after.workspace != before.workspace:
        _count(conn, before.workspace, -1)
        _count(conn, after.workspace, +1)
    return False


def _delete_entry(conn: sqlite3.Connection, row: sqlite3.Row) -> None:
    conn.execute("INSERT INTO entries_fts (entries_fts, rowid, content) VALUES ('delete', ?, ?)",
                 (row["rid"], row["content"]))
    conn.execute("DELETE FROM entry_tags WHERE entry_rid = ?", (row["rid"],))
    conn.execute("DELETE FROM entries WHERE rid = ?", (row["rid"],))
    conn.execute("DELETE FROM edges WHERE source_id = ? OR target_id = ?", (row["id"], row["id"]))
    _count(conn, row["workspace"], -1)


def _memory(row: sqlite3.Row) -> Memory:
    """A row back into the fold it was written from."""
    return Memory(
        id=row["id"], exists=True, content=row["content"], tags=tuple(json.loads(row["tags"])), source=row["source"],
        workspace=row["workspace"], actor=row["actor"], created_at=row["created_at"], updated_at=row["updated_at"],
        importance=row["importance_score"], recall_count=row["recall_count"], last_recalled=row["last_recalled"],
        contradiction_wins=row["contradiction_wins"], contradiction_losses=row["contradiction_losses"],
        when_at=row["when_at"], when_kind=row["when_kind"], version=row["version"],
        content_version=row["content_version"], position=row["position"],
    )


def _apply_link(conn: sqlite3.Connection, event: LinkCreated | LinkRemoved, at: int) -> None:
    if isinstance(event, LinkRemoved):
        conn.execute("DELETE FROM edges WHERE source_id = ? AND target_id = ? AND type = ?",
                     (event.source_id, event.target_id, event.type))
        return
    ends = conn.execute("SELECT workspace FROM entries WHERE id IN (?, ?)", (event.source_id, event.target_id)).fetchall()
    if len(ends) < 2:
        return  # an end was forgotten since (a replay): the edge goes with it
    conn.execute(
        "INSERT INTO edges (source_id, target_id, type, weight, provenance, workspace, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, target_id, type) DO UPDATE SET"
        " weight = excluded.weight, provenance = excluded.provenance, updated_at = excluded.updated_at",
        (event.source_id, event.target_id, event.type, event.weight, event.provenance, ends[0][0],
         event.created_at or at, at),
    )


def _apply_project(conn: sqlite3.Connection, envelope: Envelope) -> None:
    workspace, event = envelope.workspace, envelope.event
    slug = envelope.stream_id.removeprefix(f"project-{workspace}-")
    if isinstance(event, ProjectImported):
        conn.execute(
            "INSERT OR REPLACE INTO projects (workspace, slug, name, description, aliases, status, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (workspace, event.slug, event.name, event.description, json.dumps(event.aliases), event.status,
             event.created_at, event.updated_at),
        )
    elif isinstance(event, ProjectCreated):
        conn.execute(
            "INSERT OR REPLACE INTO projects (workspace, slug, name, description, aliases, status, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, 'active', ?, NULL)",
            (workspace, event.slug, event.name, event.description, json.dumps(event.aliases), envelope.at),
        )
    elif isinstance(event, ProjectUpdated):
        conn.execute(
            "UPDATE projects SET name = ?, description = ?, aliases = ?, status = ?, updated_at = ?"
            " WHERE workspace = ? AND slug = ?",
            (event.name, event.description, json.dumps(event.aliases), event.status, envelope.at, workspace, slug),
        )
    else:
        conn.execute("DELETE FROM projects WHERE workspace = ? AND slug = ?", (workspace, slug))


def _count(conn: sqlite3.Connection, workspace: str, delta: int) -> None:
    conn.execute(
        "INSERT INTO entry_counts (workspace, n) VALUES (?, ?) ON CONFLICT(workspace) DO UPDATE SET n = n + excluded.n",
        (workspace, delta),
    )


def _write_tags(conn: sqlite3.Connection, rid: int, tags: Sequence[str]) -> None:
    conn.executemany("INSERT OR IGNORE INTO entry_tags (tag, entry_rid) VALUES (?, ?)", [(t, rid) for t in tags])


def _where(filters: Filters, by_id: bool = False) -> tuple[str, list[object]]:
    """SQL conditions on the entries alias `e` for a filter set; the workspace scope is never optional.

    `by_id`: the query looks rows up by id, so the workspace index must not be chosen to drive it
    (the unary plus keeps SQLite from scanning a whole workspace to check a few ids).
    """
    if not filters.workspaces:
        return "0", []
    column = "+e.workspace" if by_id else "e.workspace"
    clauses = [f"{column} IN ({', '.join('?' for _ in filters.workspaces)})"]
    params: list[object] = list(filters.workspaces)
    for tag in (filters.tag, f"kind:{filters.kind}" if filters.kind else None):
        if tag:
            clauses.append("EXISTS (SELECT 1 FROM entry_tags f WHERE f.entry_rid = e.rid AND f.tag = ?)")
            params.append(tag)
    if filters.any_tags:
        marks = ", ".join("?" for _ in filters.any_tags)
        clauses.append(f"EXISTS (SELECT 1 FROM entry_tags p WHERE p.entry_rid = e.rid AND p.tag IN ({marks}))")
        params.extend(filters.any_tags)
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


def _recall_where(filters: Filters, by_id: bool = False) -> tuple[str, list[object]]:
    where, params = _where(filters, by_id)
    return f"{where} AND {ALWAYS_EXCLUDED}", [*params, *text.NEVER_RECALLED]


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _row(row: sqlite3.Row) -> EntryRow:
    return EntryRow(
        id=row["id"], content=row["content"], tags=tuple(json.loads(row["tags"])), source=row["source"],
        workspace=row["workspace"], actor=row["actor"], created_at=row["created_at"],
        updated_at=row["updated_at"], importance_score=row["importance_score"], recall_count=row["recall_count"],
        contradiction_wins=row["contradiction_wins"], contradiction_losses=row["contradiction_losses"],
        when_at=row["when_at"], when_kind=row["when_kind"],
    )
