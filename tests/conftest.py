"""Shared fixtures: a clock that stands still, identities, and envelope builders."""

import itertools

import pytest

from second_brain.app.memories import Context
from second_brain.domain.events import Envelope
from second_brain.domain.identity import owner


class FixedClock:
    """A clock that only moves when told to."""

    def __init__(self, start: int = 1_767_225_600_000) -> None:  # 2026-01-01T00:00:00Z
        self.now = start

    def now_ms(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def ctx() -> Context:
    return Context(owner("Ada"), request_id="req-test")


_request_ids = itertools.count()


def envelope(stream_id: str, version: int, event: object, at: int = 1_000, actor: str = "owner") -> Envelope:
    return Envelope(
        stream_id=stream_id, version=version, event=event, actor=actor, workspace="personal-owner",
        request_id=f"req-{next(_request_ids)}", at=at,
    )
