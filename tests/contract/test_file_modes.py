"""The data directory is the owner's alone: 0700, and the SQLite file with its -wal/-shm 0600, like the token."""

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.bootstrap import build
from second_brain.settings import Settings
from tests.e2e.conftest import Server


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    previous = os.umask(0o022)  # the usual default, under which files come out world-readable
    yield
    os.umask(previous)


def modes(data_dir: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in [data_dir, *data_dir.iterdir()]}


def test_a_new_brain_is_readable_by_its_owner_only(tmp_path, clock):
    brain = build(Settings(data_dir=tmp_path / "brain"), clock=clock, embedder=FakeEmbedder())
    try:
        found = modes(tmp_path / "brain")
        assert {"brain", "brain.sqlite3", "brain.sqlite3-wal", "brain.sqlite3-shm"} <= set(found)
        assert found == {"brain": 0o700} | {name: 0o600 for name in found if name != "brain"}
    finally:
        brain.close()


def test_a_brain_left_open_by_an_older_build_is_tightened_on_start(tmp_path, clock):
    data = tmp_path / "brain"
    data.mkdir(mode=0o755)
    with sqlite3.connect(data / "brain.sqlite3") as conn:
        conn.execute("CREATE TABLE leftover (x)")
    for name in ("brain.sqlite3", "brain.sqlite3-wal", "brain.sqlite3-shm"):
        (data / name).touch()
        (data / name).chmod(0o644)
    build(Settings(data_dir=data), clock=clock, embedder=FakeEmbedder()).close()
    found = modes(data)
    assert found == {"brain": 0o700} | {name: 0o600 for name in found if name != "brain"}


@pytest.mark.slow
def test_a_served_brain_keeps_its_files_private(tmp_path):
    server = Server(tmp_path / "brain").start()
    try:
        with server.client() as api:
            assert api.post("/capture", json={"content": "The vault code is 4471"}).status_code == 200
        found = modes(tmp_path / "brain")
        assert "brain.sqlite3-wal" in found
        assert found == {"brain": 0o700} | {name: 0o600 for name in found if name != "brain"}
    finally:
        server.stop()
