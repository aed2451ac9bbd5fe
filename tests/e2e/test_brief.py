"""GET /brief over HTTP against a real server: the spec's fields, what counts in them, and a stable resurface."""

import time

import httpx

DAY_MS = 86_400_000


def capture(api, content, tags=(), source=None, workspace=None):
    body = {"content": content, "tags": list(tags)}
    body |= {"source": source} if source else {}
    body |= {"workspace": workspace} if workspace else {}
    return api.post("/capture", json=body).json()["id"]


def test_the_brief_as_the_spec_shows_it(api):
    now = int(time.time() * 1000)
    old = {"id": "old-decision", "content": "The pricing floor is $6k per project.", "tags": ["pricing"],
           "source": "api", "created_at": now - 60 * DAY_MS, "importance_score": 5}
    ten_days = {"id": "ten-days-ago", "content": "Drafted the hiring plan", "tags": ["hiring"],
                "source": "email-gmail", "created_at": now - 10 * DAY_MS}
    assert api.post("/import", json={"version": 3, "entries": [old, ten_days]}).json()["imported"] == 2
    for n in range(3):
        capture(api, f"SignPath certificate renewal step {n} for build {n * 7}", ["signpath"], "claude-desktop")
    capture(api, "Invoice from the accountant arrived today", ["finance"], "email-gmail")
    pattern = capture(api, "Across your memories, a recurring theme of renewals", ["auto-insight"], "system")
    capture(api, "Ada works at Initech", ["stale:as-of"])

    brief = api.get("/brief")
    assert brief.status_code == 200
    body = brief.json()
    assert set(body) == {"ok", "window_hours", "captured", "sources", "patterns", "resurface", "activity", "topics",
                         "total", "attention"}
    assert body["ok"] is True and body["window_hours"] == 48
    assert body["captured"] == 6
    # most first, then by name; the email of ten days ago is not in the window
    assert body["sources"] == [{"source": "claude-desktop", "count": 3}, {"source": "api", "count": 1},
                               {"source": "email-gmail", "count": 1}, {"source": "system", "count": 1}]
    assert body["patterns"] == [{"id": pattern, "content": "Across your memories, a recurring theme of renewals"}]
    assert body["resurface"] == {"id": "old-decision", "content": "The pricing floor is $6k per project.",
                                 "created_at": old["created_at"]}
    today = now // DAY_MS
    days = [a["day"] for a in body["activity"]]
    assert len(days) == 14 and days[-1] in (today, today + 1) and days == list(range(days[0], days[0] + 14))
    counts = {a["day"]: a["count"] for a in body["activity"]}
    assert counts[(now - 10 * DAY_MS) // DAY_MS] == 1 and sum(counts.values()) == 7 and 0 in counts.values()
    assert body["topics"][0] == {"tag": "signpath", "count": 3}
    topics = {t["tag"] for t in body["topics"]}
    assert not topics & {"auto-insight", "stale:as-of", "kind:semantic", "kind:episodic"}
    assert "pricing" not in topics  # written two months ago
    assert body["total"] == 8
    assert body["attention"]["stale"] == 1 and body["attention"]["patterns"] == 1
    assert isinstance(body["attention"]["unindexed"], int)

    again = api.get("/brief").json()
    assert again["resurface"] == body["resurface"]  # the day's pick holds

    assert api.post("/status", json={"id": pattern, "status": "deprecated"}).json()["ok"]  # dismissed
    after = api.get("/brief").json()
    assert after["patterns"] == [] and after["attention"]["patterns"] == 0


def test_the_brief_needs_a_token(server):
    assert httpx.get(server.url + "/brief").status_code == 401
