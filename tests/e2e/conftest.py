"""A real `brain serve` process on a free port, with its own data directory."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx
import pytest

BRAIN = [sys.executable, "-m", "second_brain.entrypoints.cli"]
TOKEN = "e2e-owner-token"
STARTED: list[subprocess.Popen] = []  # every server process, so none outlives a failing test


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    data_dir: Path
    token: str | None = TOKEN
    port: int = field(default_factory=free_port)
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None
    # The server's output goes to a file: a pipe nobody reads fills up and blocks the server mid-request.
    output: IO[str] = field(default_factory=lambda: tempfile.TemporaryFile("w+"))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "Server":
        env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
        env["BRAIN_MAINTENANCE_AT"] = "off"  # a run starting at 03:00 mid-suite would change what tests see
        if self.token:
            env["BRAIN_AUTH_TOKEN"] = self.token
        env.update(self.env)
        self.process = subprocess.Popen(
            [*BRAIN, "serve", "--port", str(self.port), "--data-dir", str(self.data_dir)],
            env=env, stdout=self.output, stderr=subprocess.STDOUT, text=True,
        )
        STARTED.append(self.process)
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
        assert self.process is not None
        self.process.send_signal(sig)
        self.process.wait(timeout=30)
        return self.read_output()

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
        process = STARTED.pop()
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


@pytest.fixture
def server(tmp_path) -> Iterator[Server]:
    server = Server(tmp_path / "brain").start()
    yield server
    if server.process and server.process.poll() is None:
        server.stop()


@pytest.fixture
def api(server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


# The dashboard's browser fixtures, defined once for every e2e module (a session fixture imported into each test
# module would start one Playwright per module in the same process).
from .browser import browser, dashboard  # noqa: E402, F401
