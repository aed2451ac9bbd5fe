"""Background indexing: embed new and changed memories, reusing every vector already computed."""

import contextlib
import contextvars
import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ...ports.embedder import Embedder
from ...ports.vector_index import PassageVector, PendingEntry, VectorIndex
from .chunking import Chunk, chunk_memory

log = logging.getLogger("second_brain.indexing")
RECENT_VECTORS = 512
YIELD_SECONDS = 0.05  # the longest background embedding waits for requests to finish before it runs anyway


def lowest_priority() -> None:
    """Run the calling thread at the lowest CPU priority (Linux schedules threads one by one): a model call
    already under way when a request comes in then gives the request the core instead of sharing it."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):  # no per-thread priority here: the wait before each call still holds
        pass


class Foreground:
    """Requests in flight. Background embedding yields the cores to them: it waits, briefly, until none is running.

    A request that asks for indexing itself (POST /vectorize-pending) steps aside while it does (`aside`): it waits
    for the worker's batch, and the worker's texts must not wait for it."""

    def __init__(self) -> None:
        self._running = 0
        self._idle = threading.Condition()
        # Whether the running code is a counted request (a context variable: a sync route's thread inherits it).
        self._counted: contextvars.ContextVar[bool] = contextvars.ContextVar("counted", default=False)

    @contextlib.contextmanager
    def request(self) -> Iterator[None]:
        with self._counting(True):
            yield

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """The calling request does not count while the block runs (outside a request: nothing changes)."""
        with self._counting(False) if self._counted.get() else contextlib.nullcontext():
            yield

    @contextlib.contextmanager
    def _counting(self, counted: bool) -> Iterator[None]:
        """The calling code counted as a running request (or no longer) while the block runs."""
        step = 1 if counted else -1
        self._add(step)
        token = self._counted.set(counted)
        try:
            yield
        finally:
            self._counted.reset(token)
            self._add(-step)

    def _add(self, step: int) -> None:
        with self._idle:
            self._running += step
            if not self._running:
                self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Whether no request is running, waiting at most `timeout` seconds for that."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._running, timeout)


@dataclass(frozen=True)
class IndexReport:
    vectorized: int
    failed: int
    remaining: int


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class _Batch:
    """Entries on their way to the vector index: their passages, the vectors at hand, and the model's work."""

    entries: list[PendingEntry]
    chunks: dict[str, list[Chunk]]  # entry id -> its passages
    hashes: dict[str, str]  # passage text -> its hash
    vectors: dict[str, np.ndarray]  # hash -> vector, from the caches so far
    missing: list[str]  # texts the model is embedding
    embedding: Callable[[], np.ndarray] | None  # waits for those vectors


class Indexer:
    """Turns pending entries into vectors; a failure leaves the entry pending, never lost."""

    def __init__(self, index: VectorIndex, embedder: Embedder, batch_size: int = 32,
                 on_indexed: Callable[[PendingEntry, np.ndarray], object] | None = None,
                 foreground: Foreground | None = None, threads: int = 1) -> None:
        self.index = index
        self.embedder = embedder
        self.batch_size = batch_size
        # With a foreground to yield to, texts are embedded one per call, on `threads` cores at once while no
        # request runs, so a request never waits behind more than the texts already under way.
        self.foreground = foreground
        self._pool = (ThreadPoolExecutor(threads, thread_name_prefix="embedding", initializer=lowest_priority)
                      if foreground and threads > 1 else None)
        # Told of each memory just indexed, with its first passage's vector; what it returns is not read.
        self.on_indexed = on_indexed
        self._lock = threading.Lock()  # the worker and POST /vectorize-pending never embed the same entry twice
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()  # texts embedded at capture, for the worker
        self._waiting: set[str] = set()  # those of them whose memory may still wait for its vectors
        self._recent_lock = threading.Lock()

    def embed(self, text: str) -> np.ndarray:
        """One text's vector, now (the duplicate check); remembered so indexing the memory reuses it."""
        key = text_hash(text)
        with self._recent_lock:
            if key in self._recent:
                return self._recent[key]
        vector = np.asarray(self.embedder.embed_batch([text])[0], dtype=np.float32)
        self._remember({key: vector})
        return vector

    def prepare(self, texts: Sequence[str]) -> None:
        """Embed ahead, on every core, texts about to be checked one by one (a sync's new mirrors): each duplicate
        check then finds its vector at hand, and indexing the memory reuses it."""
        with self._recent_lock:
            todo = [t for t in dict.fromkeys(texts) if text_hash(t) not in self._recent][:RECENT_VECTORS // 2]
        if not todo:
            return
        vectors = self._embed(todo, background=False)()  # the request (or the sync) that asked waits for them
        self._remember({text_hash(text): np.asarray(vector, dtype=np.float32)
                        for text, vector in zip(todo, vectors, strict=True)})

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        """Texts' vectors (by hash) kept for indexing their memories, the oldest let go past RECENT_VECTORS."""
        with self._recent_lock:
            self._recent.update(vectors)
            self._waiting.update(vectors)
            while len(self._recent) > RECENT_VECTORS:
                self._waiting.discard(self._recent.popitem(last=False)[0])

    def catch_up(self, at_most: int = 16) -> bool:
        """Index the few pending memories whose vectors are at hand; whether it ran. A capture calls this before
        its duplicate check, so a note sent twice is caught. Under a bulk load (more than `at_most` pending) it
        returns at once: the check sees what is indexed. When every text this process embedded at capture has been
        stored since, it reads nothing (on OpenSearch the pending count is a search, after a refresh of what this
        process wrote).

        It does not take the worker's lock: it makes no model call (what the lock keeps from being done twice),
        and a memory the worker stores too is stored once (the second store finds it off the queue). Under
        requests a worker's pass holds the lock for seconds, its texts yielding to them: a capture waited up to
        2 s for it."""
        with self._recent_lock:
            waiting = set(self._waiting)
        if not waiting:
            return True
        if self.index.pending_count() > at_most:
            return False
        pending = self.index.pending(at_most + 1)
        if len(pending) > at_most:
            return False
        with self._recent_lock:
            ready = self._at_hand(pending)
            self._waiting -= waiting  # stored now, or never without a model call: not worth another look
        if ready:
            self._index_batch(ready)
        return True

    def index_captured(self, entry_id: str, wait: float = 2.0) -> bool:
        """Store the vectors of a memory a capture just stored, if the capture computed every one of them (no
        model call in the request); whether it did. Where no background worker runs (AWS), this spares the
        next capture's catch-up its reads, and the projector the work."""
        if not self._lock.acquire(timeout=wait):
            return False
        try:
            pending = self.index.pending(1, ids=[entry_id])
            with self._recent_lock:
                ready = self._at_hand(pending)
            return bool(ready) and self._index_batch(ready) == (1, 0)
        finally:
            self._lock.release()

    def _at_hand(self, pending: list[PendingEntry]) -> list[PendingEntry]:
        """The entries indexing costs no model call: every passage's vector was computed at capture. Call under
        `_recent_lock`."""
        return [e for e in pending if all(text_hash(c.text) in self._recent for c in chunk_memory(e.content))]

    def run_once(self, limit: int, background: bool = False, deadline: float | None = None) -> IndexReport:
        """Index up to `limit` pending memories. In the `background` (the worker), each model call first waits
        for running requests; a request's own pass (POST /vectorize-pending) does not wait for itself. No batch
        starts after `deadline` (a time.monotonic() value): what is left stays pending.

        Each batch's texts go to the model before the previous batch is stored, so the embedding threads never
        sit idle while vectors are written and links inferred."""
        with self._aside(background), self._lock:
            pending = self.index.pending(limit)
            results: list[tuple[int, int]] = []
            ahead: _Batch | None = None
            for start in range(0, len(pending), self.batch_size):
                if deadline is not None and time.monotonic() >= deadline:
                    break
                batch = self._start(pending[start : start + self.batch_size], background)
                if ahead is not None:
                    results.append(self._finish(ahead, background))
                ahead = batch
            if ahead is not None:
                results.append(self._finish(ahead, background))
            vectorized, failed = _totals(results)
            return IndexReport(vectorized, failed, self.index.pending_count())

    def index_now(self, entry_id: str) -> int:
        """Embed one entry at once; the number of vectors it now has (0 if embedding failed: it stays pending)."""
        with self._aside(False), self._lock:
            pending = self.index.pending(1, ids=[entry_id])
            if pending:
                self._index_batch(pending)
        return self.index.vector_count(entry_id) if self.index.is_indexed(entry_id) else 0

    def _aside(self, background: bool) -> contextlib.AbstractContextManager[None]:
        """A request's own pass (not the worker's) steps out of the foreground while it waits for and does the
        indexing: else the worker holding the lock would wait out its yield on each text, for that request."""
        return self.foreground.aside() if self.foreground and not background else contextlib.nullcontext()

    def _index_batch(self, entries: list[PendingEntry], background: bool = False) -> tuple[int, int]:
        return self._finish(self._start(entries, background), background)

    def _start(self, entries: list[PendingEntry], background: bool) -> _Batch:
        """Cut the entries into passages, take what the caches hold, and send the rest to the model."""
        chunks = {e.id: chunk_memory(e.content) for e in entries}
        hashes = {c.text: text_hash(c.text) for cs in chunks.values() for c in cs}
        with self._recent_lock:  # what a capture just embedded, by the same model: no need to ask the cache
            vectors = {h: self._recent[h] for h in hashes.values() if h in self._recent}
        unknown = [h for h in hashes.values() if h not in vectors]
        if unknown:  # on OpenSearch a cache read is a search, after a refresh of what this process wrote
            vectors.update(self.index.cached(self.embedder.model_id, unknown))
        missing = [text for text, h in hashes.items() if h not in vectors]
        return _Batch(entries, chunks, hashes, vectors, missing, self._embed(missing, background) if missing else None)

    def _finish(self, batch: _Batch, background: bool) -> tuple[int, int]:
        """Wait for the batch's vectors and store them; (stored, failed)."""
        if batch.embedding is not None:
            try:
                embedded = batch.embedding()
                if len(embedded) != len(batch.missing):
                    raise ValueError(f"the embedder returned {len(embedded)} vectors for {len(batch.missing)} texts")
            except Exception:  # any embedder failure: the entries stay pending and are retried later
                if len(batch.entries) > 1:  # isolate the entry that fails, so it cannot hold the others back
                    return _totals([self._index_batch([entry], background) for entry in batch.entries])
                log.exception("embedding memory %s failed; it stays pending", batch.entries[0].id)
                return 0, 1
            batch.vectors.update({batch.hashes[text]: vector
                                  for text, vector in zip(batch.missing, embedded, strict=True)})
        stored = 0
        for entry in batch.entries:
            passages = [PassageVector(batch.hashes[c.text], c.is_update,
                                      np.asarray(batch.vectors[batch.hashes[c.text]]))
                        for c in batch.chunks[entry.id]]
            if self.index.store(self.embedder.model_id, entry, passages):
                stored += 1
                with self._recent_lock:
                    self._waiting.difference_update(p.text_hash for p in passages)
                if self.on_indexed:
                    try:
                        self.on_indexed(entry, passages[0].vector)
                    except Exception:  # inferring links is a bonus: never a reason to redo the embedding
                        log.exception("after indexing %s", entry.id)
        return stored, 0

    def _embed(self, texts: list[str], background: bool) -> Callable[[], np.ndarray]:
        """Start embedding `texts`; the returned call waits for their vectors (and raises what the model raised).
        Without a pool the work is done by that call."""
        foreground = self.foreground
        if foreground is None:
            return lambda: self.embedder.embed_batch(texts)

        def one(text: str) -> np.ndarray:
            if background:
                foreground.wait_idle(YIELD_SECONDS)
            vector: np.ndarray = self.embedder.embed_batch([text])[0]
            return vector

        if self._pool is None:
            return lambda: np.stack([one(text) for text in texts])
        futures = [self._pool.submit(one, text) for text in texts]
        return lambda: np.stack([future.result() for future in futures])

    def close(self) -> None:
        if self._pool:
            self._pool.shutdown(wait=True, cancel_futures=True)


def _totals(results: list[tuple[int, int]]) -> tuple[int, int]:
    """(stored, failed) summed over batches."""
    return sum(r[0] for r in results), sum(r[1] for r in results)


class IndexingWorker:
    """A daemon thread that drains the pending set; woken by captures, backing off after failures."""

    def __init__(self, indexer: Indexer, batch: int = 256, idle_seconds: float = 30.0,
                 on_drained: Callable[[], None] = lambda: None) -> None:
        self.indexer = indexer
        self.batch = batch
        self.on_drained = on_drained  # told when the pending set has just been emptied
        self.idle_seconds = idle_seconds  # commits wake the worker; the timeout is only a safety net
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="indexing-worker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def notify(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _run(self) -> None:
        lowest_priority()
        backoff = 1.0
        while not self._stop.is_set():
            try:
                report = self.indexer.run_once(self.batch, background=True)
            except Exception:
                log.exception("indexing pass failed")
                report = IndexReport(0, 1, 1)
            if report.failed:
                wait, backoff = backoff, min(backoff * 2, 60.0)
            elif report.remaining:
                backoff = 1.0
                continue  # more is waiting: go again at once
            else:
                if report.vectorized:
                    self.on_drained()
                wait, backoff = self.idle_seconds, 1.0
            self._wake.wait(wait)
            self._wake.clear()
