"""The REST API over real HTTP against a real server process and a real database file."""

import httpx
import pytest

from .conftest import Server


class _AnyDay:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and len(other) == 10 and other[4] == "-"


ANY_DAY = _AnyDay()


def test_the_memory_lifecycle(api):
    content = "Pricing floor is $6k per project. #pricing\n\n```sql\nSELECT 1; -- #not-a-tag\n```"
    captured = api.post("/capture", json={"content": content, "tags": ["Work"], "source": "claude-desktop"}).json()
    assert captured["ok"] is True and captured["tags"] == ["work", "pricing", "kind:semantic"]
    memory_id = captured["id"]

    [listed] = api.get("/list").json()
    assert listed["content"] == "Pricing floor is $6k per project.\n\n```sql\nSELECT 1; -- #not-a-tag\n```"
    assert (listed["workspace"], listed["can_edit"], listed["actor_name"]) == ("personal", True, None)
    recalled = api.get("/recall", params={"query": "pricing floor"}).json()
    assert [r["id"] for r in recalled["results"]] == [memory_id]
    assert recalled["semantic_unavailable"] is False and recalled["query_used"] == "pricing floor"

    appended = api.post("/append", json={"id": memory_id, "addition": "Raised to $7k.", "volatility": "state"})
    assert appended.json() == {"ok": True, "id": memory_id, "message": "Update appended successfully with timestamp"}
    assert api.post("/status", json={"id": f"  {memory_id} ", "status": "canonical"}).json() == {
        "ok": True, "id": memory_id, "status": "canonical"}
    updated = api.post("/update", json={"id": memory_id, "content": "Floor is $7k #finance", "tags": ["money"]})
    assert updated.json() == {"ok": True, "id": memory_id, "vectors": 1}

    entry = api.get("/entry", params={"id": memory_id}).json()["entry"]
    assert entry["content"] == "Floor is $7k"
    assert entry["tags"] == ["kind:semantic", "status:canonical", "money", "finance"]
    timeline = [t for t in entry["timeline"] if t["event"] != "recalled"]  # recorded after the recall answered
    assert [t["event"] for t in timeline] == [
        "created", "classified", "appended", "tags_changed", "status_changed", "updated", "tags_changed"]
    created, revised = timeline[0]["created_at"], timeline[-1]["created_at"]
    assert revised > created  # a recall, an append and a status change took place between them
    assert (entry["created_at"], entry["updated_at"]) == (created, revised)  # the update moved updated_at
    assert timeline[4]["payload"] == {"status": "canonical"}
    assert [t["payload"] for t in entry["timeline"] if t["event"] == "recalled"] in ([], [{"day": ANY_DAY}])
    assert entry["indexed"] is True and entry["actor_name"] == "Owner"

    assert api.get("/tags").json() == ["finance", "kind:semantic", "money", "status:canonical"]
    assert api.get("/tags", params={"counts": 1}).json()[0] == {"tag": "finance", "count": 1}
    assert api.get("/count").json() == {"count": 1}
    stats = api.get("/stats").json()
    assert stats["count"] == 1 and stats["top_tags"] == ["finance", "money"]
    # Ours: the models it runs on (this test server: an embedder, no reranker, no language model).
    assert stats["models"]["embedder"] and stats["models"]["reranker"] is None
    assert stats["models"]["language_model"] is None

    assert api.post("/forget", json={"id": memory_id}).json() == {"ok": True, "id": memory_id, "deletedVectors": 1}
    missing = api.get("/entry", params={"id": memory_id})
    assert missing.status_code == 404
    assert missing.json() == {"ok": False, "error": f"No entry found with ID: {memory_id}"}
    assert api.get("/count").json() == {"count": 0}


def test_a_recall_counts_once_a_day_however_often_it_is_repeated(server, api):
    memory_id = api.post("/capture", json={"content": "The quarterly review covers hiring"}).json()["id"]
    for _ in range(5):
        assert api.get("/recall", params={"query": "quarterly review"}).json()["results"][0]["id"] == memory_id
    # Each recall is counted by a background task that runs after its answer was sent. A graceful stop waits for
    # every one of them (uvicorn finishes its request tasks before it exits): after it, all five have counted.
    server.stop()
    reopened = Server(server.data_dir).start()
    with reopened.client() as client:
        entry = client.get("/entry", params={"id": memory_id}).json()["entry"]
    reopened.stop()
    assert entry["recall_count"] == 1
    assert [t["event"] for t in entry["timeline"]] == ["created", "classified", "recalled"]


def test_read_your_writes(api):
    for n in range(20):
        memory_id = api.post("/capture", json={"content": f"fresh note QX{n:04d}"}).json()["id"]
        assert api.get("/list", params={"n": 1}).json()[0]["id"] == memory_id
        assert api.get("/recall", params={"query": f"QX{n:04d}"}).json()["results"][0]["id"] == memory_id


def test_authentication(server):
    assert httpx.get(server.url + "/").status_code == 200
    unauthorized = {"ok": False, "error": "Unauthorized", "code": "invalid_token"}
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": server.token}, {"Authorization": "Bearer"},
                    {"Authorization": "Basic " + server.token}):
        response = httpx.get(server.url + "/count", headers=headers)
        assert (response.status_code, response.json()) == (401, unauthorized)
    refused = httpx.get(server.url + "/count", params={"token": server.token})
    assert (refused.status_code, refused.json()) == (401, unauthorized)
    with server.client() as api:
        assert api.get("/count", params={"token": server.token}).status_code == 401
        assert api.get("/count").status_code == 200
    preflight = httpx.options(server.url + "/capture", headers={
        "Origin": server.url, "Access-Control-Request-Method": "POST"})  # the service's own origin
    assert preflight.status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "error"),
    [
        ("post", "/capture", b"{not json", 400, "Invalid JSON body"),
        ("post", "/capture", b"[1, 2]", 400, "Invalid JSON body: expected a JSON object"),
        ("post", "/capture", b"", 400, "Missing or empty content"),
        ("post", "/capture", b'{"content": "   "}', 400, "Missing or empty content"),
        ("post", "/capture", b'{"content": 42}', 400, "Invalid content: Input should be a valid string"),
        ("post", "/capture", b'{"content": "x", "tags": "work"}', 400, "Invalid tags: Input should be a valid list"),
        ("post", "/capture", b'{"content": "x", "volatility": "Durable"}', 400,
         "volatility must be one of: durable, state, volatile"),
        ("post", "/capture", b'{"content": "x", "workspace": "team"}', 400, "workspace must be personal or company"),
        ("post", "/append", b'{"id": "nope", "addition": "x"}', 404, "No entry found with ID: nope"),
        ("post", "/append", b'{"id": "nope"}', 400, "Missing or empty addition"),
        ("post", "/update", b'{"content": "x"}', 400, "Missing or empty id"),
        ("post", "/status", b'{"id": "nope", "status": "archived"}', 400, None),
        ("post", "/forget", b'{"id": ""}', 400, "Missing or empty id"),
        ("post", "/forget", b'{"id": "nope"}', 404, "No entry found with ID: nope"),
        ("get", "/entry", None, 400, "Missing or empty id"),
        ("get", "/recall", None, 400, "Missing or empty query"),
        ("get", "/list?n=abc", None, 400, "n must be an integer"),
        ("get", "/list?after=1.5", None, 400, "after must be an ISO date (2026-12-03) or date-time (2026-12-03T09:30), "
                                              "Unix ms, or words such as \"tomorrow at 10\", \"Friday at 9\", "
                                              "\"in 3 days\", \"7d\" or \"last week\" (got '1.5')"),
        ("get", "/recall?query=x&topK=ten", None, 400, "topK must be an integer"),
        ("get", "/no-such-route", None, 404, "Not found"),
        ("delete", "/capture", None, 405, "Method not allowed"),
    ],
)
def test_every_failure_uses_the_envelope(api, method, path, body, status, error):
    response = api.request(method.upper(), path, content=body)
    assert response.status_code == status
    payload = response.json()
    assert payload["ok"] is False and isinstance(payload["error"], str) and payload["error"]
    if error is not None:
        assert payload["error"] == error


def test_status_on_a_missing_entry_is_404_and_a_bad_status_400(api):
    memory_id = api.post("/capture", json={"content": "x"}).json()["id"]
    assert api.post("/status", json={"id": "nope", "status": "draft"}).status_code == 404
    bad = api.post("/status", json={"id": memory_id, "status": "archived"})
    assert (bad.status_code, bad.json()["error"]) == (400, "status must be one of: canonical, draft, deprecated")


def test_clamps(api):
    for n in range(25):
        api.post("/capture", json={"content": f"clamp note {n}"})
    assert len(api.get("/list", params={"n": 500}).json()) == 25
    assert len(api.get("/list", params={"n": -3}).json()) == 1
    assert len(api.get("/list").json()) == 20
    assert len(api.get("/recall", params={"query": "clamp note", "topK": 99}).json()["results"]) == 20
    assert len(api.get("/recall", params={"query": "clamp note", "topK": 0}).json()["results"]) == 1
    assert len(api.get("/recall", params={"query": "clamp note"}).json()["results"]) == 5


def test_list_sorts_and_pages_by_offset_and_refuses_what_it_cannot_do(api):
    ids = [api.post("/capture", json={"content": f"sorted note number {n}"}).json()["id"] for n in range(4)]
    listed = lambda **params: [e["id"] for e in api.get("/list", params=params).json()]  # noqa: E731
    # Ours too: each listed memory carries its time anchor, null when it has none.
    dated = api.post("/capture", json={"content": "Dentist on the 3rd of March 2099 at 10",
                                       "when": "2099-03-03T10:00:00Z", "when_kind": "event"}).json()["id"]
    [first] = api.get("/list", params={"n": 1}).json()
    assert (first["id"], first["when_at"], first["when_kind"]) == (dated, 4076215200000, "event")
    api.post("/forget", json={"id": dated})
    assert listed() == ids[::-1]
    assert listed(sort="oldest") == ids
    assert listed(sort="oldest", n=2, offset=1) == ids[1:3]
    api.post("/append", json={"id": ids[0], "addition": "changed last"})
    assert listed(sort="updated")[0] == ids[0]
    for params, error in [({"sort": "random"}, "sort must be one of newest, oldest, updated, important"),
                          ({"offset": -1}, "offset must be between 0 and 9900"),
                          ({"offset": "x"}, "offset must be an integer"),
                          ({"sort": "oldest", "as_of": "2026-01-01T00:00:00Z"},
                           "as_of lists the newest first from the start: it cannot be combined with sort or offset")]:
        answer = api.get("/list", params=params)
        assert (answer.status_code, answer.json()) == (400, {"ok": False, "error": error}), params


def test_tags_are_added_and_removed_without_resending_the_text(api):
    memory_id = api.post("/capture", json={"content": "The shed key hangs in the kitchen",
                                           "tags": ["house"]}).json()["id"]
    answer = api.post("/tags", json={"id": memory_id, "add": ["Keys", "garden"], "remove": ["house"]})
    assert answer.status_code == 200, answer.text
    topic = [t for t in answer.json()["tags"] if ":" not in t]
    assert topic == ["keys", "garden"]
    entry = api.get("/entry", params={"id": memory_id}).json()["entry"]
    assert entry["content"] == "The shed key hangs in the kitchen"
    assert [t for t in entry["tags"] if ":" not in t] == topic
    assert [e["event"] for e in entry["timeline"]][-1] == "tags_changed"
    for body, status, error in [
        ({"id": memory_id, "add": ["status:canonical"]}, 400,
         "status:canonical is set by the brain, not as a tag: use status, share or project"),
        ({"id": memory_id}, 400, "add or remove at least one tag"),
        ({"id": "nope", "add": ["x"]}, 404, "No entry found with ID: nope"),
        ({"add": ["x"]}, 400, "Missing or empty id"),
    ]:
        refused = api.post("/tags", json=body)
        assert (refused.status_code, refused.json()) == (status, {"ok": False, "error": error}), body


def test_content_is_stored_as_sent(api):
    content = "Steps:\n  1. run `make`\n\n\tindented\n```python\n#!/usr/bin/env python\nprint('#hi')\n```\nDocs: https://example.com/guide#install"
    memory_id = api.post("/capture", json={"content": content}).json()["id"]
    entry = api.get("/entry", params={"id": memory_id}).json()["entry"]
    assert entry["content"] == content and entry["tags"] == ["kind:semantic"]


def test_oversized_bodies_are_refused_and_nothing_is_stored(api):
    too_long = api.post("/capture", json={"content": "x" * 200_001})
    assert (too_long.status_code, too_long.json()["error"]) == (400, "content is too long: at most 200000 characters")
    huge = api.post("/capture", content=b'{"content": "' + b"y" * 2_000_000 + b'"}')
    assert huge.status_code == 413 and huge.json()["ok"] is False
    assert api.get("/count").json() == {"count": 0}
