"""A memory's reminder as a person moves it: snooze it, clear it, close the open loop it is."""

from ...domain import commands as c
from ...domain.errors import InvalidInput
from ...domain.memory import Memory
from ..handling import Context
from .streams import MemoryStreams, may_change


class Reminders:
    def __init__(self, streams: MemoryStreams) -> None:
        self.streams = streams

    def snooze(self, ctx: Context, memory_id: str, until: int) -> Memory:
        return self.streams.execute(ctx, memory_id, c.SetTimeAnchor(until, "", self.streams.clock.now_ms()))

    def clear_anchor(self, ctx: Context, memory_id: str) -> Memory:
        return self.streams.execute(ctx, memory_id, c.ClearTimeAnchor())

    def resolve_loop(self, ctx: Context, memory_id: str, action: str) -> Memory:
        """Close an open loop: `done` marks it done, `not-task` takes away its task classification."""
        if action not in ("done", "not-task"):
            raise InvalidInput("action must be done or not-task")
        state, _ = self.streams.load(ctx, memory_id.strip())
        may_change(ctx, state)
        if "task" not in state.tags:
            raise InvalidInput(f"Entry {state.id} is not an open loop")
        tags = [t for t in state.tags if t != "task"] + (["done"] if action == "done" else [])
        return self.streams.execute(ctx, memory_id, c.ChangeTags(tuple(dict.fromkeys(tags))))
