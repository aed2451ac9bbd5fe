"""Shared fixtures: a clock that stands still, identities, and envelope builders; the tier markers."""

import fcntl
import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from second_brain.app.memories.service import Context
from second_brain.domain.events import Envelope
from second_brain.domain.identity import owner
from tests.support import moto_speed, tls

moto_speed.install()  # moto's DynamoDB queries without sorting the whole table each time: the same answers
tls.install()  # httpx's clients share one default TLS context instead of loading the CA certificates each

if TYPE_CHECKING:
    from tests.support.greenmail import GreenMail


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
SHARED = "SECOND_BRAIN_TESTS_SHARED"  # the run's shared directory (see pytest_configure)


_starting: list[threading.Thread] = []  # this process's start of the OpenSearch node, if it began one


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (its hook is registered after this file)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what `make test-fast` leaves out: `opensearch` on every test that can reach the OpenSearch node (its
    fixtures include `opensearch_url`, or it is parametrized with the backend "opensearch" or "aws" that
    `make_brain` takes), `slow` on every end-to-end test (each starts real servers).

    And the groups `make test` hands to its workers whole (pytest-xdist, `--dist loadgroup`): every test in a
    browser is one, so one chromium serves them all; a module with module-scoped fixtures (a served brain and its
    corpus) is one, so they are made once; every other test goes to whichever worker is free."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        backends = [v for v in callspec.params.values() if isinstance(v, str)] if callspec else []
        if "opensearch_url" in item.fixturenames or {"opensearch", "aws"}.intersection(backends):
            item.add_marker(pytest.mark.opensearch)
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.slow)
        if "browser" in item.fixturenames:
            item.add_marker(pytest.mark.xdist_group("browser"))
        elif any(d.scope != "function" and d.scope != "session"
                 for defs in item._fixtureinfo.name2fixturedefs.values() for d in defs):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    # The slow kinds first, so no worker is left with a long test at the end while the others idle: real servers,
    # then the tests on the node (started meanwhile, below), then the rest; pytest keeps the order within a kind.
    items.sort(key=lambda item: 0 if item.get_closest_marker("slow") else 1 if item.get_closest_marker("opensearch")
               else 2)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once the tests are selected (`-m "not opensearch"` deselects after the hook above): start the OpenSearch
    node on a thread if one of them needs it, so it turns green while the first tests run. And fail the run, rather
    than lose the groups silently, when pytest-xdist could not apply them."""
    if (not os.environ.get("OPENSEARCH_URL") and not session.config.option.collectonly
            and any(item.get_closest_marker("opensearch") for item in session.items)):
        _starting.append(threading.Thread(target=_start_node, name="opensearch-node", daemon=True))
        _starting[-1].start()
    if getattr(session.config.option, "loadgroup", False) and any(
            item.get_closest_marker("xdist_group") and "@" not in item.nodeid for item in session.items):
        raise pytest.UsageError("pytest-xdist did not apply the xdist_group marks (see pyproject's pin of pytest)")


def pytest_configure(config: pytest.Config) -> None:
    """In the process that runs the session (pytest-xdist's controller, or the only process), a directory every
    worker shares: where the one OpenSearch node of the run is started and found."""
    if not hasattr(config, "workerinput") and SHARED not in os.environ:
        os.environ[SHARED] = tempfile.mkdtemp(prefix="second-brain-tests-")


def pytest_unconfigure(config: pytest.Config) -> None:
    """The session's process stops the node a worker started, once every worker is done. A process that began
    starting it first waits until it has (a run shorter than the node's start would otherwise leave it running,
    unknown to the session)."""
    for thread in _starting:
        thread.join()
    if hasattr(config, "workerinput") or SHARED not in os.environ:
        return
    shared = Path(os.environ.pop(SHARED))
    pid = shared / "opensearch.pid"
    if pid.exists():
        from tests.support.opensearch_node import stop_pid

        stop_pid(int(pid.read_text()))
    shutil.rmtree(shared, ignore_errors=True)


@pytest.fixture(scope="session")
def greenmail(tmp_path_factory: pytest.TempPathFactory) -> Iterator["GreenMail"]:
    """A real IMAP server (GreenMail), one per test process, started by the first test that asks; each test keeps
    to a folder of its own (`mailbox`)."""
    from tests.support.greenmail import GreenMail

    server = GreenMail(tmp_path_factory.mktemp("greenmail")).start()
    yield server
    server.stop()


@pytest.fixture
def mailbox(request: pytest.FixtureRequest) -> str:
    """A mail folder of this test's own on the process's GreenMail."""
    return f"brain-{abs(hash(request.node.nodeid)):x}"


@pytest.fixture(scope="session")
def opensearch_url() -> Iterator[str]:
    """A reachable OpenSearch: $OPENSEARCH_URL, or the run's in-JVM test node, shared by every worker (each brain on
    it has indexes of its own prefix) and stopped at the end of the run. A worker that collected tests needing it
    has begun starting it already (`_start_node`, on a thread); this waits for that, or starts it."""
    if os.environ.get("OPENSEARCH_URL"):
        yield os.environ["OPENSEARCH_URL"].rstrip("/")
        return
    yield _start_node(wait=True)


def _start_node(wait: bool = False) -> str:
    """The node's address, starting it if nobody has: under a lock on a file of the run's shared directory, which
    the first caller of every worker holds while the node builds (Maven, the first time) and turns green. Without
    `wait`, give way to a worker that holds the lock (and answer "")."""
    from tests.support.opensearch_node import OpenSearchNode

    shared = Path(os.environ[SHARED])
    address = shared / "opensearch.url"
    with open(shared / "opensearch.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return ""
        if not address.exists():
            (shared / "opensearch").mkdir(exist_ok=True)
            # the pid is written as soon as the process exists, so the session stops it whatever happens next
            node = OpenSearchNode(shared / "opensearch").start(pid_file=shared / "opensearch.pid")
            print(f"\nOpenSearch test node green after {node.startup_seconds:.1f} s at {node.url}")
            address.write_text(node.url)
        return address.read_text()
