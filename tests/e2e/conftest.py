"""A real HTTP server on a free port, with its own data directory: the brain served in this process by default (a
real SQLite file, uvicorn on a real socket, the same app and background workers `brain serve` runs), or a real
`brain serve` process where the process itself is under test (a kill, its output, the command line)."""

import itertools
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx
import pytest
import uvicorn

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.bootstrap import Brain, build, resolve_token
from second_brain.embedding import load_embedder
from second_brain.entrypoints.api.app import create_app
from second_brain.ports.embedder import Embedder
from second_brain.settings import Settings

BRAIN = [sys.executable, "-m", "second_brain.entrypoints.cli"]
TOKEN = "e2e-owner-token"
STARTED: list["Server"] = []  # every server started, so none outlives a failing test
# BRAIN_MAINTENANCE_AT=off: a run starting at 03:00 mid-suite would change what tests see.
TEST_ENV = {"BRAIN_MAINTENANCE_AT": "off"}
_embedders: dict[tuple[str, str], Embedder | None] = {}


_ports = itertools.count()
PORTS_PER_WORKER = 1500


def free_port() -> int:
    """A free port no other test process hands out. The kernel's own pick (port 0) is free now but may be handed
    to another pytest-xdist worker before our server binds it, and a `brain serve` that lost the race looks started
    when the other worker's server answers: so each worker takes ports from its own block, below the range the
    kernel assigns from (32768 up), in turn."""
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    base = 20_000 + worker * PORTS_PER_WORKER
    assert base + PORTS_PER_WORKER <= 32_768, "too many pytest-xdist workers for the test servers' port blocks"
    for _ in range(PORTS_PER_WORKER):
        port = base + next(_ports) % PORTS_PER_WORKER
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port in {base}-{base + PORTS_PER_WORKER - 1}")


def shared_embedder(settings: Settings) -> Embedder | None:
    """The embedder a brain of these settings loads, loaded once per test process: the model is read-only and
    thread-safe, and loading it (1.7 s for e5) for each server was a third of the suite's time."""
    key = (settings.embedder, str(settings.embedder_jar))
    if key not in _embedders:
        _embedders[key] = load_embedder(settings, threads=1)
    return _embedders[key]


@dataclass
class Server:
    data_dir: Path
    token: str | None = TOKEN
    port: int = field(default_factory=free_port)
    env: dict[str, str] = field(default_factory=dict)
    in_process: bool = True  # False: a `brain serve` process (its signals, output or command line are under test)
    # In process: the packaged model (as `brain serve` loads it) where meaning is under test (`@pytest.mark.model`),
    # else the fake embedder (hashed words: a repeat is still a repeat, a paraphrase is not).
    model: bool = False
    process: subprocess.Popen | None = None
    brain: Brain | None = None  # in process: the brain being served
    # A process's output goes to a file: a pipe nobody reads fills up and blocks the server mid-request.
    output: IO[str] = field(default_factory=lambda: tempfile.TemporaryFile("w+"))  # noqa: SIM115 - closed with the process
    _uvicorn: uvicorn.Server | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        if self.in_process:
            return self._thread is not None and self._thread.is_alive()
        return self.process is not None and self.process.poll() is None

    def environment(self) -> dict[str, str]:
        """The BRAIN_* settings this server runs with, over the test process's environment without its own."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")} | TEST_ENV
        if self.token:
            env["BRAIN_AUTH_TOKEN"] = self.token
        return env | self.env

    def start(self) -> "Server":
        STARTED.append(self)
        return self._start_here() if self.in_process else self._start_process()

    def _start_here(self) -> "Server":
        """What `brain serve` does, in this process: the same build, token, background workers and app, under
        uvicorn on a thread (signals stay the test runner's)."""
        settings = self.settings()
        embedder = shared_embedder(settings) if self.model or settings.embedder != "local" else FakeEmbedder()
        self.brain = build(settings, embedder=embedder)
        token, _ = resolve_token(settings)
        self.brain.start(schedule=True)
        config = uvicorn.Config(create_app(self.brain, token), host="127.0.0.1", port=self.port,
                                log_level="warning", log_config=None, lifespan="on")
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._uvicorn.run, name=f"brain-{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._uvicorn.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self._close_brain()
                raise RuntimeError(f"the in-process server on port {self.port} did not start")
            time.sleep(0.005)
        return self

    def settings(self) -> Settings:
        """Settings as `brain serve` reads them from this server's environment: its BRAIN_* variables, and no
        other (the test process's environment is not read, nor changed under other threads)."""
        values = {key.removeprefix("BRAIN_").lower(): value for key, value in self.environment().items()
                  if key.startswith("BRAIN_")}
        return Settings(_env_prefix="SECOND_BRAIN_TESTS_READ_NO_ENVIRONMENT_",
                        **{**values, "data_dir": self.data_dir, "host": "127.0.0.1", "port": self.port})

    def _start_process(self) -> "Server":
        self.process = subprocess.Popen(
            [*BRAIN, "serve", "--port", str(self.port), "--data-dir", str(self.data_dir)],
            env=self.environment(), stdout=self.output, stderr=subprocess.STDOUT, text=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.read_output()}")
        raise TimeoutError("server did not start")

    def stop(self, sig: int = signal.SIGTERM) -> str:
        """Stop serving (a process: with `sig`); the process's output, or "" in process."""
        if self.in_process:
            if self._uvicorn is not None:
                self._uvicorn.should_exit = True
            if self._thread is not None:
                self._thread.join(timeout=30)
            self._close_brain()
            return ""
        assert self.process is not None
        self.process.send_signal(sig)
        self.process.wait(timeout=30)
        return self.read_output()

    def _close_brain(self) -> None:
        if self.brain is not None:
            self.brain.close()
            self.brain = None

    def read_output(self) -> str:
        self.output.seek(0)
        return self.output.read()

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    return subprocess.run([*BRAIN, *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(autouse=True, scope="session")
def reap_servers() -> Iterator[None]:
    yield
    while STARTED:
        server = STARTED.pop()
        if server.process is not None and server.process.poll() is None:
            server.process.kill()
            server.process.wait(timeout=30)
        elif server.running:
            server.stop()


@pytest.fixture
def server(request, tmp_path) -> Iterator[Server]:
    server = Server(tmp_path / "brain", model=uses_model(request), env=server_env(request)).start()
    yield server
    if server.running:
        server.stop()


def uses_model(request: pytest.FixtureRequest) -> bool:
    """Whether the test is about meaning (`@pytest.mark.model`): its servers embed with the packaged model."""
    return request.node.get_closest_marker("model") is not None


def server_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The settings a module's or test's `@pytest.mark.server_env(NAME="value")` gives its served brain."""
    marker = request.node.get_closest_marker("server_env")
    return dict(marker.kwargs) if marker else {}


@pytest.fixture
def api(server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


# The dashboard's browser fixtures, defined once for every e2e module.
from .browser import CHROMIUM, browser, dashboard  # noqa: E402, F401


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """The process's chromium is closed, after this test's own fixtures, before a test that does not use it (see
    browser.Chromium)."""
    yield
    if nextitem is None or "browser" not in nextitem.fixturenames:
        CHROMIUM.close()
