"""Vectors persisted as float32 blobs in the brain's SQLite file, searched in memory.

In memory each vector is kept twice, both smaller than the float32 on disk: in float16 (within 1e-4 of
the float32 cosine: the order and scores searches answer with) and, in a brain of a few thousand rows or
more, as int8 codes of its 128 principal components, for a first pass over every row. The float16 rows are
scored with the query in float16, their products summed in float32 on every CPU (kernels.py). Filters become a
boolean mask before the top-k cut.
"""

import sqlite3
import threading
from collections.abc import Callable, Sequence

import numpy as np

from ...domain import text
from ...domain.events import Envelope, memory_of
from ...ports.read_model import Filters
from ...ports.vector_index import PassageVector, PendingEntry, VectorHit
from ..sqlite_database import SQLiteDatabase
from ..sqlite_sql import marks, tag_rids
from . import kernels

_SIMD = kernels.load()  # without it every search scores the whole float16 matrix, with numpy
# Whether simsimd's float16 dot products add in float32 here (they are made to wherever it can be); if not, the
# exact pass is numpy's: slower (0.9 against 0.1 ms for 1,000 rows), the same answer.
_SIMD_EXACT = kernels.hold_to_float32(_SIMD)

SHORTLIST = 2  # rows scored exactly per row needed, after the int8 pass
NARROW_SHARE_INVERSE = 4  # a scope of at most a quarter of the rows is scored on its own rows, exactly
FIRST_PASS_DIMS = 128  # the principal components the first pass scores
FIT_ROWS = 4096  # the rows a brain holds when its principal components are first found (then at each doubling)
FIT_SAMPLE = 16_384  # rows, evenly spaced, the components are found from
# The in-memory arrays with one entry per stored passage (row), grown and compacted together.
ROW_ARRAYS = ("_matrix", "_codes", "_code_scale", "_rid", "_created", "_workspace", "_is_update", "_alive")

TABLES = [
    """CREATE TABLE IF NOT EXISTS vectors (
        entry_id TEXT NOT NULL, passage INTEGER NOT NULL, is_update INTEGER NOT NULL,
        text_hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (entry_id, passage)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS vector_state (
        entry_id TEXT PRIMARY KEY, version INTEGER NOT NULL, model_id TEXT NOT NULL
    ) WITHOUT ROWID""",
    # The work queue, so finding what to embed costs the number of pending memories, not of all memories.
    "CREATE TABLE IF NOT EXISTS vector_pending (entry_id TEXT PRIMARY KEY) WITHOUT ROWID",
]
# The cache survives replays: it is keyed by what was embedded. Which memory each passage came from,
# in any of its versions, is kept beside it, so forgetting a memory can take its cached vectors too.
CACHE_TABLES = [
    """CREATE TABLE IF NOT EXISTS embedding_cache (
        model_id TEXT NOT NULL, text_hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model_id, text_hash)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS embedded_passages (
        entry_id TEXT NOT NULL, text_hash TEXT NOT NULL, PRIMARY KEY (entry_id, text_hash)
    ) WITHOUT ROWID""",
]


class SQLiteVectorIndex:
    name = "vectors"
    schema = 1

    def __init__(self, db: SQLiteDatabase, model_id: str, dimension: int,
                 on_pending: Callable[[], None] = lambda: None) -> None:
        self.db = db
        self.model_id = model_id  # vectors of any other model count as missing: a model change re-indexes
        self.dimension = dimension
        self.on_pending = on_pending  # told when committed events leave memories to embed
        self._lock = threading.RLock()
        self._committing = threading.local()  # what the last apply of this thread's append did, for after_commit
        self._reset()

    # -- projection: forgetting and deprecation remove vectors in the append's transaction ----------

    def create(self, conn: sqlite3.Connection) -> None:
        for statement in [*TABLES, *CACHE_TABLES]:
            conn.execute(statement)

    def drop(self, conn: sqlite3.Connection) -> None:
        for table in ("vectors", "vector_state", "vector_pending"):
            conn.execute(f"DROP TABLE IF EXISTS {table}")

    def apply(self, conn: sqlite3.Connection, events: Sequence[Envelope]) -> None:
        # Decided from the row the entries projection has just written from the fold, in this same transaction:
        # what the memory is now, not which events happened to it.
        gone, queued = set(), False
        moved: dict[str, str] = {}
        for entry_id in dict.fromkeys(m for e in events if (m := memory_of(e.stream_id)) is not None):
            row = conn.execute(
                "SELECT e.content_version, e.workspace, s.version, s.model_id, EXISTS (SELECT 1 FROM entry_tags t"
                " WHERE t.entry_rid = e.rid AND t.tag = ?) AS deprecated"
                " FROM entries e LEFT JOIN vector_state s ON s.entry_id = e.id WHERE e.id = ?",
                (text.DEPRECATED, entry_id)).fetchone()
            if row is None:  # forgotten
                # Vectors can be inverted back into text: the cached ones of every version of this memory go too.
                conn.execute(
                    "DELETE FROM embedding_cache WHERE text_hash IN"
                    " (SELECT text_hash FROM embedded_passages WHERE entry_id = ?)", (entry_id,),
                )
                conn.execute("DELETE FROM embedded_passages WHERE entry_id = ?", (entry_id,))
            if row is None or row["deprecated"]:
                _delete_entry(conn, entry_id)
                gone.add(entry_id)
            elif row["version"] is None or row["version"] < row["content_version"] or row["model_id"] != self.model_id:
                conn.execute("INSERT OR IGNORE INTO vector_pending (entry_id) VALUES (?)", (entry_id,))
                queued = True
            if row is not None:
                moved[entry_id] = row["workspace"]  # shared or taken back: searches filter on where it is now
        self._committing.gone, self._committing.queued, self._committing.moved = gone, queued, moved

    def after_commit(self, events: Sequence[Envelope] | None) -> None:
        if events is None:
            self.reconcile()
            self.load()
            self.on_pending()
            return
        # The same thread that applied the batch, right after its commit.
        gone: set[str] = getattr(self._committing, "gone", set())
        queued: bool = getattr(self._committing, "queued", False)
        moved: dict[str, str] = getattr(self._committing, "moved", {})
        self._committing.gone, self._committing.queued, self._committing.moved = set(), False, {}
        with self._lock:
            for entry_id, workspace in moved.items():
                for row in self._rows_by_entry.get(entry_id, ()):
                    self._workspace[row] = self._workspace_codes.setdefault(workspace, len(self._workspace_codes))
        if any(entry_id in self._rows_by_entry for entry_id in gone):
            # Under the write lock: no store is half done, and one that revived a memory since keeps its rows.
            with self.db.write() as conn, self._lock:
                for entry_id in gone:
                    if not conn.execute("SELECT 1 FROM vector_state WHERE entry_id = ?", (entry_id,)).fetchone():
                        self._forget_rows(entry_id)
        if queued:
            self.on_pending()

    # -- indexing -------------------------------------------------------------------------------------

    def reconcile(self) -> None:
        """Queue every memory whose vectors are missing, stale or of another model (at start-up and after a replay)."""
        with self.db.write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO vector_pending (entry_id) SELECT e.id FROM entries e"
                " LEFT JOIN vector_state s ON s.entry_id = e.id"
                " WHERE (s.version IS NULL OR s.version < e.content_version OR s.model_id != ?)"
                " AND NOT EXISTS (SELECT 1 FROM entry_tags t WHERE t.entry_rid = e.rid AND t.tag = ?)",
                (self.model_id, text.DEPRECATED),
            )

    def pending(self, limit: int, ids: Sequence[str] | None = None) -> list[PendingEntry]:
        only = f" AND e.id IN ({marks(ids)})" if ids is not None else ""
        rows = self.db.connection().execute(
            f"SELECT e.id, e.content, e.content_version, e.workspace FROM vector_pending p"
            f" CROSS JOIN entries e ON e.id = p.entry_id WHERE 1{only} ORDER BY e.rid LIMIT ?",
            (*(ids or ()), limit),
        ).fetchall()
        return [PendingEntry(r[0], r[1], r[2], r[3]) for r in rows]

    def vector_count(self, entry_id: str) -> int:
        return self.db.connection().execute(
            "SELECT COUNT(*) FROM vectors WHERE entry_id = ?", (entry_id,)).fetchone()[0]

    def pending_count(self, older_than: int | None = None, workspaces: Sequence[str] | None = None) -> int:
        # CROSS JOIN keeps the queue as the outer loop: the cost is the queue's length, not the brain's size.
        sql = "SELECT COUNT(*) FROM vector_pending p CROSS JOIN entries e ON e.id = p.entry_id WHERE 1"
        params: list[object] = []
        if older_than is not None:
            sql, params = sql + " AND e.created_at < ?", [older_than]
        if workspaces is not None:
            sql, params = sql + f" AND e.workspace IN ({marks(workspaces)})", [*params, *workspaces]
        return self.db.connection().execute(sql, params).fetchone()[0]

    def is_indexed(self, entry_id: str) -> bool:
        row = self.db.connection().execute(
            "SELECT s.version >= e.content_version AND s.model_id = ? FROM entries e"
            " JOIN vector_state s ON s.entry_id = e.id WHERE e.id = ?", (self.model_id, entry_id)).fetchone()
        return bool(row and row[0])

    def cached(self, model_id: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        hashes = list(dict.fromkeys(text_hashes))
        for start in range(0, len(hashes), 500):
            batch = hashes[start : start + 500]
            rows = self.db.connection().execute(
                f"SELECT text_hash, vector FROM embedding_cache WHERE model_id = ? AND text_hash IN"
                f" ({', '.join('?' for _ in batch)})",
                (model_id, *batch),
            ).fetchall()
            found.update({h: np.frombuffer(v, dtype=np.float32) for h, v in rows})
        return found

    def store(self, model_id: str, entry: PendingEntry, passages: Sequence[PassageVector]) -> bool:
        changed = False
        try:
            with self.db.write() as conn:
                # Off the queue means forgotten or deprecated since `pending` read it: those vectors must not land.
                row = conn.execute(
                    "SELECT e.rid, e.content_version, e.created_at, e.workspace FROM entries e"
                    " JOIN vector_pending p ON p.entry_id = e.id WHERE e.id = ?", (entry.id,)).fetchone()
                if row is None or row["content_version"] != entry.version:
                    return False
                _write_vectors(conn, model_id, entry, passages)
                # The matrix changes under the write lock, so a forget or deprecation is either committed before
                # (and took the entry off the queue) or after (and its after_commit removes these rows).
                changed = True
                with self._lock:
                    self._forget_rows(entry.id)
                    for p in passages:
                        self._add_row(entry.id, row["rid"], row["created_at"], row["workspace"], p.is_update, p.vector)
                    self._fit_when_due()
        except BaseException:
            if changed:
                self.load()  # rolled back after the matrix changed: read it again from the table
            raise
        return True

    # -- search ---------------------------------------------------------------------------------------

    def search(self, query: np.ndarray, filters: Filters, limit: int) -> list[VectorHit]:
        with self._lock:
            size = self._size
            if size == 0 or limit <= 0:
                return []
            mask = self._mask(filters, size)
            if not mask.any():
                return []
            query = query.astype(np.float32)
            if np.count_nonzero(mask) * NARROW_SHARE_INVERSE <= size:
                # A narrow scope (one member of a big team, a rare tag): its own rows, scored exactly, cost less
                # than a first pass over every row of the brain.
                selected = np.flatnonzero(mask)
                return self._hits(selected, self._exact(selected, query), limit)
            want = min(size, max(limit * 4, 64))
            # A large brain is first scored on int8 codes of its rows' principal components (a sixth of the bytes
            # of the float16 rows to read), then the best rows, twice as many as needed, on their float16 rows: the
            # order scoring every row gives, at a fraction of the cost. A brain small enough to score whole, or too
            # young to have its components found, is scored on its float16 rows at once.
            coarse = _SIMD is not None and self._basis is not None and size > SHORTLIST * want
            scores = self._approximate(query, size) if coarse else self._exact(slice(size), query)
            if not mask.all():
                scores = np.where(mask, scores, -np.inf)
            while True:
                pick = min(size, want * SHORTLIST) if coarse else want
                top = _best(scores, pick)
                top = top[np.isfinite(scores[top])]
                exact = self._exact(top, query) if coarse else scores[top]
                hits = self._hits(top, exact, limit)
                if len(hits) == limit or pick >= size:
                    return hits
                want = min(size, want * 4)  # many passages per memory: look deeper

    def _hits(self, rows: np.ndarray, scores: np.ndarray, limit: int) -> list[VectorHit]:
        """The best passage of up to `limit` memories among these rows, best first; equal scores in the order the
        rows were stored."""
        hits: list[VectorHit] = []
        seen: set[str] = set()
        order = np.lexsort((rows, -scores))
        for row, score in zip(rows[order].tolist(), scores[order].tolist(), strict=True):
            entry_id = self._entry[row]
            if entry_id not in seen:
                seen.add(entry_id)
                hits.append(VectorHit(entry_id, score, bool(self._is_update[row])))
                if len(hits) == limit:
                    break
        return hits

    def _approximate(self, query: np.ndarray, size: int) -> np.ndarray:
        """Every row's cosine with the query on its principal components, from their int8 codes, divided by the
        query's positive int8 scale: the order of the cosines, which is all the first pass is for."""
        assert _SIMD is not None, "search chooses this first pass only with simsimd"
        code, _ = _quantize(query @ self._basis)
        # On this thread alone: two threads read the codes no faster (a helper thread scoring half the rows took
        # 1.48 ms against 1.39 at 100k with all 384 dimensions), and simsimd's OpenMP pool would leave idle
        # threads spinning after each pass, on the cores the rest of the request needs (recall +5 ms at 100k).
        dots = np.asarray(_SIMD.cdist(code[None, :], self._codes[:size], metric="dot", out_dtype="float32",
                                      threads=1))[0]
        dots *= self._code_scale[:size]
        return dots

    def _exact(self, rows: np.ndarray | slice, query: np.ndarray) -> np.ndarray:
        """Cosines of the float16 rows with the query in float16, summed in float32."""
        matrix, query = self._matrix[rows], query.astype(np.float16)
        if _SIMD is None or not _SIMD_EXACT or not len(matrix):
            return matrix.astype(np.float32) @ query.astype(np.float32)
        return np.asarray(_SIMD.cdist(query[None, :], matrix, metric="dot", out_dtype="float32"))[0]

    def scores_for(self, query: np.ndarray, entry_ids: Sequence[str]) -> dict[str, VectorHit]:
        with self._lock:
            owners = [(entry_id, row) for entry_id in entry_ids for row in self._rows_by_entry.get(entry_id, ())]
            if not owners:
                return {}
            rows = np.fromiter((row for _, row in owners), dtype=np.int64, count=len(owners))
            scores = self._exact(rows, query)
            hits: dict[str, VectorHit] = {}
            for (entry_id, row), score in zip(owners, scores.tolist(), strict=True):
                if entry_id not in hits or score > hits[entry_id].score:
                    hits[entry_id] = VectorHit(entry_id, score, bool(self._is_update[row]))
            return hits

    def vector_of(self, entry_id: str) -> np.ndarray | None:
        return self.vectors_of([entry_id]).get(entry_id)

    def vectors_of(self, entry_ids: Sequence[str]) -> dict[str, np.ndarray]:
        with self._lock:
            return {entry_id: self._matrix[rows[0]].astype(np.float32) for entry_id in entry_ids
                    if (rows := self._rows_by_entry.get(entry_id))}

    def _mask(self, filters: Filters, size: int) -> np.ndarray:
        codes = [self._workspace_codes[w] for w in filters.workspaces if w in self._workspace_codes]
        mask = self._alive[:size].copy()
        if len(codes) < len(self._workspace_codes):  # some stored workspace is out of scope
            mask &= np.isin(self._workspace[:size], codes)
        if filters.after is not None:
            mask &= self._created[:size] >= filters.after
        if filters.before is not None:
            mask &= self._created[:size] <= filters.before
        conn = self.db.connection()
        for tag in (filters.tag, f"kind:{filters.kind}" if filters.kind else None):
            if tag:
                mask &= np.isin(self._rid[:size], tag_rids(conn, [tag]))
        if filters.any_tags:
            mask &= np.isin(self._rid[:size], tag_rids(conn, filters.any_tags))
        if filters.born_by is not None:
            # Rows enter `entries` as their memory's first event is projected, in log order, and never come back
            # once deleted: rids rise with first positions, so the latest begun by then bounds them all.
            last = conn.execute("SELECT rid FROM entries WHERE position <= ? ORDER BY position DESC LIMIT 1",
                                (filters.born_by,)).fetchone()
            mask &= self._rid[:size] <= (last[0] if last else 0)
        excluded = tag_rids(conn, text.NEVER_RECALLED)
        if len(excluded):
            mask &= ~np.isin(self._rid[:size], excluded)
        return mask

    # -- the in-memory matrix -------------------------------------------------------------------------

    def load(self) -> None:
        """Read every stored vector into memory (at start-up, and after a replay)."""
        # Under the write lock: a store between reading the table and swapping the matrix would be lost.
        with self.db.write() as conn, self._lock:
            self._reset()
            if not self.dimension:
                return  # no embedder: nothing to search
            rows = conn.execute(
                "SELECT v.entry_id, e.rid, e.created_at, e.workspace, v.is_update, v.vector"
                " FROM vectors v JOIN entries e ON e.id = v.entry_id JOIN vector_state s ON s.entry_id = v.entry_id"
                " WHERE s.model_id = ? ORDER BY e.rid, v.passage", (self.model_id,)
            )
            for entry_id, rid, created_at, workspace, is_update, blob in rows:
                self._add_row(entry_id, rid, created_at, workspace, bool(is_update), np.frombuffer(blob, np.float32))
            self._fit_when_due()

    def _reset(self) -> None:
        self._size = 0
        self._matrix = np.zeros((1024, self.dimension), dtype=np.float16)
        # Each row's principal components in int8, for the first pass, once there are enough rows to find them.
        self._basis: np.ndarray | None = None
        self._fitted_rows = 0
        self._codes = np.zeros((1024, min(self.dimension, FIRST_PASS_DIMS)), dtype=np.int8)
        self._code_scale = np.zeros(1024, dtype=np.float32)
        self._entry: list[str] = []
        self._rid = np.zeros(1024, dtype=np.int64)
        self._created = np.zeros(1024, dtype=np.int64)
        self._workspace = np.zeros(1024, dtype=np.int32)
        self._is_update = np.zeros(1024, dtype=bool)
        self._alive = np.zeros(1024, dtype=bool)
        self._rows_by_entry: dict[str, list[int]] = {}
        self._workspace_codes: dict[str, int] = {}
        self._dead = 0

    def _add_row(self, entry_id: str, rid: int, created_at: int, workspace: str, is_update: bool,
                 vector: np.ndarray) -> None:
        if self._size == len(self._rid):
            self._grow()
        row = self._size
        self._matrix[row] = vector
        if self._basis is not None:
            self._codes[row], self._code_scale[row] = _quantize(vector @ self._basis)
        self._entry.append(entry_id)
        self._rid[row] = rid
        self._created[row] = created_at
        self._workspace[row] = self._workspace_codes.setdefault(workspace, len(self._workspace_codes))
        self._is_update[row] = is_update
        self._alive[row] = True
        self._rows_by_entry.setdefault(entry_id, []).append(row)
        self._size += 1

    def _fit_when_due(self) -> None:
        """Find the principal components once the brain holds FIT_ROWS rows, and again each time it doubles."""
        if self._size >= max(FIT_ROWS, 2 * self._fitted_rows):
            self._fit()

    def _fit(self) -> None:
        """Find the directions that carry most of the stored vectors' dot products (the eigenvectors of their
        second moments, from an evenly spaced sample of rows), and code every row on them again.

        Under the index lock, in place: searches wait for it (145 ms at 100k rows, at each doubling); codes made
        beside the old ones and swapped in left the 100k bench server 35-45 MB larger.

        Sentence embeddings fill few of their dimensions (in the 100k-note bench brain, 80% of a note's length
        and 59% of a question's lie in the first 128 of 384), and a question's leftover part hardly correlates
        with a note's. This is measured, not proved: there, searches for 160 memories found the same ones in the
        same order as scoring every float16 row for 103 queries of 103, and reading 128 int8 codes a row instead
        of 384 took the first pass from 1.32 to 0.51 ms (12.8 MB of codes instead of 38: they stay in the
        processor's cache).
        """
        alive = np.flatnonzero(self._alive[: self._size])
        sample = self._matrix[alive[:: max(1, -(-len(alive) // FIT_SAMPLE))]].astype(np.float32)
        finite = np.isfinite(sample).all(axis=1)
        if not finite.all():
            sample = sample[finite]  # one broken vector must not stop every fit
        if not len(sample):
            return
        _, directions = np.linalg.eigh(sample.T @ sample)  # ascending: the strongest last
        with self._lock:
            self._basis = np.ascontiguousarray(directions[:, ::-1][:, : self._codes.shape[1]])
            for start in range(0, self._size, 8192):  # in blocks: a float32 copy of every row is 150 MB at 100k
                stop = min(self._size, start + 8192)
                self._codes[start:stop], self._code_scale[start:stop] = _quantize(
                    self._matrix[start:stop].astype(np.float32) @ self._basis)
            self._fitted_rows = self._size

    def _grow(self) -> None:
        capacity = len(self._rid) * 2
        for name in ROW_ARRAYS:
            old = getattr(self, name)
            grown = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            grown[: len(old)] = old
            setattr(self, name, grown)

    def _forget_rows(self, entry_id: str) -> None:
        with self._lock:
            for row in self._rows_by_entry.pop(entry_id, []):
                self._alive[row] = False
                self._matrix[row] = 0.0
                self._codes[row], self._code_scale[row] = 0, 0.0
                self._dead += 1
            if self._dead > 1024 and self._dead > self._size // 4:
                self._compact()

    def _compact(self) -> None:
        # In memory, not by re-reading the table: this runs inside a store's write or after an append's commit,
        # where reading the table again could miss or double a store in flight.
        keep = np.flatnonzero(self._alive[: self._size])
        size, capacity = len(keep), max(1024, 2 * len(keep))
        for name in ROW_ARRAYS:
            old = getattr(self, name)
            kept = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            kept[:size] = old[keep]
            setattr(self, name, kept)
        self._entry = [self._entry[row] for row in keep]
        self._rows_by_entry = {}
        for row, entry_id in enumerate(self._entry):
            self._rows_by_entry.setdefault(entry_id, []).append(row)
        self._size, self._dead = size, 0
        self._fitted_rows = min(self._fitted_rows, size)  # found again once the live rows double




def _delete_entry(conn: sqlite3.Connection, entry_id: str) -> None:
    for table in ("vectors", "vector_state", "vector_pending"):
        conn.execute(f"DELETE FROM {table} WHERE entry_id = ?", (entry_id,))


def _write_vectors(conn: sqlite3.Connection, model_id: str, entry: PendingEntry,
                   passages: Sequence[PassageVector]) -> None:
    _delete_entry(conn, entry.id)
    conn.executemany(
        "INSERT INTO vectors (entry_id, passage, is_update, text_hash, vector) VALUES (?, ?, ?, ?, ?)",
        [(entry.id, i, int(p.is_update), p.text_hash, _blob(p.vector)) for i, p in enumerate(passages)],
    )
    conn.executemany(
        "INSERT OR IGNORE INTO embedding_cache (model_id, text_hash, vector) VALUES (?, ?, ?)",
        [(model_id, p.text_hash, _blob(p.vector)) for p in passages],
    )
    conn.executemany(
        "INSERT OR IGNORE INTO embedded_passages (entry_id, text_hash) VALUES (?, ?)",
        [(entry.id, p.text_hash) for p in passages],
    )
    conn.execute("INSERT INTO vector_state (entry_id, version, model_id) VALUES (?, ?, ?)",
                 (entry.id, entry.version, model_id))
    conn.execute("DELETE FROM vector_pending WHERE entry_id = ?", (entry.id,))


def _best(scores: np.ndarray, pick: int) -> np.ndarray:
    """The rows of the `pick` highest scores, in no order (all rows if there are no more).

    A threshold read from an evenly spaced sample keeps every row above it; when at least `pick` rows
    pass, those contain the best `pick`, and only they need sorting out. An order of magnitude faster
    than partitioning every row, and the same answer: when too few pass, every row is partitioned.
    """
    size = len(scores)
    if pick >= size:
        return np.arange(size)
    stride = size // (8 * pick)
    if stride >= 2:
        sample = scores[::stride]
        rank = min(len(sample) - 1, (pick * 5) // (4 * stride) + 4)  # a quarter more than the expected share
        threshold = np.partition(sample, len(sample) - 1 - rank)[len(sample) - 1 - rank]
        passed = np.flatnonzero(scores >= threshold)
        if len(passed) >= pick:
            return passed[np.argpartition(-scores[passed], pick - 1)[:pick]]
    return np.argpartition(-scores, pick - 1)[:pick]


def _quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 codes and the scale that turns them back, for one vector or each row of a matrix: vectors ≈ codes ×
    scale."""
    peak = np.abs(vectors).max(axis=-1, keepdims=True)
    scale = np.where(peak > 0, peak / 127, 1.0).astype(np.float32)
    return np.round(vectors / scale).astype(np.int8), scale[..., 0]


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()
