"""What every command handler does around the pure decide: who asked, envelopes, retrying a lost race."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..domain.errors import ConcurrencyConflict
from ..domain.events import Envelope
from ..domain.identity import Identity

T = TypeVar("T")
MAX_ATTEMPTS = 5


@dataclass(frozen=True)
class Context:
    """Who asked, and the request id every resulting event carries."""

    identity: Identity
    request_id: str


def envelopes(ctx: Context, stream_id: str, version: int, events: Sequence[object], workspace: str,
              at: int) -> list[Envelope]:
    """Events decided against a stream at `version`, ready to append after it."""
    return [
        Envelope(stream_id=stream_id, version=version + i + 1, event=event, actor=ctx.identity.actor_id,
                 workspace=workspace, request_id=ctx.request_id, at=at,
                 schema_version=type(event).SCHEMA)  # type: ignore[attr-defined]
        for i, event in enumerate(events)
    ]


def retrying(attempt: Callable[[], T], attempts: int = MAX_ATTEMPTS) -> T:
    """Run load-decide-append again, against fresh state, when another writer got there first."""
    for number in range(attempts):
        try:
            return attempt()
        except ConcurrencyConflict:
            if number == attempts - 1:
                raise
    raise AssertionError("unreachable")
