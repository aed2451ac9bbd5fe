"""Brains written by earlier builds open in this one with nothing lost, and a brain of a newer format is refused.

Each tests/fixtures/upgrade/sqlite-* is a data folder a build left after `brain serve` (its BUILD names which) and
what that build read back from it (expected.json). Today's code serves a copy of the folder, and must read the same:
every memory as each reader exports it, every edge, project and reminder, each memory's audit timeline, each
member's identity and token (a replaced one still refused), the settings changed; the vectors kept, the forgotten
note's words in no file. tests/fixtures/upgrade/write.py writes a new one.
"""

import json
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures.upgrade import scenario

from .conftest import Server, run_cli

FIXTURES = sorted((Path(__file__).parents[1] / "fixtures" / "upgrade").glob("sqlite-*"))
FORGOTTEN_WORDS = b"hunter2"  # the scenario forgets the note holding them


def http_api(server: Server, owner: str) -> scenario.Api:
    client = httpx.Client(base_url=server.url, timeout=30)

    def api(method: str, path: str, body: dict[str, Any] | None = None, query: dict[str, Any] | None = None,
            token: str | None = None) -> tuple[int, dict[str, Any]]:
        response = client.request(method, path, json=body, params=query,
                                  headers={"Authorization": f"Bearer {token or owner}"})
        return response.status_code, response.json()

    return api


def wait_for(done, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_there_is_a_fixture_of_a_brain_from_before_formats_were_kept_and_one_of_today():
    """From before data formats were numbered (user_version 0), and one of this format."""
    versions = set()
    for fixture in FIXTURES:
        with sqlite3.connect(f"{(fixture / 'data' / 'brain.sqlite3').as_uri()}?mode=ro", uri=True) as conn:
            versions.add(conn.execute("PRAGMA user_version").fetchone()[0])
    assert {0, 1} <= versions, [f.name for f in FIXTURES]


@pytest.mark.model  # the folders' vectors are the packaged model's: served with it, they are kept, not made again
@pytest.mark.parametrize("replayed", [False, True], ids=["as left", "rebuilt from its log"])
@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_a_brain_an_earlier_build_wrote_opens_with_nothing_lost(fixture, replayed, tmp_path):
    """As the build left it, and with every projection rebuilt from its log by `brain replay` (what a build whose
    tables changed does at its first start): the log alone must hold it all."""
    data = tmp_path / "data"
    shutil.copytree(fixture / "data", data)
    expected = json.loads((fixture / "expected.json").read_text())
    facts = expected["facts"]
    if replayed:
        done = run_cli("replay", "--data-dir", str(data))
        assert done.returncode == 0, done.stderr
    server = Server(data, token=None, model=True).start()  # the owner's token is the folder's own
    try:
        api = http_api(server, (data / "auth_token").read_text().strip())
        read = scenario.snapshot(api, facts)
        for part, wanted in expected["snapshot"].items():
            assert read[part] == wanted, part
        assert read == expected["snapshot"]
        # Nothing waits to be embedded again: the vectors were kept (after a replay, from the embedding cache).
        assert wait_for(lambda: all(scenario.ok(api("GET", "/stats", token=token))["unvectorized"] == 0
                                    for token in (None, *facts["tokens"].values())))
        found = scenario.ok(api("GET", "/recall", query={"query": "what did we decide about pricing", "topK": 3}))
        assert "Pricing decision" in found["results"][0]["content"]
    finally:
        server.stop()
    assert all(FORGOTTEN_WORDS not in path.read_bytes() for path in data.rglob("*") if path.is_file())


def test_a_brain_of_a_newer_format_is_refused_in_words_and_left_as_it_was(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(FIXTURES[-1] / "data", data)
    conn = sqlite3.connect(data / "brain.sqlite3")
    conn.execute("PRAGMA user_version = 2")
    conn.close()
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    refused = run_cli("export", str(tmp_path / "out.json"), "--data-dir", str(data))
    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.startswith(f"brain export: {data / 'brain.sqlite3'} was written by a newer version of "
                                     f"Second Brain (data format 2); this version (")
    assert "Traceback" not in refused.stderr and not (tmp_path / "out.json").exists()
    assert {p.name: p.read_bytes() for p in data.iterdir()} == before
