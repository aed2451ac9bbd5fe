"""Counting use: a recall of a memory and an opening of it, each at most once a day (the signals ranking trusts),
in one append per request; with a tally (AWS), a recall is noted there and folded into the log later. A running
brain writes its recall counts off the requests' path (`CountingLane`): gathered, then one append for many."""

import logging
import threading
import uuid
from collections.abc import Iterable
from datetime import datetime

from ...domain import commands as c
from ...domain.errors import ConcurrencyConflict, NotFound, StoreUnavailable
from ...domain.events import Envelope, memory_stream
from ...domain.identity import Identity
from ...domain.memory import decide
from ...ports.recall_tally import RecallTally, Tallied
from ..handling import Context, envelopes
from .indexing import Foreground
from .streams import MemoryStreams

log = logging.getLogger("second_brain.memories")


class Counting:
    def __init__(self, streams: MemoryStreams, recall_tally: RecallTally | None = None) -> None:
        self.streams = streams
        self.recall_tally = recall_tally  # where recalls are noted, to be folded into the log later (AWS)
        self._counted_day = ""
        self._counted: set[tuple[type, str]] = set()  # (command, memory) pairs already counted today

    def record_recalls(self, ctx: Context, memory_ids: list[str]) -> int:
        """Count a recall of each memory, once per day; best effort, since a lost race only loses a count. With a
        tally, the recall is noted there (one small write, nothing read) and `fold_recalls` counts it later."""
        if self.recall_tally is None:
            return self._count_daily([(ctx, memory_id) for memory_id in memory_ids], c.RecordRecall)
        now = self.streams.clock.now_ms()
        day = self._day(now)
        fresh = [i for i in dict.fromkeys(memory_ids) if (c.RecordRecall, i) not in self._counted]
        if not fresh:
            return 0
        try:
            self.recall_tally.note(Tallied(uuid.uuid4().hex, ctx.identity.actor_id, ctx.request_id, tuple(fresh),
                                           day, now))
        except StoreUnavailable:  # the recall is answered all the same; the next one notes these again
            log.warning("noting a recall of %d memories failed", len(fresh), exc_info=True)
            return 0
        self._counted.update((c.RecordRecall, i) for i in fresh)
        return len(fresh)

    def fold_recalls(self, tallied: Tallied) -> int:
        """A noted recall counted in the log: each memory still there that was not yet counted on the recall's day
        gets its `MemoryRecalled` (that day in its data), under the one who recalled it. The event's time is the
        fold's, when it entered the log: the log's times follow its order (`EventStore.last_by`)."""
        ctx = Context(Identity(tallied.actor, tallied.actor, "member", ""), tallied.request_id)
        now = self.streams.clock.now_ms()
        counts: list[list[Envelope]] = []
        for memory_id in tallied.memory_ids:
            state, _ = self.streams.state_of(memory_id)
            if state.exists and (events := decide(c.RecordRecall(tallied.day), state)):
                counts.append(envelopes(ctx, memory_stream(memory_id), state.version, events, state.workspace, now))
        return self._append_counts(counts)

    def record_open(self, ctx: Context, memory_id: str) -> int:
        """Count that someone opened the memory itself, once per day: the use ranking trusts."""
        return self._count_daily([(ctx, memory_id)], c.RecordOpen)

    def record_recalled(self, recalled: Iterable[tuple[Context, list[str]]]) -> int:
        """The recalls of several answers counted together: every count in one append (see `CountingLane`)."""
        if self.recall_tally is not None:
            return sum(self.record_recalls(ctx, memory_ids) for ctx, memory_ids in recalled)
        return self._count_daily([(ctx, memory_id) for ctx, memory_ids in recalled for memory_id in memory_ids],
                                 c.RecordRecall)

    def _count_daily(self, asked: list[tuple[Context, str]],
                     command: type[c.RecordRecall] | type[c.RecordOpen]) -> int:
        """Every count in one append (on DynamoDB one transaction, not one per memory: the count is written
        inside the request under Mangum), each under the one who asked; a race lost on one memory loses that
        memory's count only."""
        now = self.streams.clock.now_ms()
        day = self._day(now)
        counts: list[list[Envelope]] = []
        first: dict[str, Context] = {}  # each memory once, under the first who asked
        for ctx, memory_id in asked:
            first.setdefault(memory_id, ctx)
        for memory_id, ctx in first.items():
            if (command, memory_id) in self._counted:  # already counted today by this process: skip the read
                continue
            self._counted.add((command, memory_id))
            try:
                state, _ = self.streams.load(ctx, memory_id)
            except NotFound:
                continue
            if events := decide(command(day), state):
                counts.append(envelopes(ctx, memory_stream(state.id), state.version, events,
                                        state.workspace or ctx.identity.personal_workspace, now))
        return self._append_counts(counts)

    def _day(self, now: int) -> str:
        """Today in the brain's time zone; the counts this process made are forgotten when it changes."""
        day = datetime.fromtimestamp(now / 1000, self.streams.timezone).date().isoformat()
        if self._counted_day != day:
            self._counted_day, self._counted = day, set()
        return day

    def _append_counts(self, counts: list[list[Envelope]]) -> int:
        """Every count in one append; a race lost on one memory loses that memory's count only."""
        if not counts:
            return 0
        try:
            self.streams.store.append([e for count in counts for e in count])
            return sum(map(len, counts))
        except ConcurrencyConflict:  # one of them moved on meanwhile: the others still count
            return sum(len(count) for count in counts if self._append_or_lose(count))

    def _append_or_lose(self, batch: list[Envelope]) -> bool:
        try:
            self.streams.store.append(batch)
        except ConcurrencyConflict:
            return False
        return True


class CountingLane:
    """A running brain's recall counts, written off the requests' path. An answer's count was written right after
    the answer, by a thread of its own: a read of every memory returned and an append with its projections, whose
    time (about 2 ms on a 100k brain) the next request waited out, and under many clients one append each for the
    database's one writer. Here the answers' recalls are gathered for `gather` seconds, then written in one append
    as soon as no request is running (after at most `patience` seconds of requests, so that they are never put off
    for long). `close` writes what is left: a stopped brain has counted every recall it answered."""

    def __init__(self, counting: Counting, foreground: Foreground, gather: float = 0.1,
                 patience: float = 0.5) -> None:
        self.counting = counting
        self.foreground = foreground
        self.gather = gather
        self.patience = patience
        self._pending: list[tuple[Context, list[str]]] = []
        self._lock = threading.Lock()
        self._waiting = threading.Event()  # something is pending
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def add(self, ctx: Context, memory_ids: list[str]) -> None:
        """Count a recall of each memory soon (at once when the lane is not running)."""
        if self._thread is None:
            self.counting.record_recalls(ctx, memory_ids)
            return
        with self._lock:
            self._pending.append((ctx, list(memory_ids)))
        self._waiting.set()

    def start(self) -> None:
        if self._thread is None:
            self._stopping.clear()
            self._thread = threading.Thread(target=self._run, name="recall-counts", daemon=True)
            self._thread.start()

    def close(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stopping.set()
            self._waiting.set()
            thread.join()
        self.flush()

    def flush(self) -> int:
        """Write every recall gathered so far, in one append."""
        with self._lock:
            pending, self._pending = self._pending, []
        if not pending:
            return 0
        try:
            return self.counting.record_recalled(pending)
        except Exception:  # a count is best effort: the lane goes on, and the answers were given
            log.warning("writing the counts of %d recalls failed", len(pending), exc_info=True)
            return 0

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._waiting.wait()
            self._waiting.clear()
            if self._stopping.wait(self.gather):
                return
            self.foreground.wait_idle(self.patience)
            self.flush()
