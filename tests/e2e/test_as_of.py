"""`as_of` over REST and MCP against a real server, and `brain replay --until` materialising a past brain with the
CLI."""

import hashlib
import json
import time

import anyio

from .conftest import Server, run_cli
from .test_mcp import call, error, over_http


def moment() -> int:
    """A moment strictly between what was written before it and what is written after it."""
    time.sleep(0.005)
    now = int(time.time() * 1000)
    time.sleep(0.005)
    return now


def without_times(export: dict) -> dict:
    return {k: v for k, v in export.items() if k not in ("exported_at", "as_of")}


def test_as_of_reads_and_replay_until_over_the_real_server_and_cli(server, tmp_path):
    with server.client() as api:
        first = api.post("/capture", json={"content": "The office moves to Lyon in May.", "tags": ["office"]}).json()
        secret = api.post("/capture", json={"content": "Door code SECRET-4471 for the archive."}).json()["id"]
        other = api.post("/capture", json={"content": "Lease signed with the Lyon landlord."}).json()["id"]
        assert api.post("/link", json={"source_id": first["id"], "target_id": other}).json()["ok"]
        then = moment()
        live_then = api.get("/export").json()
        assert api.post("/update",
                        json={"id": first["id"], "content": "The office moves to Lyon in June."}).json()["ok"]
        assert api.post("/unlink", json={"source_id": first["id"], "target_id": other}).json()["ok"]
        assert api.post("/forget", json={"id": secret}).json()["ok"]
        after = moment()

        past = api.get("/export", params={"as_of": str(then)}).json()
        assert past["as_of"] == then
        live_then["entries"] = [e for e in live_then["entries"] if e["id"] != secret]
        assert without_times(past) == without_times(live_then)
        assert "SECRET-4471" not in str(past)

        entry = api.get("/entry", params={"id": first["id"], "as_of": str(then)}).json()["entry"]
        assert entry["content"] == "The office moves to Lyon in May."
        assert all(t["created_at"] <= then for t in entry["timeline"])
        diffed = api.get("/entry", params={"id": first["id"], "as_of": str(after), "diff": "1"}).json()["entry"]
        assert [r["reason"] for r in diffed["revisions"]] == ["captured", "updated"]
        assert "revisions" not in api.get("/entry", params={"id": first["id"]}).json()["entry"]

        listed = api.get("/list", params={"as_of": str(then), "n": 5}).json()
        assert [e["id"] for e in listed] == [other, first["id"]]
        iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(then / 1000)) + f".{then % 1000:03d}Z"
        assert api.get("/list", params={"as_of": iso, "n": 5}).json() == listed

        linked = api.get("/connections", params={"id": first["id"], "as_of": str(then)}).json()
        assert [c["id"] for c in linked["connections"]] == [other]
        assert api.get("/connections", params={"id": first["id"], "as_of": str(after)}).json()["connections"] == []

        recalled = api.get("/recall", params={"query": "when does the office move to Lyon", "as_of": str(then),
                                              "topK": 3, "full": "1"}).json()
        assert recalled["as_of"] == then and recalled["results"][0]["content"] == "The office moves to Lyon in May."
        assert "SECRET-4471" not in str(
            api.get("/recall", params={"query": "door code archive", "as_of": str(then)}).json())
        live_recall = moment()  # a memory's recalls count once a day: a past recall counted would come first
        assert api.get("/recall", params={"query": "office Lyon"}).json()["results"][0]["content"].endswith("June.")
        bad = api.get("/recall", params={"query": "office", "as_of": "the day the office moved"})
        assert bad.status_code == 400 and bad.json() == {"ok": False, "error": bad.json()["error"]}
        assert bad.json()["error"].startswith("as_of must be")
        deadline = time.monotonic() + 10  # a live recall is counted after its answer, in the background
        while not (counted := api.get("/timeline", params={"id": first["id"], "type": "recalled"}).json()["timeline"]):
            assert time.monotonic() < deadline, "the live recall was never counted"
            time.sleep(0.05)
        assert len(counted) == 1 and counted[0]["at"] > live_recall  # the live one; past recalls are audits, not uses

        gone = api.get("/entry", params={"id": secret, "as_of": str(then)})
        assert gone.status_code == 404 and gone.json() == {"ok": False, "error": f"No entry found with ID: {secret}"}
        bad = api.get("/list", params={"as_of": "the day the office moved"})
        assert bad.status_code == 400 and bad.json()["error"].startswith("as_of must be")
        assert api.get("/export", params={"as_of": "2999-01-01"}).json()["entries"] == api.get("/export").json()[
            "entries"]  # a future moment is now
        source_export_then = without_times(past)

    server.stop()
    database = server.data_dir / "brain.sqlite3"
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    copy = tmp_path / "then"
    done = run_cli("replay", "--until", str(then), "--from", str(server.data_dir), "--data-dir", str(copy))
    assert done.returncode == 0, done.stderr
    assert "copied [" in done.stderr and "Materialised" in done.stdout
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before  # the source is only read
    assert b"SECRET-4471" not in (copy / "brain.sqlite3").read_bytes()  # erased in the log: erased in the copy

    feed = run_cli("timeline", "--id", first["id"], "--data-dir", str(server.data_dir))
    assert feed.returncode == 0, feed.stderr
    lines = feed.stdout.splitlines()
    assert lines[0].endswith("events, newest first:") and "· Owner · updated · memory " + first["id"] in feed.stdout
    kinds = [line.split(" · ")[2] for line in lines[1:]]
    assert {"link_created", "link_removed", "recalled"} <= set(kinds) and kinds[-1] == "created"
    limited = run_cli("timeline", "--limit", "2", "--type", "deleted", "--data-dir", str(server.data_dir))
    assert limited.returncode == 0 and "deleted · memory " + secret in limited.stdout
    assert "SECRET-4471" not in feed.stdout + limited.stdout
    assert run_cli("timeline", "--type", "exploded", "--data-dir", str(server.data_dir)).returncode == 2

    refused = run_cli("replay", "--until", str(then), "--from", str(server.data_dir), "--data-dir", str(copy))
    assert refused.returncode == 1 and "not empty" in refused.stderr
    assert run_cli("replay", "--until", "soon", "--data-dir", str(tmp_path / "x")).returncode == 2

    restored = Server(copy).start()
    try:
        with restored.client() as api:
            assert without_times(api.get("/export").json()) == source_export_then
            assert "SECRET-4471" not in api.get("/export").text
    finally:
        restored.stop()


def test_mcp_get_and_list_recent_take_as_of(server):
    async def session():
        async with over_http(server) as client:
            first, second = "The standup is at 9:15 in the Quartz room.", "The standup is at 10:00 in the Basalt room."
            memory_id = json.loads(await call(client, "remember", content=first))["id"]
            then = moment()
            await call(client, "update", id=memory_id, content=second)
            assert (await call(client, "get", id=memory_id)).endswith(second)
            assert (await call(client, "get", id=memory_id, as_of=then)).endswith(first)
            assert "Quartz" in await call(client, "list_recent", as_of=str(then))
            assert "Basalt" not in await call(client, "list_recent", as_of=then)
            assert "as_of must be" in await error(client, "get", id=memory_id, as_of="someday")
            assert "Quartz" in await call(client, "recall", query="when is the standup", as_of=then)
            assert "Quartz" not in await call(client, "recall", query="when is the standup")
            feed = await call(client, "timeline", id=memory_id)
            assert feed.splitlines()[0].endswith("events, newest first:") and " · updated · memory " + memory_id in feed
            assert "Quartz" not in feed  # the feed says what happened, not what was written
            # (room names, not times: the feed shows times of day, and once it said 09:15)
            assert (await call(client, "timeline", type=["updated"], limit=1)).count(" · updated · ") == 1
            assert "type: unknown event type" in await error(client, "timeline", type=["exploded"])

    anyio.run(session)
