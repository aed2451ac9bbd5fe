"""What every command handler does around the pure decide: who asked, envelopes, retrying a lost race."""

import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..domain.errors import ConcurrencyConflict, Forbidden
from ..domain.events import Envelope
from ..domain.identity import Identity

T = TypeVar("T")
MAX_ATTEMPTS = 12
BACKOFF_BASE_S = 0.01  # doubles per lost race, up to the cap; a random part of it is waited (full jitter)
BACKOFF_CAP_S = 0.25
# What a client is told: the store's own text (stream ids, versions) is for the log only.
CONFLICT_MESSAGE = "This changed while the request was being applied; try again"
log = logging.getLogger("second_brain.handling")


@dataclass(frozen=True)
class Context:
    """Who asked, and the request id every resulting event carries."""

    identity: Identity
    request_id: str


def system(workspace: str, request_id: str) -> Context:
    """The brain itself as the actor ("Second Brain" in timelines): inferred links, nightly jobs, the cascade of a
    forget; acting in `workspace`."""
    return Context(Identity("system", "Second Brain", "admin", workspace), request_id)


def require_admin(ctx: Context) -> None:
    if ctx.identity.role != "admin":
        raise Forbidden("Only an admin may do this")


def envelopes(ctx: Context, stream_id: str, version: int, events: Sequence[object], workspace: str,
              at: int) -> list[Envelope]:
    """Events decided against a stream at `version`, ready to append after it."""
    return [
        Envelope(stream_id=stream_id, version=version + i + 1, event=event, actor=ctx.identity.actor_id,
                 workspace=workspace, request_id=ctx.request_id, at=at)
        for i, event in enumerate(events)
    ]


def retrying(attempt: Callable[[], T], attempts: int = MAX_ATTEMPTS) -> T:
    """Run load-decide-append again, against fresh state, when another writer got there first.

    Writers racing on one stream would lose again in lockstep: each waits a random part of a growing pause.
    """
    for number in range(attempts):
        try:
            return attempt()
        except ConcurrencyConflict as exc:
            if number == attempts - 1:
                log.warning("gave up after %d lost races: %s", attempts, exc.message)
                raise ConcurrencyConflict(CONFLICT_MESSAGE) from exc
            time.sleep(random.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**number)))
    raise AssertionError("unreachable")
