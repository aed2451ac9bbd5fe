"""SQL pieces the SQLite adapters of more than one package share over the brain's one database file: IN-list
placeholders, and the entries a tag marks (the read model writes entry_tags; the vector index filters its rows by
it). They sit here, below read_model/ and vector_index/, so that neither package imports the other for them: the
read model's consistency check (read_model/sqlite_check.py) already imports the vector index."""

import sqlite3
from collections.abc import Sequence

import numpy as np


def tag_rids(conn: sqlite3.Connection, tags: Sequence[str]) -> np.ndarray:
    """Row ids of the entries carrying any of these tags."""
    rows = conn.execute(
        f"SELECT entry_rid FROM entry_tags WHERE tag IN ({', '.join('?' for _ in tags)})", tuple(tags)
    ).fetchall()
    return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))


def marks(values: Sequence[object]) -> str:
    """Placeholders for an IN list."""
    return ", ".join("?" for _ in values)
