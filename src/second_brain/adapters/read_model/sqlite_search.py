"""Keyword search in SQLite: FTS5 trigram matches ranked by bm25, scans for words a trigram cannot match,
document frequencies for telling rare words from common ones, and the episodic neighbours of a hit."""

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from ...domain import text
from ...ports.read_model import EntryRow, Filters, KeywordHit, TermStats
from ..sqlite_database import SQLiteDatabase
from .sqlite_sql import (
    ALWAYS_EXCLUDED,
    ENTRY_COLUMNS,
    SQLiteReads,
    entry_of,
    escape_like,
    marks,
    newest_in_scope,
    phrase,
    recall_scope_sql,
    scope_sql,
)

EXACT_DF_LIMIT = 2000  # count a word exactly when its rarest trigram is in at most this many memories
SHORT_TERM_SAMPLE = 200
DF_CACHE_SECONDS = 60.0
DF_CACHE_SIZE = 50_000
CACHED_DF_MIN = 100  # exact word counts at least this high are cached: a minute's drift hardly moves their idf
RANKED_SPARE = 20  # ranked beyond the limit, for the few memories recall never shows among the best
SPELLING_COUNT_LIMIT = 1000  # enough to tell a common spelling from a rare one
NARROW_SHARE = 0.25  # a caller reading at most this share of the brain searches their own rows, not the index


class SQLiteKeywordSearch(SQLiteReads):
    def __init__(self, db: SQLiteDatabase) -> None:
        super().__init__(db)
        self._df_cache: dict[str, tuple[int, float]] = {}

    def term_stats(self, terms: Sequence[str], workspaces: Sequence[str]) -> TermStats:
        conn = self.db.connection()
        total = conn.execute(
            f"SELECT COALESCE(SUM(n), 0) FROM workspace_counts WHERE workspace IN ({marks(workspaces)})",
            tuple(workspaces)).fetchone()[0] if workspaces else 0
        df: dict[str, int] = {}
        for term in terms:
            if len(term) >= 3:
                # A word occurs in at most as many memories as its rarest trigram: an exact count only when cheap.
                bound = min(self._trigram_df(conn, term[i : i + 3]) for i in range(len(term) - 2))
                df[term] = bound if bound > EXACT_DF_LIMIT else self._exact_df(conn, term)
            else:
                sample = conn.execute(
                    "SELECT SUM(content LIKE ? ESCAPE '\\'), COUNT(*) FROM"
                    " (SELECT content FROM entries ORDER BY rid DESC LIMIT ?)",
                    (f"%{escape_like(term)}%", SHORT_TERM_SAMPLE),
                ).fetchone()
                df[term] = round((sample[0] or 0) * total / sample[1]) if sample[1] else 0
        return TermStats(total=total, df=df)

    def _exact_df(self, conn: sqlite3.Connection, term: str) -> int:
        """How many memories hold the term. A count of at least CACHED_DF_MIN is kept for a minute, as trigram
        counts are (counting an everyday word walks the doclists of all its trigrams: 0.5 ms at 10k); a rarer one
        is counted every time, so a word a capture just brought in is searched at once."""
        return self._counted("\0" + term, lambda: conn.execute(
            "SELECT COUNT(*) FROM entries_fts WHERE entries_fts MATCH ?", (phrase(term),)).fetchone()[0],
            CACHED_DF_MIN)

    def _trigram_df(self, conn: sqlite3.Connection, trigram: str) -> int:
        # Counting a common trigram walks its whole doclist: cache counts briefly, idf need not be exact.
        def count() -> int:
            row = conn.execute("SELECT doc FROM entries_fts_vocab WHERE term = ?", (trigram.lower(),)).fetchone()
            return row[0] if row else 0

        return self._counted(trigram.lower(), count)

    def _counted(self, key: str, count: Callable[[], int], kept_from: int = 0) -> int:
        """A count from the minute-long cache, or counted now (and cached when at least `kept_from`)."""
        cached = self._df_cache.get(key)
        now = time.monotonic()
        if cached and now - cached[1] < DF_CACHE_SECONDS:
            return cached[0]
        counted = count()
        if counted >= kept_from:
            if len(self._df_cache) > DF_CACHE_SIZE:
                self._df_cache.clear()
            self._df_cache[key] = (counted, now)
        return counted

    def keyword_search(self, terms: Sequence[str], filters: Filters, limit: int, require_all: bool = False,
                       newest_first: bool = False) -> list[KeywordHit]:
        if not terms or not filters.workspaces:
            return []
        where, params = recall_scope_sql(filters)
        joiner = " AND " if require_all else " OR "
        if newest_first and self._narrow(filters.workspaces) and all(t.isascii() for t in terms):
            # The index holds every workspace's text: streaming its matches for one member of a team reads the
            # whole team's to find the member's share. Their own memories, newest first, tested row by row, stop
            # as soon: the cost follows the caller's share of the brain, not the brain. (LIKE folds ASCII case
            # only, as the index folds every case: words with other letters keep the index.)
            likes = joiner.join("e.content LIKE ? ESCAPE '\\'" for _ in terms)
            sql, params = newest_in_scope(f"{ENTRY_COLUMNS}, 0.0", filters, limit, likes,
                                          [f"%{escape_like(t)}%" for t in terms], recall_scope_sql)
            return [KeywordHit(entry_of(r), 0.0) for r in self._read(sql, params).fetchall()]
        match = joiner.join(phrase(t) for t in terms)
        if not newest_first and replace(filters, workspaces=()) == Filters(()) \
                and self._scoped_to(filters.workspaces) is None:
            ranked = self._ranked_whole_brain(match, limit)
            if ranked is not None:
                return ranked
        # bm25 must score every match before it can sort (and count each term's matches in the whole index before
        # it scores one); rowid order streams and stops at the limit, so newest first goes without a score.
        order = "entries_fts.rowid DESC" if newest_first else "bm25(entries_fts)"
        score = "0.0" if newest_first else "-bm25(entries_fts)"
        rows = self._read(
            f"SELECT {ENTRY_COLUMNS}, {score} FROM entries_fts JOIN entries e ON e.rid = entries_fts.rowid"
            f" WHERE entries_fts MATCH ? AND {where} ORDER BY {order} LIMIT ?",
            (match, *params, limit),
        ).fetchall()
        return [KeywordHit(entry_of(r), float(r[15])) for r in rows]

    def _ranked_whole_brain(self, match: str, limit: int) -> list[KeywordHit] | None:
        """bm25's best `limit` for a caller who reads every memory and filters nothing: ranked on the index alone,
        then the rows read for those only, where the one query joins and checks every match before it sorts (with
        the NOT IN below, an everyday query's keyword searches at 10k: 8.1 -> 6.6 ms a recall, bench/stages.py).
        None when memories recall never shows (deprecated, unconfirmed patterns) took so many of the best that
        fewer than `limit` are left: the one query answers."""
        wanted = limit + RANKED_SPARE
        ranked = self._read("SELECT rowid, -bm25(entries_fts) FROM entries_fts WHERE entries_fts MATCH ?"
                            " ORDER BY bm25(entries_fts) LIMIT ?", (match, wanted)).fetchall()
        scores = dict(ranked)
        rows: dict[int, sqlite3.Row] = {}
        rids = list(scores)
        for start in range(0, len(rids), 500):
            batch = rids[start : start + 500]
            rows.update((row[-1], row) for row in self._read(
                f"SELECT {ENTRY_COLUMNS}, e.rid FROM entries e WHERE e.rid IN ({marks(batch)}) AND {ALWAYS_EXCLUDED}",
                (*batch, *text.NEVER_RECALLED)).fetchall())
        if len(ranked) == wanted and len(rows) < limit:
            return None
        return [KeywordHit(entry_of(rows[rid]), float(scores[rid])) for rid in rids if rid in rows][:limit]

    def _narrow(self, workspaces: Sequence[str]) -> bool:
        """Whether these workspaces hold at most NARROW_SHARE of the brain's memories."""
        scoped, everyone = self._share(workspaces)
        return scoped <= everyone * NARROW_SHARE

    def _share(self, workspaces: Sequence[str]) -> tuple[int, int]:
        """(memories in these workspaces, memories in the brain), from the kept counts."""
        conn = self.db.connection()
        everyone = conn.execute("SELECT COALESCE(SUM(n), 0) FROM workspace_counts").fetchone()[0]
        scoped = conn.execute(f"SELECT COALESCE(SUM(n), 0) FROM workspace_counts WHERE workspace IN"
                              f" ({marks(workspaces)})", tuple(workspaces)).fetchone()[0] if workspaces else 0
        return scoped, everyone

    def spellings(self, words: Sequence[str], workspaces: Sequence[str]) -> dict[str, dict[str, int]]:
        if not workspaces:
            return {}
        conn = self.db.connection()
        scoped = self._scoped_to(workspaces)
        found: dict[str, dict[str, int]] = {}
        for word in dict.fromkeys(words):
            if len(word) > text.SLIP_WORD_MAX or self._begins_a_word(conn, word, scoped):
                continue
            counts = {term: self._holding(conn, term, scoped) if scoped else doc
                      for term, doc in self._one_slip_away(conn, word)}
            found[word] = {term: n for term, n in counts.items() if n > 0}
        return found

    def _one_slip_away(self, conn: sqlite3.Connection, word: str) -> list[tuple[str, int]]:
        """The brain's words one slip from `word`, with how many memories hold each. A seek into the vocabulary
        costs about 17 us, and a word has ~300 neighbours: those that keep its first two letters are found by one
        read of the words beginning with them instead, the rest (a slip in the first two letters) by seeks."""
        near, start = text.one_edit(word), word[:2]
        ranged = conn.execute("SELECT term, doc FROM entries_words_vocab WHERE term >= ? AND term < ?",
                              (start, start + "\U0010ffff")).fetchall()
        sought = sorted(w for w in near if not w.startswith(start))
        found = conn.execute(f"SELECT term, doc FROM entries_words_vocab WHERE term IN ({marks(sought)})",
                             sought).fetchall()
        return [(term, doc) for term, doc in ranged if term in near] + found

    def _scoped_to(self, workspaces: Sequence[str]) -> Sequence[str] | None:
        """The workspaces to look in, or None when they hold every memory (the index's own counts are theirs)."""
        scoped, everyone = self._share(workspaces)
        return None if scoped == everyone else workspaces

    def _begins_a_word(self, conn: sqlite3.Connection, start: str, workspaces: Sequence[str] | None) -> bool:
        """Whether a memory (in the workspaces, or anywhere) holds a word beginning with `start`: the keyword arm
        finds it whole. The vocabulary answers for the whole brain; a caller reading part of it is asked of the
        rows only when the brain holds one at all."""
        anywhere = conn.execute("SELECT 1 FROM entries_words_vocab WHERE term >= ? AND term < ? LIMIT 1",
                                (start, start + "\U0010ffff")).fetchone() is not None
        if not anywhere or workspaces is None:
            return anywhere
        return conn.execute(
            "SELECT 1 FROM entries_words JOIN entries e ON e.rid = entries_words.rowid"
            f" WHERE entries_words MATCH ? AND e.workspace IN ({marks(workspaces)}) LIMIT 1",
            (phrase(start) + "*", *workspaces)).fetchone() is not None

    def _holding(self, conn: sqlite3.Connection, word: str, workspaces: Sequence[str]) -> int:
        """How many memories in the workspaces hold the word, counted up to SPELLING_COUNT_LIMIT."""
        return conn.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM entries_words JOIN entries e ON e.rid = entries_words.rowid"
            f" WHERE entries_words MATCH ? AND e.workspace IN ({marks(workspaces)}) LIMIT ?)",
            (phrase(word), *workspaces, SPELLING_COUNT_LIMIT)).fetchone()[0]

    def scan_search(self, terms: Sequence[str], filters: Filters, limit: int) -> list[KeywordHit]:
        if not terms:
            return []
        where, params = recall_scope_sql(filters)
        likes = " OR ".join("e.content LIKE ? ESCAPE '\\'" for _ in terms)
        rows = self._read(
            f"SELECT {ENTRY_COLUMNS} FROM entries e WHERE ({likes}) AND {where} ORDER BY e.created_at DESC LIMIT ?",
            (*(f"%{escape_like(t)}%" for t in terms), *params, limit),
        ).fetchall()
        return [KeywordHit(entry_of(r), 0.0) for r in rows]

    def hydrate(self, ids: Sequence[str], filters: Filters) -> dict[str, EntryRow]:
        # The tags never recalled are dropped from the rows read (the tags column is what entry_tags mirrors):
        # a NOT EXISTS per id in SQL costs as much as reading the rows.
        where, params = scope_sql(filters, by_id=True)
        never = frozenset(text.NEVER_RECALLED)
        found: dict[str, EntryRow] = {}
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            rows = self._read(
                f"SELECT {ENTRY_COLUMNS} FROM entries e WHERE e.id IN ({marks(batch)}) AND {where}",
                (*batch, *params),
            ).fetchall()
            found.update({entry.id: entry for entry in map(entry_of, rows) if never.isdisjoint(entry.tags)})
        return found

    def written(self, ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            rows = self._read(f"SELECT id, created_at, position FROM entries WHERE id IN ({marks(batch)})", batch)
            found.update({r[0]: (r[1], r[2]) for r in rows.fetchall()})
        return found

    def neighbours(self, entries: Sequence[EntryRow], reach: int, window_ms: int) -> dict[str, list[tuple[str, int]]]:
        found: dict[str, list[tuple[str, int]]] = {}
        for entry in entries:
            near: list[tuple[str, int]] = []
            at = entry.created_at
            for op, order, low, high in (("<", "DESC", text.within_int64(at - window_ms), at),
                                         (">", "ASC", at, text.within_int64(at + window_ms))):
                rows = self._read(
                    f"SELECT id FROM entries WHERE workspace = ? AND created_at BETWEEN ? AND ? AND source = ?"
                    f" AND (created_at, rid) {op} (?, (SELECT rid FROM entries WHERE id = ?))"
                    f" ORDER BY created_at {order}, rid {order} LIMIT ?",
                    (entry.workspace, low, high, entry.source, entry.created_at, entry.id, reach),
                ).fetchall()
                near.extend((row[0], step) for step, row in enumerate(rows, start=1))
            found[entry.id] = near
        return found
