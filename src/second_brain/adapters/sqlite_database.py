"""One SQLite file in WAL mode: a connection per thread, one writer at a time; the embedded brain lives here."""

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PRIVATE = 0o600  # memories are the owner's alone, like the token file


class SQLiteDatabase:
    def __init__(self, path: Path | str, synchronous: str = "FULL") -> None:
        self.path = str(path)
        _make_private(self.path)
        self._synchronous = synchronous
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._registry_lock = threading.Lock()

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (reads run in autocommit mode)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            # Forget means forget: freed pages are zeroed, not left holding old text.
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
            with self._registry_lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; commits on success, rolls back on any error."""
        with self._write_lock:
            conn = self.connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def purge_wal(self) -> None:
        """Checkpoint and truncate the WAL, so no page image of erased data outlives the transaction."""
        with self._write_lock:
            self.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._registry_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()


def _make_private(path: str) -> None:
    """Create the file owner-only, and tighten what an older build left readable to everyone."""
    if path == ":memory:" or path.startswith("file:"):
        return
    # SQLite gives the -wal and -shm it creates the mode of the main file, so only leftovers need a chmod.
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE))
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.chmod(path + suffix, PRIVATE)
        except FileNotFoundError:
            pass
