"""What must hold under load, crashes and forgetting: against real server processes and real files."""

import os
import signal
import stat
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from .conftest import Server, run_cli


def test_eight_threads_of_100_captures_all_land(api):
    def worker(thread: int) -> list[int]:
        with httpx.Client(base_url=str(api.base_url), headers=dict(api.headers), timeout=60) as client:
            return [
                client.post("/capture",
                            json={"content": f"thread {thread} note {n}", "tags": [f"t{thread}"]}).status_code
                for n in range(100)
            ]

    with ThreadPoolExecutor(8) as pool:
        statuses = [s for result in pool.map(worker, range(8)) for s in result]
    assert statuses == [200] * 800
    assert api.get("/count").json() == {"count": 800}
    counts = [c for c in api.get("/tags", params={"counts": 1}).json() if c["tag"].startswith("t")]
    assert counts == [{"tag": f"t{n}", "count": 100} for n in range(8)]


def test_sigkill_mid_bulk_load_leaves_no_half_written_memory(tmp_path):
    server = Server(tmp_path / "brain", in_process=False).start()  # the process is what is killed
    sent: dict[str, str] = {}
    acknowledged: dict[str, str] = {}
    stop = threading.Event()
    under_way = threading.Event()  # set once enough captures landed that the kill comes mid-load

    def load(thread: int) -> None:
        with server.client() as client:
            for n in range(100_000):
                if stop.is_set():
                    return
                content = f"bulk {thread}-{n} " + "lorem ipsum dolor sit amet " * (n % 50) + f"END-{thread}-{n}-END"
                sent[f"{thread}-{n}"] = content
                try:
                    response = client.post("/capture", json={"content": content, "tags": ["bulk"]})
                except httpx.TransportError:
                    return
                if response.status_code == 200:
                    acknowledged[response.json()["id"]] = content
                    if len(acknowledged) >= 50:
                        under_way.set()

    threads = [threading.Thread(target=load, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    assert under_way.wait(timeout=60), "the load never got under way"
    server.process.send_signal(signal.SIGKILL)
    server.process.wait()
    stop.set()
    for t in threads:
        t.join()

    restarted = Server(server.data_dir, model=True).start()  # the killed process embedded with the model
    with restarted.client() as api:
        def everything():
            # /list pages newest first: walk back with an inclusive `before` until no new id turns up
            seen: dict = {}
            before = 2**62
            while True:
                page = api.get("/list", params={"n": 100, "before": before}).json()
                fresh = {e["id"]: e for e in page if e["id"] not in seen}
                if not fresh:
                    return seen
                seen.update(fresh)
                before = page[-1]["created_at"]

        stored = everything()
        assert set(acknowledged) <= set(stored), "an acknowledged capture was lost"
        for memory_id, content in list(acknowledged.items())[:50]:
            assert api.get("/entry", params={"id": memory_id}).json()["entry"]["content"] == content
        contents = set(sent.values())
        for memory_id, entry in stored.items():
            assert entry["content"] in contents and entry["tags"][0] == "bulk", f"half-written memory {memory_id}"
            assert all(t in ("bulk", "kind:semantic", "duplicate-candidate") for t in entry["tags"]), entry["tags"]
            found = api.get("/recall", params={"query": entry["content"].split()[-1]}).json()["results"]
            assert found[0]["id"] == memory_id, [(r["content"][-20:], r["score"]) for r in found[:3]]
        count = api.get("/count").json()["count"]
        assert count == len(stored)
        restarted.stop()

    replay = run_cli("replay", "--data-dir", str(server.data_dir))
    assert replay.returncode == 0, replay.stderr
    after = Server(server.data_dir, model=True).start()
    with after.client() as api:
        assert api.get("/count").json()["count"] == count
        sample = sorted(stored)[:25]
        for memory_id in sample:
            entry = api.get("/entry", params={"id": memory_id}).json()["entry"]
            assert entry["content"] == stored[memory_id]["content"]
    after.stop()


def files_containing(directory, marker: bytes) -> list[str]:
    found = []
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as handle:
                if marker in handle.read():
                    found.append(path)
    return found


def test_sigterm_closes_the_brain_before_the_process_exits(tmp_path):
    """A service manager's stop: the server finishes, the brain closes (its log's WAL folded into the file, which
    SQLite does only when the last connection closes), and the exit is a clean one."""
    server = Server(tmp_path / "brain", in_process=False).start()
    with server.client() as api:
        assert api.post("/capture", json={"content": "Stopped politely"}).status_code == 200
    output = server.stop(signal.SIGTERM)
    assert server.process.returncode == 0, output
    assert sorted(p.name for p in server.data_dir.iterdir() if "sqlite3" in p.name) == ["brain.sqlite3"]


@pytest.mark.model  # recall must answer nothing for the forgotten text: no other note is near it by meaning
def test_forget_means_forget(server, api):
    marker = f"FORGET-ME-{uuid.uuid4().hex}"
    for n in range(50):
        api.post("/capture", json={"content": f"neighbour note {n} that stays"})
    memory_id = api.post("/capture", json={"content": f"The secret is {marker} #{marker.lower()}",
                                           "tags": [f"tag-{marker}"]}).json()["id"]
    api.post("/append", json={"id": memory_id, "addition": f"again {marker}"})
    api.post("/update", json={"id": memory_id, "content": f"rewritten {marker}"})
    assert files_containing(server.data_dir, marker.encode()), "the scan must be able to see the marker"

    assert api.post("/forget", json={"id": memory_id}).json()["ok"] is True
    for encoded in (marker.encode(), marker.lower().encode()):
        assert files_containing(server.data_dir, encoded) == []
    # Nothing holds the marker now: recall answers with the nearest notes, if any, none of them the forgotten one.
    found = api.get("/recall", params={"query": marker}).json()["results"]
    assert all(r["id"] != memory_id and marker.lower() not in r["content"].lower() for r in found), found
    assert all(r["score"] < 100 for r in found), found  # and says they are weak
    assert api.get("/count").json()["count"] == 50

    server.stop()
    replay = run_cli("replay", "--data-dir", str(server.data_dir))
    assert replay.returncode == 0, replay.stderr
    for encoded in (marker.encode(), marker.lower().encode()):
        assert files_containing(server.data_dir, encoded) == []


def test_a_generated_token_is_saved_owner_only_and_printed_once(tmp_path):
    first = Server(tmp_path / "brain", token=None, in_process=False).start()  # what `brain serve` prints
    token_file = first.data_dir / "auth_token"
    token = token_file.read_text().strip()
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert httpx.get(first.url + "/count", headers={"Authorization": f"Bearer {token}"}).json() == {"count": 0}
    output = first.stop()
    assert output.count(token) == 1

    second = Server(first.data_dir, token=None, in_process=False).start()
    assert httpx.get(second.url + "/count", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert token not in second.stop()


def test_cli_version():
    result = run_cli("version")
    assert result.returncode == 0 and result.stdout.startswith("second-brain ")
