"""Maintenance from outside: GET /maintenance and POST /maintenance/run over HTTP (admins only), and
`brain maintenance` on a stopped brain's data directory."""

import json

import httpx

from tests.e2e.conftest import run_cli


def test_runs_on_demand_are_summarised_and_listed(server, api):
    api.post("/capture", json={"content": "The harbour crane needs new cables"})
    jobs = api.get("/maintenance").json()["jobs"]
    names = [j["job"] for j in jobs]
    assert names == ["housekeeping", "index", "graph", "staleness", "extraction", "compression", "patterns", "push",
                     "integrations"]
    assert [j["schedule"] for j in jobs] == ["nightly"] * 7 + ["hourly"] * 2
    assert all(j["runs"] == 0 and j["last"] is None and not j["running"] for j in jobs)

    run = api.post("/maintenance/run", params={"job": "index"})
    assert run.status_code == 200, run.text
    [summary] = run.json()["runs"]
    assert summary["job"] == "index" and summary["complete"] and summary["errors"] == []
    assert summary["counts"]["checked"] == 1 and "drifted" not in summary["counts"]
    listed = {j["job"]: j for j in api.get("/maintenance").json()["jobs"]}
    assert listed["index"]["runs"] == 1 and listed["index"]["last"] == summary

    everything = api.post("/maintenance/run").json()["runs"]
    assert [r["job"] for r in everything] == [j["job"] for j in jobs if j["schedule"] == "nightly"]

    missing = api.post("/maintenance/run", params={"job": "defrag"})
    assert missing.status_code == 404 and missing.json()["ok"] is False
    assert "defrag" in missing.json()["error"]


def test_members_may_not_run_or_read_maintenance(server, api):
    body = api.post("/team/members", json={"name": "Bob", "email": "bob@example.com", "role": "member"}).json()
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {body['token']}"}) as bob:
        assert bob.get("/maintenance").status_code == 403
        assert bob.post("/maintenance/run", params={"job": "index"}).status_code == 403
    assert api.get("/maintenance").json()["jobs"][1]["runs"] == 0  # nothing ran


def test_the_cli_runs_the_nightly_jobs_on_a_stopped_brain(tmp_path):
    data = tmp_path / "brain"
    assert run_cli("import", str(_backup(tmp_path)), "--data-dir", str(data)).returncode == 0
    listed = run_cli("maintenance", "--list", "--data-dir", str(data))
    assert listed.returncode == 0 and "staleness" in listed.stdout and "never" in listed.stdout
    one = run_cli("maintenance", "staleness", "--data-dir", str(data))
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith("staleness: checked 2, flagged 1")
    again = run_cli("maintenance", "--data-dir", str(data))
    assert again.returncode == 0 and "staleness: checked 2 " in again.stdout  # flagged once, not twice
    assert "graph:" in again.stdout and "index:" in again.stdout
    assert run_cli("maintenance", "defrag", "--data-dir", str(data)).returncode == 2


def _backup(tmp_path):
    old = 1_600_000_000_000  # 2020: long untouched
    entries = [{"id": "a", "content": "Dana works at Acme Robotics", "tags": [], "created_at": old},
               {"id": "b", "content": "The blue notebook", "tags": [], "created_at": old}]
    path = tmp_path / "backup.json"
    path.write_text(json.dumps({"version": 3, "entries": entries}))
    return path


def test_an_admins_extraction_preview_never_shows_a_members_personal_notes(server, api):
    assert api.patch("/config", json={"REMINDERS_FROM_WORDS": "nightly"}).status_code == 200  # the nightly job's
    body = api.post("/team/members", json={"name": "Bob", "email": "bob@example.com", "role": "member"}).json()
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {body['token']}"}) as bob:
        assert bob.post("/capture", json={"content": "Bob's therapist tomorrow at 4pm"}).status_code == 200
    api.post("/capture", json={"content": "Dentist tomorrow at 3pm"})
    previewed = [v["content"] for v in api.get("/extract/dry-run").json()["verdicts"]]
    assert previewed == ["Dentist tomorrow at 3pm"]
    runs = api.post("/maintenance/run", params={"job": "extraction"}).json()["runs"]
    assert "therapist" not in str(runs)  # the summary holds counts, never a member's words
