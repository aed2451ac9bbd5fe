"""SQLite event store: the log and the projections it feeds are written in one transaction."""

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from ... import __version__
from ...domain.errors import ConcurrencyConflict, NewerFormat
from ...domain.events import Envelope, erased_by, from_data, is_tombstone, to_data
from ...ports.event_store import EVERY, EventMatch, Scanned, Touch
from ..sqlite_database import SQLiteDatabase
from .checks import check_expected_versions, dense_scan_back

# The layout of a brain's data folder (the log's table in brain.sqlite3, content.key and secrets/ beside it), kept in
# the file's user_version: a build refuses a folder of a newer layout rather than misread it. Folders written before
# the number was kept read 0 and have layout 1. Raise it, with the step from the one before in `_check_format`, when a
# change would be misread by the builds before it (new columns an older build would ignore need no new number).
FORMAT = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    stream_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    type TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    data TEXT NOT NULL,
    actor TEXT NOT NULL,
    workspace TEXT NOT NULL,
    request_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    erased INTEGER NOT NULL DEFAULT 0,
    UNIQUE (stream_id, version)
);
DROP INDEX IF EXISTS events_starts;
CREATE INDEX IF NOT EXISTS events_by_time ON events (at, position);
CREATE TABLE IF NOT EXISTS projection_positions (
    name TEXT PRIMARY KEY, position INTEGER NOT NULL, schema INTEGER NOT NULL DEFAULT 0
);
"""


class SQLiteProjection(Protocol):
    name: str
    schema: int  # bump when the tables change: the projection is then dropped and replayed at start-up

    def create(self, conn: sqlite3.Connection) -> None:
        """Create the projection's tables if they are missing."""

    def drop(self, conn: sqlite3.Connection) -> None:
        """Drop the projection's tables."""

    def apply(self, conn: sqlite3.Connection, events: Sequence[Envelope]) -> None:
        """Apply events inside the caller's transaction."""

    def after_commit(self, events: Sequence[Envelope] | None) -> None:
        """Bring state kept outside the database up to date; None means everything was rebuilt."""


class SQLiteEventStore:
    def __init__(self, db: SQLiteDatabase, projections: Sequence[SQLiteProjection] = ()) -> None:
        self.db = db
        self.projections = list(projections)
        with db.write() as conn:
            _check_format(conn, db.path, write=True)
            _run_script(conn, SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(projection_positions)")}
            if "schema" not in columns:  # a brain written before projections carried a schema number
                conn.execute("ALTER TABLE projection_positions ADD COLUMN schema INTEGER NOT NULL DEFAULT 0")
            for projection in self.projections:
                row = conn.execute("SELECT schema FROM projection_positions WHERE name = ?",
                                   (projection.name,)).fetchone()
                if row is None or row[0] != projection.schema:  # new or changed: rebuilt from the log by catch_up
                    projection.drop(conn)
                    conn.execute(
                        "INSERT INTO projection_positions (name, position, schema) VALUES (?, 0, ?)"
                        " ON CONFLICT(name) DO UPDATE SET position = 0, schema = excluded.schema",
                        (projection.name, projection.schema),
                    )
                projection.create(conn)

    def append(self, events: Sequence[Envelope]) -> list[Envelope]:
        erased_any = False
        with self.db.write() as conn:
            streams = {e.stream_id for e in events}
            current = {s: _current_version(conn, s) for s in streams}
            check_expected_versions(events, current)
            stored = []
            for event in events:
                try:
                    cursor = conn.execute(
                        "INSERT INTO events (stream_id, version, type, schema_version, data, actor, workspace,"
                        " request_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (event.stream_id, event.version, event.type, event.schema_version,
                         json.dumps(to_data(event.event), ensure_ascii=False), event.actor, event.workspace,
                         event.request_id, event.at),
                    )
                except sqlite3.IntegrityError as exc:
                    raise ConcurrencyConflict(f"stream {event.stream_id} moved on", stream_id=event.stream_id) from exc
                assert cursor.lastrowid is not None, "an INSERT into a rowid table sets lastrowid"
                stored.append(replace(event, position=cursor.lastrowid))
                if is_tombstone(event.event):
                    conn.execute(
                        "UPDATE events SET data = '{}', erased = 1 WHERE stream_id = ? AND version < ?",
                        (event.stream_id, event.version),
                    )
                    erased_any = True
                elif named := erased_by(event.event, event.version):
                    conn.executemany("UPDATE events SET data = '{}', erased = 1 WHERE stream_id = ? AND version = ?",
                                     [(event.stream_id, version) for version in named])
                    erased_any = True
            self._project(conn, stored)
        for projection in self.projections:
            projection.after_commit(stored)
        if erased_any:
            self.db.purge_wal()
        return stored

    def _project(self, conn: sqlite3.Connection, stored: list[Envelope]) -> None:
        for projection in self.projections:
            projection.apply(conn, stored)
            set_position(conn, projection.name, stored[-1].position)

    def read_stream(self, stream_id: str) -> list[Envelope]:
        rows = self.db.connection().execute(
            "SELECT * FROM events WHERE stream_id = ? ORDER BY version", (stream_id,)
        ).fetchall()
        return [_envelope(row) for row in rows]

    def read_streams(self, stream_ids: Sequence[str],
                     after: Mapping[str, int] | None = None) -> dict[str, list[Envelope]]:
        after = after or {}
        found: dict[str, list[Envelope]] = {stream_id: [] for stream_id in stream_ids}
        wanted = list(found)
        for start in range(0, len(wanted), 500):  # under SQLite's bound on a statement's parameters
            chunk = wanted[start:start + 500]
            rows = self.db.connection().execute(
                f"SELECT * FROM events WHERE stream_id IN ({', '.join('?' * len(chunk))}) ORDER BY stream_id, version",
                chunk).fetchall()
            for row in rows:
                if row["version"] > after.get(row["stream_id"], 0):
                    found[row["stream_id"]].append(_envelope(row))
        return found

    def read_all(self, after: int = 0, limit: int = 1000) -> list[Envelope]:
        rows = self.db.connection().execute(
            "SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?", (after, limit)
        ).fetchall()
        return [_envelope(row) for row in rows]

    def cut(self, at: int) -> int:
        # Exact: the event before the first one stored after `at` (by the time index, not a walk of the log).
        row = self.db.connection().execute("SELECT MIN(position) FROM events WHERE at > ?", (at,)).fetchone()
        return row[0] - 1 if row[0] is not None else self.head()

    def last_by(self, at: int) -> int:
        row = self.db.connection().execute("SELECT MAX(position) FROM events WHERE at <= ?", (at,)).fetchone()
        return row[0] or 0

    def begun_after(self, prefix: str, after: int, at: int) -> list[str]:
        return [row[0] for row in self.db.connection().execute(
            "SELECT stream_id FROM events"
            " WHERE position > ? AND version = 1 AND at > ? AND substr(stream_id, 1, ?) = ?",
            (after, at, len(prefix), prefix))]

    def touches(self, prefix: str, after: int, at: int) -> list[Touch]:
        # A look far back finds most of the brain begun since: those streams are skipped, by their first event.
        rows = self.db.connection().execute(
            "SELECT e.stream_id, e.version, e.type, e.at, e.position FROM events e WHERE e.position > ?"
            " AND substr(e.stream_id, 1, ?) = ? AND NOT EXISTS (SELECT 1 FROM events f WHERE f.stream_id = e.stream_id"
            " AND f.version = 1 AND f.position > ? AND f.at > ?) ORDER BY e.position",
            (after, len(prefix), prefix, after, at)).fetchall()
        return list(map(Touch._make, rows))

    def read_page(self, before: int, after: int = 0, limit: int = 1000,
                  match: EventMatch = EVERY) -> list[Envelope]:
        # The position range walks the primary key: the work is bounded by the window whatever the filters.
        where = ["position > ?", "position < ?"]
        params: list[object] = [after, before]
        if match.types:
            where.append(f"type IN ({', '.join('?' for _ in match.types)})")
            params += match.types
        for clause, value in (("actor = ?", match.actor), ("at >= ?", match.since), ("at <= ?", match.until)):
            if value is not None:
                where.append(clause)
                params.append(value)
        if match.streams or match.naming:
            streams = [f"stream_id IN ({', '.join('?' for _ in match.streams)})"] if match.streams else []
            params += match.streams
            if match.naming:
                streams.append("instr(stream_id, ?) > 0")
                params.append(match.naming)
            where.append(f"({' OR '.join(streams)})")
        rows = self.db.connection().execute(
            f"SELECT * FROM events WHERE {' AND '.join(where)} ORDER BY position DESC LIMIT ?",
            (*params, max(0, limit)),
        ).fetchall()
        return [_envelope(row) for row in rows]

    def scan_back(self, before: int, after: int, budget: int, match: EventMatch = EVERY) -> Scanned:
        return dense_scan_back(self, before, after, budget, match)

    def settled(self) -> int:
        return self.head()

    def head(self) -> int:
        row = self.db.connection().execute("SELECT MAX(position) FROM events").fetchone()
        return row[0] or 0

    def rebuild_projections(self, batch: int = 2000) -> int:
        """Drop every projection and replay the whole log into it, in one transaction; returns events replayed."""
        with self.db.write() as conn:
            for projection in self.projections:
                projection.drop(conn)
                projection.create(conn)
                set_position(conn, projection.name, 0)
            replayed = self._feed(conn, after=0, batch=batch)
        for projection in self.projections:
            projection.after_commit(None)
        return replayed

    def catch_up(self, batch: int = 2000) -> int:
        """Apply whatever a projection has not seen yet (a projection added since the log was written)."""
        with self.db.write() as conn:
            behind = min((get_position(conn, p.name) for p in self.projections), default=self.head())
            replayed = self._feed(conn, after=behind, batch=batch)
        for projection in self.projections:
            projection.after_commit(None)
        return replayed

    def _feed(self, conn: sqlite3.Connection, after: int, batch: int) -> int:
        replayed = 0
        while events := self.read_all(after, batch):
            for projection in self.projections:
                seen = get_position(conn, projection.name)
                fresh = [e for e in events if e.position > seen]
                if fresh:
                    projection.apply(conn, fresh)
                    set_position(conn, projection.name, fresh[-1].position)
            after = events[-1].position
            replayed += len(events)
        return replayed


COLUMNS = ("position", "stream_id", "version", "type", "schema_version", "data", "actor", "workspace", "request_id",
           "at", "erased")


def copy_log(source: Path, target: SQLiteDatabase, until: int, batch: int = 2000) -> Iterator[tuple[int, int]]:
    """Copy the events of the brain in `source` stored at or before `until` into `target`'s log as they are
    (positions, erasures), each stream up to its first later event; yields (events read, events in the log).
    The source is opened read-only: it is never written."""
    reader = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    try:
        _check_format(reader, str(source), write=False)
        total = reader.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        cut: set[str] = set()  # streams that reached an event after `until`: the rest of them is later too
        after = read = 0
        while rows := reader.execute(f"SELECT {', '.join(COLUMNS)} FROM events WHERE position > ? ORDER BY position"
                                     " LIMIT ?", (after, batch)).fetchall():
            kept = []
            for row in rows:
                if row[1] in cut or row[9] > until:
                    cut.add(row[1])
                elif not row[1].startswith(CREDENTIAL_STREAMS):
                    kept.append(_without_credentials(row))
            with target.write() as conn:
                conn.executemany(f"INSERT INTO events ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                                 kept)
            after, read = rows[-1][0], read + len(rows)
            yield read, total
    finally:
        reader.close()


# A copy as of a past moment must not let in anyone whose access was revoked since: no OAuth grant is copied, and
# members' token hashes are blanked (the copy answers to the owner's token only).
CREDENTIAL_STREAMS = ("oauth-",)


def _without_credentials(row: tuple) -> tuple:
    data = json.loads(row[5]) if row[5] else {}
    if not isinstance(data, dict) or "token_hash" not in data:
        return row
    return (*row[:5], json.dumps({**data, "token_hash": ""}), *row[6:])


def _check_format(conn: sqlite3.Connection, path: str, write: bool) -> None:
    """Refuse a brain of a newer layout than this build's, in words; with `write`, mark an older one as this
    build's (layout 1 needed no change: the number alone is written)."""
    found = conn.execute("PRAGMA user_version").fetchone()[0]
    if found > FORMAT:
        raise NewerFormat(f"{path} was written by a newer version of Second Brain (data format {found}); this "
                          f"version ({__version__}) reads data formats up to {FORMAT}: upgrade Second Brain to open "
                          f"it (the folder was left as it was)")
    if write and found < FORMAT:
        conn.execute(f"PRAGMA user_version = {FORMAT}")


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    # executescript would COMMIT the open transaction; run statement by statement instead.
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _current_version(conn: sqlite3.Connection, stream_id: str) -> int:
    row = conn.execute("SELECT MAX(version) FROM events WHERE stream_id = ?", (stream_id,)).fetchone()
    return row[0] or 0


def set_position(conn: sqlite3.Connection, name: str, position: int) -> None:
    conn.execute(
        "INSERT INTO projection_positions (name, position) VALUES (?, ?)"
        " ON CONFLICT(name) DO UPDATE SET position = excluded.position",
        (name, position),
    )


def get_position(conn: sqlite3.Connection, name: str) -> int:
    row = conn.execute("SELECT position FROM projection_positions WHERE name = ?", (name,)).fetchone()
    return row[0] if row else 0


def _envelope(row: sqlite3.Row) -> Envelope:
    return Envelope(
        stream_id=row["stream_id"],
        version=row["version"],
        event=from_data(row["type"], json.loads(row["data"]), erased=bool(row["erased"]),
                        schema_version=row["schema_version"]),
        actor=row["actor"],
        workspace=row["workspace"],
        request_id=row["request_id"],
        at=row["at"],
        position=row["position"],
        schema_version=row["schema_version"],
    )
