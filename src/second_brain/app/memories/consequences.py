"""What follows a capture, in one table: event type → the handlers told of each memory whose stream got one.

A capture's own append is atomic and answers at once; what follows it runs after, in the request or handed off:
the vectors stored when the capture computed them all, the model's classification. Which event calls which handler
is read here, in one place (`bootstrap.assemble` fills the table), not spread over callbacks. The read model is no
consequence: it is written in the append's own transaction (SQLite) or by the stream's projector (AWS), so that a
capture can be read back at once.
"""

import logging
from collections.abc import Callable, Sequence

from ...domain.events import Envelope, memory_of
from ..handling import Context

log = logging.getLogger("second_brain.memories")

Handler = Callable[[Context, str], None]  # told of one memory: the caller, the memory's id


class Consequences:
    def __init__(self) -> None:
        self._table: dict[type, list[Handler]] = {}

    def on(self, event_type: type, *handlers: Handler) -> None:
        """After an append that holds `event_type` on a memory's stream, tell each handler of that memory."""
        self._table.setdefault(event_type, []).extend(handlers)

    def after(self, ctx: Context, stored: Sequence[Envelope]) -> None:
        """Each handler the stored events call, once per memory, in the order of the log. A handler's failure is
        logged and stops no other: the append has happened, and what a handler would have done is done later by
        the pass that finds it undone (pending vectors, the nightly classification)."""
        told: set[tuple[Handler, str]] = set()
        for envelope in stored:
            memory_id = memory_of(envelope.stream_id)
            if memory_id is None:
                continue
            for handler in self._table.get(type(envelope.event), ()):
                if (handler, memory_id) in told:
                    continue
                told.add((handler, memory_id))
                try:
                    handler(ctx, memory_id)
                except Exception:
                    log.exception("what follows an append to memory %s failed", memory_id)
