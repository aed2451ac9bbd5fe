"""The nightly index check in SQLite: rows against the log, the keyword index against the rows, the kept counts
against a recount, vectors against the content they were made from; each repaired where it differs. Everything is
compared in a read snapshot; the write lock is taken only to repair (captures wait for a repair, not a check)."""

import re
import sqlite3
from collections.abc import Sequence

from ...domain.events import memory_stream
from ...domain.memory import Memory, fold
from ...ports.event_store import EventStore
from ..sqlite_database import SQLiteDatabase
from ..vector_index.sqlite import SQLiteVectorIndex
from . import sqlite_brief
from .sqlite_projection import KEYWORD_INDEXES, _count_all, _memory, matches_log, rewrite_memory
from .sqlite_sql import phrase

# A piece of the note each keyword index must find in its row: three or more word characters for the trigrams,
# a whole word (unicode61 splits at anything not a letter or digit) for the words.
PROBES = {"entries_fts": re.compile(r"\w{3,24}"), "entries_words": re.compile(r"[^\W_]+")}


class SQLiteIndexCheck:
    def __init__(self, db: SQLiteDatabase, store: EventStore, vectors: SQLiteVectorIndex | None) -> None:
        self.db = db
        self.store = store
        self.vectors = vectors

    def verify(self, memory_ids: Sequence[str], whole: bool = False) -> dict[str, int]:
        report = {"checked": len(memory_ids), "drifted": 0, "repaired": 0}
        conn = self.db.connection()
        conn.execute("BEGIN")  # one snapshot of the log and the rows, read while writers go on (WAL)
        try:
            drifted = [i for i in memory_ids if not matches_log(_row(conn, i), self._fold(i))]
            unindexed = any(not _indexed(conn, row["rid"], row["content"]) for row in
                            (_row(conn, i) for i in memory_ids if i not in drifted) if row is not None)
            keyword_drift = unindexed or (whole and not _keyword_index_sound(conn))
            counts_off = whole and not _counts_sound(conn)
        finally:
            conn.execute("COMMIT")
        report["drifted"] = len(drifted)
        if drifted or keyword_drift or counts_off:  # the write lock only to repair, checking again under it
            with self.db.write() as conn:
                for memory_id in drifted:
                    history = self.store.read_stream(memory_stream(memory_id))
                    if not matches_log(_row(conn, memory_id), fold(history, Memory(memory_id))):
                        rewrite_memory(conn, memory_id, history)
                        report["repaired"] += 1
                if counts_off and not _counts_sound(conn):
                    _recount(conn)
                    report["counts_rebuilt"] = 1
                if keyword_drift:  # an index entry cannot be mended without the text it holds: rebuilt whole
                    for index in KEYWORD_INDEXES:
                        conn.execute(f"INSERT INTO {index} ({index}) VALUES ('rebuild')")
                    report["keyword_index_rebuilt"] = 1
        if whole and self.vectors is not None:
            waiting = self.vectors.pending_count()
            self.vectors.reconcile()
            report["vectors_requeued"] = self.vectors.pending_count() - waiting
        return report

    def _fold(self, memory_id: str) -> Memory:
        return fold(self.store.read_stream(memory_stream(memory_id)), Memory(memory_id))


def _row(conn: sqlite3.Connection, memory_id: str) -> sqlite3.Row | None:
    return conn.execute("SELECT * FROM entries WHERE id = ?", (memory_id,)).fetchone()


def _indexed(conn: sqlite3.Connection, rid: int, content: str) -> bool:
    for index in KEYWORD_INDEXES:
        probe = PROBES[index].search(content)
        if probe is None:
            continue  # nothing this index could be asked for
        term = phrase(probe.group(0))
        if conn.execute(f"SELECT 1 FROM {index} WHERE {index} MATCH ? AND rowid = ?", (term, rid)).fetchone() is None:
            return False
    return True


def _keyword_index_sound(conn: sqlite3.Connection) -> bool:
    """Every row indexed once in each keyword index, and nothing indexed that is not a row: FTS5 keeps one
    `docsize` entry per indexed row. (Its own 'integrity-check' would hold the write lock for the whole index.)"""
    rows = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    for index in KEYWORD_INDEXES:
        indexed = conn.execute(f"SELECT COUNT(*) FROM {index}_docsize").fetchone()[0]
        strays = conn.execute(f"SELECT COUNT(*) FROM {index}_docsize d WHERE NOT EXISTS"
                              " (SELECT 1 FROM entries e WHERE e.rid = d.id)").fetchone()[0]
        if indexed != rows or strays:
            return False
    return True


def _counts_sound(conn: sqlite3.Connection) -> bool:
    kept = dict(conn.execute("SELECT workspace, n FROM workspace_counts WHERE n != 0").fetchall())
    actual = dict(conn.execute("SELECT workspace, COUNT(*) FROM entries GROUP BY workspace").fetchall())
    if kept != actual:
        return False
    hours = dict(conn.execute("SELECT workspace, SUM(n) FROM hour_counts GROUP BY workspace HAVING SUM(n) != 0"
                              ).fetchall())
    if hours != actual:  # the brief's counts: every memory once, by the hour it was written
        return False
    kept_tags = set(conn.execute("SELECT workspace, tag, n FROM tag_counts WHERE n != 0").fetchall())
    actual_tags = set(conn.execute(
        "SELECT e.workspace, t.tag, COUNT(*) FROM entry_tags t JOIN entries e ON e.rid = t.entry_rid"
        " GROUP BY e.workspace, t.tag").fetchall())
    return {tuple(r) for r in kept_tags} == {tuple(r) for r in actual_tags}


def _recount(conn: sqlite3.Connection) -> None:
    """Every kept count rebuilt from the rows: /count, /tags and /stats's, and the brief's."""
    for table in ("workspace_counts", "tag_counts", *sqlite_brief.NAMES):
        conn.execute(f"DELETE FROM {table}")
    for row in conn.execute("SELECT * FROM entries").fetchall():
        _count_all(conn, _memory(row), +1)
