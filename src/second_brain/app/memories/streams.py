"""What every writer of a memory's stream shares: load a memory, decide on it, append; retry on a concurrent writer.

The memory service is split by capability (capture, mirrors, edits and reminders, sharing, erasure, counting:
the modules beside this one); each loads and appends through the `MemoryStreams` it is given, the one path by
which a memory's events reach the log (tests/service/test_one_writer.py keeps it so).
"""

import threading
from collections.abc import Callable
from functools import reduce
from zoneinfo import ZoneInfo

from ...domain import commands as c
from ...domain.capture import TRANSCRIPT_SOURCES, Verdict, content_stream, exact_repeat
from ...domain.errors import ConcurrencyConflict, Forbidden, NotFound
from ...domain.events import (
    ContentClaimed,
    Envelope,
    MemoryCaptured,
    MemoryReleased,
    MemoryRolledUp,
    memory_stream,
)
from ...domain.extraction import Anchor, find_anchor
from ...domain.memory import Memory, decide, evolve, fold, validate
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ..handling import Context, envelopes, retrying
from .triage import Triage

REWRITES = ("merge", "replace", "contradiction")  # verdicts that act on the matched memory's text
STRIPES = 64  # locks that writers of one memory in this process share (other processes race: `retrying`)


class MemoryStreams:
    def __init__(self, store: EventStore, clock: Clock, timezone: ZoneInfo | Callable[[], ZoneInfo],
                 triage: Triage | None = None, reads_when: bool | Callable[[], bool] = True,
                 content_key: bytes | Callable[[], bytes] | None = None, legacy_claims: bool = False) -> None:
        self.store = store
        self.clock = clock
        self.triage = triage  # judges a new text against what is stored (none: every note is stored as new)
        self._timezone = timezone  # a zone, or where to read the configured one per request
        self._reads_when = reads_when  # set the reminder a new note's words name (False: the nightly job alone)
        self._content_key = content_key  # the brain's secret (or where to fetch it): claim streams are keyed hashes
        self.legacy_claims = legacy_claims  # a brain older than its secret: claims named by a plain hash too
        self._stripes = [threading.Lock() for _ in range(STRIPES)]

    @property
    def timezone(self) -> ZoneInfo:
        return self._timezone() if callable(self._timezone) else self._timezone

    @property
    def content_key(self) -> bytes | None:
        if callable(self._content_key):  # fetched at the first capture or forget, not at start
            self._content_key = self._content_key()
        return self._content_key

    # --- reading ---

    def load(self, ctx: Context, memory_id: str) -> tuple[Memory, list[Envelope]]:
        """A memory and its events, if it exists in a workspace the caller can read."""
        state, events = self.state_of(memory_id)
        if not state.exists or state.workspace not in ctx.identity.readable:
            raise NotFound(f"No entry found with ID: {memory_id}")
        return state, events

    def state_of(self, memory_id: str) -> tuple[Memory, list[Envelope]]:
        """A memory and its events whoever may read it (the system's view), existing or not."""
        history = self.store.read_stream(memory_stream(memory_id))
        return fold(history, Memory(memory_id)), history

    # --- a text's claim, and what a new text is judged against ---

    def claims(self, workspace: str, content: str) -> tuple[str, list[Envelope], list[Envelope]]:
        """The claim stream of a text in a workspace, its claims, and those that say who holds the text: its own,
        or (none held there) those made before the brain had its secret, named by a plain hash, if it may have
        any."""
        stream = content_stream(workspace, content, self.content_key)
        claims = self.store.read_stream(stream)
        if held(claims) or not (self.legacy_claims and self.content_key):
            return stream, claims, claims
        return stream, claims, self.store.read_stream(content_stream(workspace, content))

    def repeat(self, ctx: Context, claims: list[Envelope], captured: MemoryCaptured) -> Verdict | None:
        """A block when the memory that last stored this exact text in this workspace still holds it there."""
        if not held(claims):  # none, or released by a forget
            return None
        claim = claims[-1].event
        assert isinstance(claim, ContentClaimed)
        try:
            state, _ = self.load(ctx, claim.memory_id)
        except NotFound:  # forgotten since: the text is free again
            return None
        if state.workspace != captured.workspace:  # shared or taken back since
            return None
        return exact_repeat(state, captured.content)

    def as_judged(self, ctx: Context, verdict: Verdict) -> Memory | None:
        """The matched memory's current state; None when there is none, or it has been forgotten meanwhile.

        A verdict that rewrites or retires it must have judged the text it has now (another capture may
        have merged into it: then decide again). A block or a flag only points at it, so a read model
        that lags the log cannot turn a repeat into a conflict.
        """
        if not verdict.match_id:
            return None
        try:
            state, _ = self.load(ctx, verdict.match_id)
        except NotFound:
            return None
        if verdict.action in REWRITES and state.content != verdict.match_content:
            raise ConcurrencyConflict(f"Entry {state.id} changed while the capture was being decided")
        return state

    def said_when(self, captured: MemoryCaptured, at: int | None = None) -> Anchor | None:
        """The time the note's own words name, read from `at` (now, unless said otherwise), when the extraction
        rules are sure of it (the nightly job reads the rest, with the model when one is configured). A
        transcript's words are not a request to the brain."""
        reads = self._reads_when() if callable(self._reads_when) else self._reads_when
        if not reads or captured.source in TRANSCRIPT_SOURCES:
            return None
        return find_anchor(captured.content, self.clock.now_ms() if at is None else at, self.timezone)

    # --- writing ---

    def execute(self, ctx: Context, memory_id: str, command: c.Command, *more: c.Command) -> Memory:
        """Decide each command on the state the ones before it left, and append all their events in one batch:
        they land together or not at all."""
        memory_id = memory_id.strip()
        for each in (command, *more):
            validate(each)

        def attempt() -> Memory:
            with self.writing(memory_id):
                state, _ = self.load(ctx, memory_id)
                may_change(ctx, state)
                events: list[object] = []
                for each in (command, *more):
                    events += decide(each, reduce(evolve, events, state))
                return self.append(ctx, state, events)

        return retrying(attempt)

    def writing(self, memory_id: str) -> threading.Lock:
        """Writers of one memory in this process take turns, instead of losing races to each other until
        the retries run out; the lock is released before `retrying` waits."""
        return self._stripes[hash(memory_id) % STRIPES]

    def append(self, ctx: Context, state: Memory, events: list[object]) -> Memory:
        """A memory's decided events, after the version it was decided on; the state they make."""
        self.write(ctx, state, events)
        return reduce(evolve, events, state)

    def write(self, ctx: Context, state: Memory, events: list[object]) -> list[Envelope]:
        """A memory's decided events, after the version it was decided on; what the store stored (none: nothing)."""
        if not events:
            return []
        workspace = state.workspace or ctx.identity.personal_workspace
        return self.store.append(envelopes(ctx, memory_stream(state.id), state.version, events, workspace,
                                           self.clock.now_ms()))


def held(claims: list[Envelope]) -> bool:
    """Whether a text's claim stream says some memory holds the text (its last event is a claim)."""
    return bool(claims) and isinstance(claims[-1].event, ContentClaimed)


def may_change(ctx: Context, memory: Memory) -> None:
    """A company memory changes only by its author's or an admin's hand; a personal one only by its owner's."""
    if not ctx.identity.can_edit(memory.workspace, memory.actor):
        raise Forbidden("Only the memory's author or an admin may change this memory")


def rolled_into(history: list[Envelope]) -> str | None:
    """The digest a memory is rolled into now, if any."""
    current = None
    for event in (e.event for e in history):
        if isinstance(event, MemoryRolledUp):
            current = event.digest_id
        elif isinstance(event, MemoryReleased):
            current = None
    return current
