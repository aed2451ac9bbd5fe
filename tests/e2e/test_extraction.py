"""Extraction over HTTP: GET /extract/dry-run previews without writing, and the nightly job, run through
POST /maintenance/run, puts what it finds in /due, /loops and the memory's timeline."""

import sqlite3
from contextlib import closing

import httpx


def log_head(server) -> int:
    with closing(sqlite3.connect(f"file:{server.data_dir / 'brain.sqlite3'}?mode=ro", uri=True)) as db:
        return db.execute("SELECT MAX(position) FROM events").fetchone()[0]


def nightly_reminders(api) -> None:
    """Leave time phrases to the nightly job (captures set reminders from their words at once by default)."""
    assert api.patch("/config", json={"REMINDERS_FROM_WORDS": "nightly"}).status_code == 200


def test_dry_run_then_the_nightly_job(server, api):
    nightly_reminders(api)
    dentist = api.post("/capture", json={"content": "Dentist tomorrow at 3pm"}).json()["id"]
    deck = api.post("/capture", json={"content": "I need to send the deck by tomorrow at 5pm"}).json()["id"]
    past = api.post("/capture", json={"content": "Friday's meeting went well"}).json()["id"]
    head = log_head(server)

    preview = api.get("/extract/dry-run")
    assert preview.status_code == 200, preview.text
    verdicts = preview.json()["verdicts"]
    assert [(v["id"], v["verdict"], v["when_kind"]) for v in verdicts] == [
        (dentist, "anchor", "event"), (deck, "commitment", "due"), (past, "none", None)]
    assert verdicts[0]["evidence"] == "tomorrow at 3pm" and verdicts[0]["when"].endswith("T15:00:00+00:00")
    assert verdicts[0]["content"] == "Dentist tomorrow at 3pm" and isinstance(verdicts[0]["when_at"], int)
    assert api.get("/extract/dry-run", params={"limit": 2}).json()["verdicts"] == verdicts[:2]
    assert log_head(server) == head  # the preview wrote nothing
    assert api.get("/due").json()["counts"] == {"overdue": 0, "upcoming": 0}

    runs = api.post("/maintenance/run", params={"job": "extraction"}).json()["runs"]
    assert runs[0]["counts"] == {"judged": 3, "anchored": 1, "committed": 1, "none": 1}, runs

    upcoming = api.get("/due").json()["upcoming"]
    assert [(e["id"], e["when_kind"], e["when_at"]) for e in upcoming] == [
        (dentist, "event", verdicts[0]["when_at"]), (deck, "due", verdicts[1]["when_at"])]
    assert [e["id"] for e in api.get("/loops").json()["loops"]] == [deck]
    timeline = api.get("/entry", params={"id": deck}).json()["entry"]["timeline"]
    by_system = [t for t in timeline if t["actor_name"] == "Second Brain"]  # the system actor's name
    assert [(t["event"], t["payload"]) for t in by_system] == [
        ("time_anchor_set", {"when_at": verdicts[1]["when_at"], "when_kind": "due"}),
        ("tags_changed", {"tags": ["kind:episodic", "task"]})]
    assert api.get("/extract/dry-run").json()["verdicts"] == []  # nothing left to judge
    again = api.post("/maintenance/run", params={"job": "extraction"}).json()["runs"][0]
    assert again["counts"] == {}


def test_dry_run_limits_and_access(server, api):
    nightly_reminders(api)
    for n in range(12):
        api.post("/capture", json={"content": f"Meeting {n} on Friday at 3"})
    assert len(api.get("/extract/dry-run").json()["verdicts"]) == 5
    assert api.get("/extract/dry-run", params={"limit": 0}).json()["limit"] == 1  # clamped, as limits are
    assert len(api.get("/extract/dry-run", params={"limit": 99}).json()["verdicts"]) == 10
    bad = api.get("/extract/dry-run", params={"limit": "five"})
    assert (bad.status_code, bad.json()) == (400, {"ok": False, "error": "limit must be an integer"})

    body = api.post("/team/members", json={"name": "Bob", "email": "bob@example.com", "role": "member"}).json()
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {body['token']}"}) as bob:
        assert bob.get("/extract/dry-run").status_code == 403
    assert httpx.get(server.url + "/extract/dry-run").status_code == 401
