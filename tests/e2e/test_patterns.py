"""Patterns over HTTP: the nightly job (POST /maintenance/run) proposes one from memories a month apart, recall
leaves it out until POST /patterns/resolve confirms it; the route's refusals."""

import time

import pytest

pytestmark = pytest.mark.model  # a pattern's links and recall are judged with the packaged model's inferred links

NOW = int(time.time() * 1000)
DAY = 24 * 3600 * 1000
TLS = [("Renewed the TLS certificate for the edge proxy by hand again; it took two hours of debugging the nginx "
        "config."), ("The edge proxy TLS certificate expired again and I renewed it by hand: two hours debugging the "
                     "nginx config.")]


def propose(api) -> str:
    entries = [{"id": f"tls-{i}", "content": text, "tags": ["infra"], "created_at": NOW - (90 - 45 * i) * DAY}
               for i, text in enumerate(TLS)]
    assert api.post("/import", json={"version": 3, "entries": entries}).json()["imported"] == 2
    while api.post("/vectorize-pending").json()["remaining"]:
        pass
    [run] = api.post("/maintenance/run", params={"job": "patterns"}).json()["runs"]
    assert run["counts"]["proposed"] == 1, run
    [pattern] = api.get("/list", params={"tag": "auto-insight"}).json()
    return pattern["id"]


def recalled(api, query="TLS certificate edge proxy renewed by hand") -> list[str]:
    return [r["id"] for r in api.get("/recall", params={"query": query, "top_k": 10}).json()["results"]]


def test_a_pattern_stays_out_of_recall_until_confirmed(api):
    pattern = propose(api)
    entry = api.get("/entry", params={"id": pattern}).json()["entry"]
    assert entry["tags"] == ["auto-insight", "kind:semantic"] and entry["source"] == "system"
    assert "Recurring in 2 memories over 45 days" in entry["content"] and TLS[0] in entry["content"]
    links = api.get("/connections", params={"id": pattern}).json()["connections"]
    assert sorted((c["id"], c["type"]) for c in links) == [("tls-0", "drawn_from"), ("tls-1", "drawn_from")]
    while api.post("/vectorize-pending").json()["remaining"]:
        pass
    assert "tls-0" in recalled(api) and pattern not in recalled(api)
    linked = api.post("/link", json={"source_id": "tls-0", "target_id": "tls-1", "type": "drawn_from"})
    assert linked.status_code == 400  # the brain's own edge type

    confirmed = api.post("/patterns/resolve", json={"id": pattern, "action": "confirm"})
    assert confirmed.status_code == 200 and confirmed.json() == {
        "ok": True, "id": pattern, "action": "confirm", "tags": ["kind:semantic", "status:canonical"]}
    assert pattern in recalled(api)
    again = api.post("/patterns/resolve", json={"id": pattern, "action": "dismiss"})
    assert again.status_code == 400 and "not a pattern awaiting confirmation" in again.json()["error"]


def test_resolve_refuses_what_it_cannot_do(api):
    for body, status in (({"id": "x"}, 400), ({"id": "x", "action": "maybe"}, 400),
                         ({"id": "x", "ids": ["y"], "action": "confirm"}, 400), ({"action": "confirm"}, 400),
                         ({"ids": [], "action": "confirm"}, 400), ({"ids": ["a"] * 101, "action": "confirm"}, 400),
                         ({"ids": "a", "action": "confirm"}, 400), ({"id": "nope", "action": "confirm"}, 404)):
        response = api.post("/patterns/resolve", json=body)
        assert response.status_code == status and response.json()["ok"] is False, (body, response.text)
    plain = api.post("/capture", json={"content": "Not a pattern at all"}).json()["id"]
    bulk = api.post("/patterns/resolve", json={"ids": [plain, "nope"], "action": "dismiss"}).json()
    assert bulk == {"ok": True, "action": "dismiss", "resolved": 0, "results": [
        {"id": plain, "ok": False, "error": f"Entry {plain} is not a pattern awaiting confirmation"},
        {"id": "nope", "ok": False, "error": "No entry found with ID: nope"}]}


def test_dismissed_in_bulk_and_never_proposed_again(api):
    pattern = propose(api)
    bulk = api.post("/patterns/resolve", json={"ids": [pattern], "action": "dismiss"}).json()
    assert bulk["resolved"] == 1 and "status:deprecated" in bulk["results"][0]["tags"]
    [run] = api.post("/maintenance/run", params={"job": "patterns"}).json()["runs"]
    assert "proposed" not in run["counts"] and api.get("/list", params={"tag": "auto-insight"}).json() == [
        {**api.get("/list", params={"tag": "auto-insight"}).json()[0], "id": pattern}]
