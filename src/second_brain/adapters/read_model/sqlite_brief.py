"""The brief in SQLite: counts kept per hour (by source) and per day (by tag), and the pool of memories worth
resurfacing, written by the entries projection beside its other kept counts; and the reads over them, a few
rows each whatever the brain's size."""

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence

from ...domain.brief import HOUR_MS, day_of, hour_of, pick_key, resurfaceable
from ...domain.memory import Memory
from ...domain.text import DEPRECATED
from ...ports.read_model import Activity, EntryRow, SourceCount, TagCount
from .sqlite_sql import SQLiteReads, marks, row_of

TABLES = [
    """CREATE TABLE IF NOT EXISTS hour_counts (
        workspace TEXT NOT NULL, hour INTEGER NOT NULL, source TEXT NOT NULL, n INTEGER NOT NULL,
        PRIMARY KEY (workspace, hour, source)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS day_tag_counts (
        workspace TEXT NOT NULL, day INTEGER NOT NULL, tag TEXT NOT NULL, n INTEGER NOT NULL,
        PRIMARY KEY (workspace, day, tag)
    ) WITHOUT ROWID""",
    # Walked in `pick` order (a hash of the id) from the day's key: one row read, however large the pool.
    """CREATE TABLE IF NOT EXISTS resurface_pool (
        workspace TEXT NOT NULL, pick INTEGER NOT NULL, id TEXT NOT NULL, created_at INTEGER NOT NULL,
        PRIMARY KEY (workspace, pick, id)
    ) WITHOUT ROWID""",
]
NAMES = ("hour_counts", "day_tag_counts", "resurface_pool")


def missing(conn: sqlite3.Connection) -> bool:
    """Whether this database predates the brief's tables (they are then filled from the entries, once)."""
    return conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN"
                        f" ({marks(NAMES)})", NAMES).fetchone()[0] < len(NAMES)


def count(conn: sqlite3.Connection, memory: Memory, sign: int) -> None:
    """Add a memory to the brief's counts and pool (sign +1), or take it away (-1)."""
    fill(conn, [memory], sign)


def fill(conn: sqlite3.Connection, memories: Iterable[Memory], sign: int = 1) -> None:
    """Add (or take away) many memories at once: the backfill of a brain written before these tables."""
    hours: Counter[tuple[str, int, str]] = Counter()
    tags: Counter[tuple[str, int, str]] = Counter()
    pool = []
    for memory in memories:
        hours[memory.workspace, hour_of(memory.created_at), memory.source] += sign
        day = day_of(memory.created_at)
        for tag in set(memory.tags):
            tags[memory.workspace, day, tag] += sign
        if resurfaceable(memory.tags, memory.importance):
            pool.append((memory.workspace, pick_key(memory.id), memory.id, memory.created_at))
    conn.executemany("INSERT INTO hour_counts (workspace, hour, source, n) VALUES (?, ?, ?, ?)"
                     " ON CONFLICT (workspace, hour, source) DO UPDATE SET n = n + excluded.n",
                     [(*k, n) for k, n in hours.items()])
    conn.executemany("INSERT INTO day_tag_counts (workspace, day, tag, n) VALUES (?, ?, ?, ?)"
                     " ON CONFLICT (workspace, day, tag) DO UPDATE SET n = n + excluded.n",
                     [(*k, n) for k, n in tags.items()])
    if sign > 0:
        conn.executemany("INSERT OR REPLACE INTO resurface_pool (workspace, pick, id, created_at) VALUES (?, ?, ?, ?)",
                         pool)
        return
    # A count that reaches nothing goes: a forgotten memory's source or tag must not survive in a count.
    conn.executemany("DELETE FROM hour_counts WHERE workspace = ? AND hour = ? AND source = ? AND n <= 0", hours)
    conn.executemany("DELETE FROM day_tag_counts WHERE workspace = ? AND day = ? AND tag = ? AND n <= 0", tags)
    conn.executemany("DELETE FROM resurface_pool WHERE workspace = ? AND pick = ? AND id = ?", [p[:3] for p in pool])


class SQLiteBriefReads(SQLiteReads):
    def activity(self, workspaces: Sequence[str], since: int, first_day: int, topics_day: int,
                 now: int) -> Activity:
        if not workspaces:
            return Activity((), {}, ())
        scope = marks(workspaces)
        start = hour_of(since)
        # Per day, and per source for the whole hours after the window's first one: a few dozen rows out.
        rows = self._read(
            "SELECT CASE WHEN hour > ? THEN source END AS windowed, hour / 24 AS day, SUM(n) FROM hour_counts"
            f" WHERE workspace IN ({scope}) AND hour >= ? AND hour <= ? GROUP BY windowed, day",
            (start, *workspaces, min(first_day * 24, start), hour_of(now)),
        ).fetchall()
        days: Counter[int] = Counter()
        sources: Counter[str] = Counter()
        for source, day, n in rows:
            if day >= first_day:
                days[day] += n
            if source is not None:
                sources[source] += n
        # The window's first hour, only partly in it: its own memories (at most an hour's worth), by the index.
        sources.update(dict(self._read(
            f"SELECT source, COUNT(*) FROM entries e WHERE e.workspace IN ({scope}) AND e.created_at >= ?"
            " AND e.created_at < ? AND e.created_at <= ? GROUP BY source",
            (*workspaces, since, (start + 1) * HOUR_MS, now),
        ).fetchall()))
        topics = self._read(
            f"SELECT tag, SUM(n) FROM day_tag_counts WHERE workspace IN ({scope}) AND day >= ? AND day <= ?"
            " GROUP BY tag HAVING SUM(n) > 0 ORDER BY SUM(n) DESC, tag", (*workspaces, topics_day, day_of(now)),
        ).fetchall()
        return Activity(tuple(SourceCount(s, n) for s, n in sorted(sources.items(), key=lambda i: (-i[1], i[0]))
                              if n > 0),
                        {day: n for day, n in days.items() if n > 0}, tuple(TagCount(t, n) for t, n in topics))

    def newest_tagged(self, tags: Sequence[str], workspaces: Sequence[str], limit: int) -> list[EntryRow]:
        if not workspaces or not tags:
            return []
        # From the tag's rows (a handful), not a walk of the workspace's memories looking for them.
        rows = self._read(
            f"SELECT DISTINCT e.* FROM entry_tags t CROSS JOIN entries e ON e.rid = t.entry_rid"
            f" WHERE t.tag IN ({marks(tags)}) AND +e.workspace IN ({marks(workspaces)}) AND NOT EXISTS"
            " (SELECT 1 FROM entry_tags d WHERE d.entry_rid = e.rid AND d.tag = ?)"
            " ORDER BY e.created_at DESC, e.rid DESC LIMIT ?", (*tags, *workspaces, DEPRECATED, limit),
        ).fetchall()
        return [row_of(r) for r in rows]

    def resurface(self, workspaces: Sequence[str], created_before: int, seed: int,
                  exclude: Sequence[str] = ()) -> EntryRow | None:
        if not workspaces:
            return None
        # Per workspace, the first old-enough member at or after the seed in pick order, and the first of all
        # (wrapping round); the first of those across workspaces wins.
        skipped = f" AND id NOT IN ({marks(exclude)})" if exclude else ""
        part = ("SELECT * FROM (SELECT {wrapped} AS wrapped, pick, id FROM resurface_pool WHERE workspace = ?"
                f" AND pick {{side}} ? AND created_at < ?{skipped} ORDER BY pick, id LIMIT 1)")
        parts, params = [], []
        for wrapped, side in ((0, ">="), (1, "<")):
            for workspace in workspaces:
                parts.append(part.format(wrapped=wrapped, side=side))
                params += [workspace, seed, created_before, *exclude]
        row = self._read(
            f"SELECT e.* FROM ({' UNION ALL '.join(parts)}) p JOIN entries e ON e.id = p.id"
            " ORDER BY p.wrapped, p.pick, p.id LIMIT 1", params,
        ).fetchone()
        return row_of(row) if row else None
