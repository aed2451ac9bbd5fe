"""The command side: load a memory from its stream, decide, append; retry on a concurrent writer."""

import uuid
from collections.abc import Callable
from datetime import datetime
from functools import reduce
from zoneinfo import ZoneInfo

from ..domain import commands as c
from ..domain.errors import ConcurrencyConflict, Forbidden, InvalidInput, NotFound
from ..domain.events import Envelope, TimeAnchorSet, memory_stream
from ..domain.memory import Memory, decide, evolve, validate
from ..ports.clock import Clock
from ..ports.event_store import EventStore
from .handling import Context, envelopes, retrying

__all__ = ["Context", "MemoryService"]

class MemoryService:
    def __init__(
        self,
        store: EventStore,
        clock: Clock,
        timezone: ZoneInfo,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self.store = store
        self.clock = clock
        self.timezone = timezone
        self.new_id = new_id
        self._recalled_day = ""
        self._recalled: set[str] = set()

    def capture(
        self, ctx: Context, content: str, tags: list[str], source: str, volatility: str | None = None,
        anchor: tuple[int, str] | None = None,
    ) -> Memory:
        """Store a new memory; an optional (when_at, when_kind) time anchor lands in the same append."""
        memory_id = self.new_id()
        command = c.Capture(content, tuple(tags), source, ctx.identity.personal_workspace, volatility)
        events = decide(command, Memory(memory_id))
        if anchor is not None:
            validate(c.SetTimeAnchor(anchor[0], anchor[1], 0))
            events.append(TimeAnchorSet(*anchor))
        return self._append(ctx, Memory(memory_id), events)

    def snooze(self, ctx: Context, memory_id: str, until: int) -> Memory:
        return self._execute(ctx, memory_id, c.SetTimeAnchor(until, "", self.clock.now_ms()))

    def clear_anchor(self, ctx: Context, memory_id: str) -> Memory:
        return self._execute(ctx, memory_id, c.ClearTimeAnchor())

    def resolve_loop(self, ctx: Context, memory_id: str, action: str) -> Memory:
        """Close an open loop: `done` marks it done, `not-task` takes away its task classification."""
        if action not in ("done", "not-task"):
            raise InvalidInput("action must be done or not-task")
        state, _ = self.load(ctx, memory_id.strip())
        if "task" not in state.tags:
            raise InvalidInput(f"Entry {state.id} is not an open loop")
        tags = [t for t in state.tags if t != "task"] + (["done"] if action == "done" else [])
        return self._execute(ctx, memory_id, c.ChangeTags(tuple(dict.fromkeys(tags))))

    def append(self, ctx: Context, memory_id: str, addition: str, volatility: str | None = None) -> Memory:
        dated = datetime.fromtimestamp(self.clock.now_ms() / 1000, self.timezone).strftime("%b %-d, %Y")
        return self._execute(ctx, memory_id, c.Append(addition, dated, volatility))

    def update(
        self, ctx: Context, memory_id: str, content: str, tags: list[str] | None, volatility: str | None = None
    ) -> Memory:
        return self._execute(ctx, memory_id, c.Update(content, None if tags is None else tuple(tags), volatility))

    def set_status(self, ctx: Context, memory_id: str, status: str) -> Memory:
        return self._execute(ctx, memory_id, c.SetStatus(status))

    def forget(self, ctx: Context, memory_id: str) -> Memory:
        return self._execute(ctx, memory_id, c.Forget())

    def record_recalls(self, ctx: Context, memory_ids: list[str]) -> int:
        """Count a recall of each memory, once per day; best effort, since a lost race only loses a count."""
        day = datetime.fromtimestamp(self.clock.now_ms() / 1000, self.timezone).date().isoformat()
        if self._recalled_day != day:
            self._recalled_day, self._recalled = day, set()
        recorded = 0
        for memory_id in memory_ids:
            if memory_id in self._recalled:  # already counted today by this process: skip the stream read
                continue
            self._recalled.add(memory_id)
            try:
                state, _ = self.load(ctx, memory_id)
                events = decide(c.RecordRecall(day), state)
                self._append(ctx, state, events)
                recorded += len(events)
            except (ConcurrencyConflict, NotFound):
                continue
        return recorded

    def load(self, ctx: Context, memory_id: str) -> tuple[Memory, list[Envelope]]:
        """A memory and its events, if it exists in a workspace the caller can read."""
        events = self.store.read_stream(memory_stream(memory_id))
        state = reduce(evolve, (e.event for e in events), Memory(memory_id))
        if not state.exists or state.workspace not in ctx.identity.readable:
            raise NotFound(f"No entry found with ID: {memory_id}")
        return state, events

    def _execute(self, ctx: Context, memory_id: str, command: c.Command) -> Memory:
        memory_id = memory_id.strip()
        validate(command)

        def attempt() -> Memory:
            state, events = self.load(ctx, memory_id)
            if not ctx.identity.can_edit(state.workspace, events[0].actor):
                raise Forbidden("You may not change this memory")
            return self._append(ctx, state, decide(command, state))

        return retrying(attempt)

    def _append(self, ctx: Context, state: Memory, events: list[object]) -> Memory:
        if not events:
            return state
        workspace = state.workspace or ctx.identity.personal_workspace
        self.store.append(envelopes(ctx, memory_stream(state.id), state.version, events, workspace,
                                    self.clock.now_ms()))
        return reduce(evolve, events, state)
