"""The nightly index check in SQLite: rows against the log, the keyword index against the rows, the kept counts
against a recount, vectors against the content they were made from; each repaired where it differs."""

import re
import sqlite3
from collections.abc import Sequence

from ...domain.events import memory_stream
from ...domain.memory import Memory, fold
from ...ports.event_store import EventStore
from ..sqlite_database import SQLiteDatabase
from ..vector_index.sqlite import SQLiteVectorIndex
from .sqlite_projection import _count, _memory, matches_log, rewrite_memory

PROBE = re.compile(r"\w{3,24}")  # a word of the note that the trigram index must find in its row


class SQLiteIndexCheck:
    def __init__(self, db: SQLiteDatabase, store: EventStore, vectors: SQLiteVectorIndex | None) -> None:
        self.db = db
        self.store = store
        self.vectors = vectors

    def verify(self, memory_ids: Sequence[str], whole: bool = False) -> dict[str, int]:
        report = {"checked": 0, "drifted": 0, "repaired": 0}
        keyword_drift = False
        with self.db.write() as conn:  # the rows and the log read in one transaction: no append in between
            for memory_id in memory_ids:
                report["checked"] += 1
                history = self.store.read_stream(memory_stream(memory_id))
                memory = fold(history, Memory(memory_id))
                row = conn.execute("SELECT * FROM entries WHERE id = ?", (memory_id,)).fetchone()
                if not matches_log(row, memory):
                    report["drifted"] += 1
                    rewrite_memory(conn, memory_id, history)
                    report["repaired"] += 1
                elif row is not None and not _indexed(conn, row["rid"], row["content"]):
                    keyword_drift = True
            if whole:
                keyword_drift = keyword_drift or not _keyword_index_sound(conn)
                if not _counts_sound(conn):
                    _recount(conn)
                    report["counts_rebuilt"] = 1
            if keyword_drift:  # the index cannot be mended row by row without the text it holds: rebuilt whole
                conn.execute("INSERT INTO entries_fts (entries_fts) VALUES ('rebuild')")
                report["keyword_index_rebuilt"] = 1
        if whole and self.vectors is not None:
            waiting = self.vectors.pending_count()
            self.vectors.reconcile()
            report["vectors_requeued"] = self.vectors.pending_count() - waiting
        return report


def _indexed(conn: sqlite3.Connection, rid: int, content: str) -> bool:
    probe = PROBE.search(content)
    if probe is None:
        return True  # nothing the trigram index could be asked for
    term = '"' + probe.group(0).replace('"', '""') + '"'
    return conn.execute("SELECT 1 FROM entries_fts WHERE entries_fts MATCH ? AND rowid = ?", (term, rid)).fetchone() \
        is not None


def _keyword_index_sound(conn: sqlite3.Connection) -> bool:
    """FTS5's own check of the index against the rows it was built from (rank 1: against the content table)."""
    try:
        conn.execute("INSERT INTO entries_fts (entries_fts, rank) VALUES ('integrity-check', 1)")
    except sqlite3.DatabaseError:
        return False
    return True


def _counts_sound(conn: sqlite3.Connection) -> bool:
    kept = dict(conn.execute("SELECT workspace, n FROM workspace_counts WHERE n != 0").fetchall())
    actual = dict(conn.execute("SELECT workspace, COUNT(*) FROM entries GROUP BY workspace").fetchall())
    if kept != actual:
        return False
    kept_tags = set(conn.execute("SELECT workspace, tag, n FROM tag_counts WHERE n != 0").fetchall())
    actual_tags = set(conn.execute(
        "SELECT e.workspace, t.tag, COUNT(*) FROM entry_tags t JOIN entries e ON e.rid = t.entry_rid"
        " GROUP BY e.workspace, t.tag").fetchall())
    return {tuple(r) for r in kept_tags} == {tuple(r) for r in actual_tags}


def _recount(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM workspace_counts")
    conn.execute("DELETE FROM tag_counts")
    for row in conn.execute("SELECT * FROM entries").fetchall():
        _count(conn, _memory(row), +1)
