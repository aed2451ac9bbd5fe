"""Shared fixtures: a clock that stands still, identities, and envelope builders; the tier markers."""

import itertools
import os
from pathlib import Path

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


E2E = Path(__file__).parent / "e2e"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what `make test-fast` leaves out: `opensearch` on every test that can reach the OpenSearch node (its
    fixtures include `opensearch_url`, or it is parametrized with the backend "opensearch" or "aws" that
    `make_brain` takes), `slow` on every end-to-end test (each starts real server processes)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        backends = [v for v in callspec.params.values() if isinstance(v, str)] if callspec else []
        if "opensearch_url" in item.fixturenames or {"opensearch", "aws"}.intersection(backends):
            item.add_marker(pytest.mark.opensearch)
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def opensearch_url(tmp_path_factory):
    """A reachable OpenSearch: $OPENSEARCH_URL, or the in-JVM test node, started once for the session."""
    if os.environ.get("OPENSEARCH_URL"):
        yield os.environ["OPENSEARCH_URL"].rstrip("/")
        return
    from tests.support.opensearch_node import OpenSearchNode

    node = OpenSearchNode(tmp_path_factory.mktemp("opensearch")).start()
    print(f"\nOpenSearch test node green after {node.startup_seconds:.1f} s at {node.url}")
    try:
        yield node.url
    finally:
        node.stop()
