"""GET /digest over HTTP: every documented answer, the digest in the log and the sources rolled up in it."""

import time

NOW = int(time.time() * 1000)
DAY = 24 * 3600 * 1000
NOTES = ["Priya moved the standup to 9:30 on 2025-03-14.", "Deploy of build 412 went out with Kenji watching.",
         "Acme Corp asked for the invoice of $12,400 again.", "Budget for Q3 is 88k, Lena approved it.",
         "Zürich office closes on 2025-04-01 for the move.", "Three flaky tests in the payments suite, 7 retries.",
         "Ordered 24 new monitors from Dell for the Berlin team.", "Marta owns the incident review for ticket 5531.",
         "The v2.7 release notes are due on Friday to Sam.", "Oslo customers saw 1.5 s latency during the backup.",
         "Rotated the staging keys; 2 services needed restarts.", "Nadia takes over on-call from Tom on 2025-05-02."]


def restore(api, entries):
    response = api.post("/import", json={"version": 3, "entries": entries})
    assert response.status_code == 200 and response.json()["failed"] == 0, response.text


def entries(notes, tags, prefix):
    return [{"id": f"{prefix}-{i}", "content": note, "tags": tags, "created_at": NOW - (40 - i) * DAY}
            for i, note in enumerate(notes)]


def test_digest_answers_as_documented(api):
    for params, status in (({}, 400), ({"tag": "  "}, 400), ({"tag": "a", "project": "b"}, 400)):
        response = api.get("/digest", params=params)
        assert response.status_code == status and response.json()["ok"] is False, response.text
    unknown = api.get("/digest", params={"project": "nope"})
    assert unknown.status_code == 404 and unknown.json()["known_projects"] == []

    restore(api, entries(NOTES[:9], ["standup"], "s"))
    too_few = api.get("/digest", params={"tag": "standup"})
    assert too_few.status_code == 200 and too_few.json() == {
        "tag": "standup", "source_count": 9,
        "error": "Could not create digest — tag may have fewer than 10 eligible entries or was recently compressed"}
    restore(api, entries(NOTES[9:], ["standup"], "t"))
    assert api.get("/stats").json()["digest_candidates"] == [{"tag": "standup", "count": 12}]

    made = api.get("/digest", params={"tag": "Standup"}).json()
    assert set(made) == {"tag", "synthesis", "entry_id", "source_count"} and made["source_count"] == 12
    assert made["synthesis"].startswith('[Synthesized from 12 entries tagged "standup"]\n\n')
    for fact in ("Priya", "9:30", "2025-03-14", "412", "Kenji", "12,400", "Q3", "Zürich", "Dell", "5531", "v2.7",
                 "1.5", "Nadia", "2025-05-02"):
        assert fact in made["synthesis"], fact
    digest = api.get("/entry", params={"id": made["entry_id"]}).json()["entry"]
    assert digest["tags"][:2] == ["synthesized", "standup"] and digest["source"] == "system"
    assert digest["actor_name"] == "Second Brain" and digest["workspace"] == "personal"
    source = api.get("/entry", params={"id": "s-0"}).json()["entry"]
    assert "rolled-up" in source["tags"] and source["content"] == NOTES[0]
    assert source["timeline"][-1] == {**source["timeline"][-1], "event": "rolled_up",
                                      "payload": {"digest_id": made["entry_id"]}}
    assert api.get("/stats").json()["digest_candidates"] == []

    restore(api, entries(NOTES[:10], ["standup"], "u"))  # ten more, within a day of the digest
    again = api.get("/digest", params={"tag": "standup"}).json()
    assert "error" in again and again["source_count"] == 10
    bookkeeping = api.get("/digest", params={"tag": "kind:episodic"}).json()
    assert bookkeeping["source_count"] == 0 and "error" in bookkeeping


def test_a_project_digest_lands_back_in_the_project(api):
    assert api.post("/projects", json={"name": "Atlas", "aliases": ["billing-v2"]}).status_code == 201
    restore(api, entries(NOTES[:6], ["project:atlas"], "p") + entries(NOTES[6:11], ["billing-v2"], "q"))
    made = api.get("/digest", params={"project": "atlas"}).json()
    assert made["project"] == "atlas" and made["source_count"] == 11 and "tag" not in made
    assert made["synthesis"].startswith('[Synthesized from 11 entries in project "atlas"]')
    digest = api.get("/entry", params={"id": made["entry_id"]}).json()["entry"]
    assert digest["tags"][:2] == ["synthesized", "project:atlas"]
    listed = [e["id"] for e in api.get("/list", params={"project": "atlas"}).json()]
    assert made["entry_id"] in listed
