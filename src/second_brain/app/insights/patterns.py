"""Answering a proposed pattern: confirmed, it becomes an ordinary canonical memory that recall returns;
dismissed, it is deprecated (and, being on record, never proposed again)."""

from collections.abc import Callable
from functools import reduce

from ...domain import text
from ...domain.commands import ChangeTags, SetStatus
from ...domain.errors import Forbidden, InvalidInput
from ...domain.events import Envelope, memory_stream
from ...domain.memory import Memory, decide, evolve
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ..handling import Context, envelopes, retrying
from ..memories.service import MemoryService

ACTIONS = ("confirm", "dismiss")
MAX_IDS = 100
# The team's feed record of a decision on a company memory, appended with it: (ctx, memory id, action, workspace).
Note = Callable[[Context, str, str, str], list[Envelope]]


def awaiting(memory: Memory) -> bool:
    """A pattern the nightly job proposed that nobody has answered yet."""
    return not memory.deprecated and any(tag in text.AWAITING_CONFIRMATION for tag in memory.tags)


def confirmed_tags(tags: tuple[str, ...]) -> tuple[str, ...]:
    kept = [t for t in tags if t not in text.AWAITING_CONFIRMATION]
    return tuple(text.with_prefixed(text.with_prefixed(kept, "kind:", "semantic"), "status:", "canonical"))


class PatternService:
    def __init__(self, store: EventStore, memories: MemoryService, clock: Clock, note: Note | None = None) -> None:
        self.store = store
        self.memories = memories
        self.clock = clock
        self.note = note

    def resolve(self, ctx: Context, memory_id: str, action: str) -> Memory:
        """Confirm or dismiss one pattern; only someone who may change the memory may answer it."""
        if action not in ACTIONS:
            raise InvalidInput("action must be confirm or dismiss")
        memory_id = memory_id.strip()

        def attempt() -> Memory:
            state, _ = self.memories.load(ctx, memory_id)
            if not ctx.identity.can_edit(state.workspace, state.actor):
                raise Forbidden("Only the memory's author or an admin may change this memory")
            if not awaiting(state):
                raise InvalidInput(f"Entry {memory_id} is not a pattern awaiting confirmation")
            command = ChangeTags(confirmed_tags(state.tags)) if action == "confirm" else SetStatus("deprecated")
            events = decide(command, state)
            now = self.clock.now_ms()
            batch = envelopes(ctx, memory_stream(memory_id), state.version, events, state.workspace, now)
            if self.note and state.workspace in ctx.identity.company_workspaces:
                batch += self.note(ctx, memory_id, action, state.workspace)
            self.store.append(batch)
            return reduce(evolve, events, state)

        return retrying(attempt)
