"""The entries projection in SQLite: memory rows written from the domain's fold (the row is the fold so far),
their trigram index, tags, per-workspace counts, edges and projects; applied in the append's own transaction."""

import itertools
import json
import sqlite3
from collections.abc import Iterator, Sequence

from ...domain.events import Envelope, memory_of
from ...domain.links import Edge, fold_edge
from ...domain.memory import Memory, digest_candidate, fold
from ...domain.projects import Project, fold_project
from . import sqlite_brief

# The words themselves (no positions: detail='none'), for what the trigram index cannot say: which words the
# brain holds, so a misspelt query word can be matched to one (recall's spelling step).
WORDS_TABLES = [
    """CREATE VIRTUAL TABLE IF NOT EXISTS entries_words USING fts5(
        content, content='entries', content_rowid='rid', tokenize='unicode61 remove_diacritics 2', detail='none'
    )""",
    "CREATE VIRTUAL TABLE IF NOT EXISTS entries_words_vocab USING fts5vocab(entries_words, 'row')",
]
KEYWORD_INDEXES = ("entries_fts", "entries_words")

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
        use_count INTEGER NOT NULL DEFAULT 0,
        last_used TEXT NOT NULL DEFAULT '',
        version INTEGER NOT NULL,
        position INTEGER NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS entries_by_anchor ON entries (when_at) WHERE when_at IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS entries_by_workspace ON entries (workspace, created_at DESC)",
    "CREATE INDEX IF NOT EXISTS entries_by_position ON entries (position)",  # what began after a moment
    """CREATE TABLE IF NOT EXISTS entry_tags (
        tag TEXT NOT NULL, entry_rid INTEGER NOT NULL, PRIMARY KEY (tag, entry_rid)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS entry_tags_by_entry ON entry_tags (entry_rid)",
    # External content: the index holds trigrams only, the text lives once, in entries.
    """CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
        content, content='entries', content_rowid='rid', tokenize='trigram'
    )""",
    "CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts_vocab USING fts5vocab(entries_fts, 'row')",
    *WORDS_TABLES,
    # Kept counts, so GET /count, /tags and /stats read a few rows instead of scanning every memory.
    """CREATE TABLE IF NOT EXISTS workspace_counts (
        workspace TEXT PRIMARY KEY, n INTEGER NOT NULL, importance INTEGER NOT NULL, unclassified INTEGER NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS tag_counts (
        workspace TEXT NOT NULL, tag TEXT NOT NULL, n INTEGER NOT NULL, digest_candidates INTEGER NOT NULL,
        PRIMARY KEY (workspace, tag)
    ) WITHOUT ROWID""",
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



class SQLiteEntryProjection:
    name = "entries"
    schema = 9

    def create(self, conn: sqlite3.Connection) -> None:
        backfill = sqlite_brief.missing(conn)
        no_words = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'entries_words'").fetchone() is None
        for statement in TABLES + sqlite_brief.TABLES:
            conn.execute(statement)
        if no_words:  # a brain written before the words index: indexed from the rows once, not replayed
            conn.execute("INSERT INTO entries_words (entries_words) VALUES ('rebuild')")
        if backfill:  # a brain written before the brief's counts: filled from the rows once, not replayed
            sqlite_brief.fill(conn, (_memory(row) for row in conn.execute("SELECT * FROM entries")))

    def drop(self, conn: sqlite3.Connection) -> None:
        for table in ("entries_fts_vocab", "entries_fts", "entries_words_vocab", "entries_words", "entry_tags",
                      "entry_counts", "workspace_counts",
                      "tag_counts", "edges", "projects", "entries", *sqlite_brief.NAMES):
            conn.execute(f"DROP TABLE IF EXISTS {table}")

    def apply(self, conn: sqlite3.Connection, events: Sequence[Envelope]) -> None:
        forgot = False
        for stream_id, run in _runs(events):
            if (memory_id := memory_of(stream_id)) is not None:
                forgot |= _project_memory(conn, memory_id, run)
            elif stream_id.startswith("link-"):
                _project_edge(conn, run)
            elif stream_id.startswith("project-"):
                _project_project(conn, stream_id, run)
        if forgot:
            # Merge the index segments so no trigram or word of the forgotten text survives in the file.
            for index in KEYWORD_INDEXES:
                conn.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")


    def after_commit(self, events: Sequence[Envelope] | None) -> None:
        """Nothing lives outside the database for this projection."""


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
    columns = _columns(after)
    if row is None:
        rid = conn.execute(f"INSERT INTO entries ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
                           tuple(columns.values())).lastrowid
        assert rid is not None, "an INSERT into a rowid table sets lastrowid"
        _index(conn, rid, after.content)
        _write_tags(conn, rid, after.tags)
        _count_all(conn, after, +1)
        return False
    _rewrite(conn, row["rid"], before, after)
    return False


def rewrite_memory(conn: sqlite3.Connection, memory_id: str, history: Sequence[Envelope]) -> None:
    """Write a memory's row from its whole stream, whatever the row holds now: the nightly check's repair of a
    row that drifted from the log (the keyword index is rebuilt separately if it drifted too)."""
    row = conn.execute("SELECT * FROM entries WHERE id = ?", (memory_id,)).fetchone()
    after = fold(history, Memory(memory_id))
    if row is None or not after.exists:
        _project_memory(conn, memory_id, history)  # inserts it, or deletes the row of a forgotten one
    else:
        _rewrite(conn, row["rid"], _memory(row), after)


def matches_log(row: sqlite3.Row | None, memory: Memory) -> bool:
    """Whether a row is what the memory's stream makes it."""
    if row is None or not memory.exists:
        return row is None and not memory.exists
    return _memory(row) == memory


def _rewrite(conn: sqlite3.Connection, rid: int, before: Memory, after: Memory) -> None:
    """Move a row, its keyword index entry, its tags and the kept counts from `before` to `after`."""
    columns = _columns(after)
    conn.execute(f"UPDATE entries SET {', '.join(f'{c} = ?' for c in columns)} WHERE rid = ?",
                 (*columns.values(), rid))
    if after.content != before.content:
        _unindex(conn, rid, before.content)
        _index(conn, rid, after.content)
    if after.tags != before.tags:
        conn.execute("DELETE FROM entry_tags WHERE entry_rid = ?", (rid,))
        _write_tags(conn, rid, after.tags)
    if _counted(after) != _counted(before):
        _count_all(conn, before, -1)
        _count_all(conn, after, +1)


def _index(conn: sqlite3.Connection, rid: int, content: str) -> None:
    for index in KEYWORD_INDEXES:
        conn.execute(f"INSERT INTO {index} (rowid, content) VALUES (?, ?)", (rid, content))


def _unindex(conn: sqlite3.Connection, rid: int, content: str) -> None:
    """External-content indexes forget a row only when told the text they indexed."""
    for index in KEYWORD_INDEXES:
        conn.execute(f"INSERT INTO {index} ({index}, rowid, content) VALUES ('delete', ?, ?)", (rid, content))


def _delete_entry(conn: sqlite3.Connection, row: sqlite3.Row) -> None:
    _unindex(conn, row["rid"], row["content"])
    conn.execute("DELETE FROM entry_tags WHERE entry_rid = ?", (row["rid"],))
    conn.execute("DELETE FROM entries WHERE rid = ?", (row["rid"],))
    conn.execute("DELETE FROM edges WHERE source_id = ? OR target_id = ?", (row["id"], row["id"]))
    _count_all(conn, _memory(row), -1)


def _columns(memory: Memory) -> dict[str, object]:
    """The row a memory's fold is written as (`_memory` reads it back)."""
    return {
        "id": memory.id, "workspace": memory.workspace, "actor": memory.actor, "content": memory.content,
        "tags": json.dumps(memory.tags), "source": memory.source, "created_at": memory.created_at,
        "updated_at": memory.updated_at, "importance_score": memory.importance, "recall_count": memory.recall_count,
        "last_recalled": memory.last_recalled, "use_count": memory.use_count, "last_used": memory.last_used,
        "contradiction_wins": memory.contradiction_wins,
        "contradiction_losses": memory.contradiction_losses, "content_version": memory.content_version,
        "when_at": memory.when_at, "when_kind": memory.when_kind, "version": memory.version,
        "position": memory.position,
    }


def _memory(row: sqlite3.Row) -> Memory:
    """A row back into the fold it was written from."""
    return Memory(
        id=row["id"], exists=True, content=row["content"], tags=tuple(json.loads(row["tags"])), source=row["source"],
        workspace=row["workspace"], actor=row["actor"], created_at=row["created_at"], updated_at=row["updated_at"],
        importance=row["importance_score"], recall_count=row["recall_count"], last_recalled=row["last_recalled"],
        use_count=row["use_count"], last_used=row["last_used"],
        contradiction_wins=row["contradiction_wins"], contradiction_losses=row["contradiction_losses"],
        when_at=row["when_at"], when_kind=row["when_kind"], version=row["version"],
        content_version=row["content_version"], position=row["position"],
    )


def _project_edge(conn: sqlite3.Connection, run: Sequence[Envelope]) -> None:
    """Fold an edge's new events into its row; it is shown only while both its ends exist."""
    first = run[0].event
    key = (first.source_id, first.target_id, first.type)
    row = conn.execute("SELECT * FROM edges WHERE source_id = ? AND target_id = ? AND type = ?", key).fetchone()
    before = Edge(*key, exists=True, weight=row["weight"], provenance=row["provenance"], workspace=row["workspace"],
                  created_at=row["created_at"], updated_at=row["updated_at"]) if row else Edge(*key)
    after = fold_edge(run, before)
    ends = conn.execute("SELECT COUNT(*) FROM entries WHERE id IN (?, ?)", key[:2]).fetchone()[0]
    if not after.exists or ends < 2:  # removed, or an end was forgotten since (a replay): the edge goes with it
        conn.execute("DELETE FROM edges WHERE source_id = ? AND target_id = ? AND type = ?", key)
        return
    conn.execute(
        "INSERT OR REPLACE INTO edges (source_id, target_id, type, weight, provenance, workspace, created_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (*key, after.weight, after.provenance, after.workspace, after.created_at, after.updated_at),
    )


def _project_project(conn: sqlite3.Connection, stream_id: str, run: Sequence[Envelope]) -> None:
    """Fold a project's new events into its row."""
    workspace = run[0].workspace
    slug = stream_id.removeprefix(f"project-{workspace}-")
    row = conn.execute("SELECT * FROM projects WHERE workspace = ? AND slug = ?", (workspace, slug)).fetchone()
    before = Project(slug, workspace, exists=True, name=row["name"], description=row["description"],
                     aliases=tuple(json.loads(row["aliases"])), status=row["status"], created_at=row["created_at"],
                     updated_at=row["updated_at"]) if row else Project(slug, workspace)
    after = fold_project(run, before)
    if not after.exists:
        conn.execute("DELETE FROM projects WHERE workspace = ? AND slug = ?", (workspace, slug))
        return
    conn.execute(
        "INSERT OR REPLACE INTO projects (workspace, slug, name, description, aliases, status, created_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (workspace, slug, after.name, after.description, json.dumps(after.aliases), after.status,
         after.created_at, after.updated_at),
    )


# A memory's part of the kept counts: workspace, importance, classified, tags, digest candidate, created_at, source.
Counted = tuple[str, int, bool, frozenset[str], bool, int, str]


def _counted(memory: Memory) -> Counted:
    """What a memory adds to the kept counts."""
    classified = any(tag.startswith(("status:", "kind:")) for tag in memory.tags)
    return (memory.workspace, memory.importance, classified, frozenset(memory.tags), digest_candidate(memory),
            memory.created_at, memory.source)


def _count_all(conn: sqlite3.Connection, memory: Memory, sign: int) -> None:
    """The kept counts below and the brief's (sqlite_brief.py)."""
    _count(conn, memory, sign)
    sqlite_brief.count(conn, memory, sign)


def _count(conn: sqlite3.Connection, memory: Memory, sign: int) -> None:
    """Add a memory to the kept counts (sign +1), or take it away (-1)."""
    workspace, importance, classified, tags, candidate, _, _ = _counted(memory)
    conn.execute(
        "INSERT INTO workspace_counts (workspace, n, importance, unclassified) VALUES (?, ?, ?, ?)"
        " ON CONFLICT(workspace) DO UPDATE SET n = n + excluded.n, importance = importance + excluded.importance,"
        " unclassified = unclassified + excluded.unclassified",
        (workspace, sign, sign * importance, 0 if classified else sign),
    )
    conn.executemany(
        "INSERT INTO tag_counts (workspace, tag, n, digest_candidates) VALUES (?, ?, ?, ?)"
        " ON CONFLICT(workspace, tag) DO UPDATE SET n = n + excluded.n,"
        " digest_candidates = digest_candidates + excluded.digest_candidates",
        [(workspace, tag, sign, sign * candidate) for tag in tags],
    )
    if sign < 0:  # a tag no memory holds goes: a forgotten memory's tag must not survive in a count
        conn.executemany("DELETE FROM tag_counts WHERE workspace = ? AND tag = ? AND n <= 0",
                         [(workspace, tag) for tag in tags])


def _write_tags(conn: sqlite3.Connection, rid: int, tags: Sequence[str]) -> None:
    conn.executemany("INSERT OR IGNORE INTO entry_tags (tag, entry_rid) VALUES (?, ?)", [(t, rid) for t in tags])
