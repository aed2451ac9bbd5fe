"""The memory graph over HTTP: link, unlink, connections, and what forgetting does to edges."""

import pytest


def capture(api, content, tags=()):
    return api.post("/capture", json={"content": content, "tags": list(tags)}).json()["id"]


def settle(api) -> None:
    """Let the indexer finish, so the inferred links it makes are in place before the test looks."""
    for _ in range(100):
        if not api.post("/vectorize-pending").json()["remaining"]:
            return
    raise AssertionError("indexing never finished")


def test_link_connections_unlink(api):
    old = capture(api, "The meeting is on Tuesday")
    new = capture(api, "Our cat prefers the blue cushion")  # unrelated: no inferred link between them
    settle(api)
    linked = api.post("/link", json={"source_id": new, "target_id": old, "type": "supersedes"})
    assert linked.json() == {"ok": True, "source_id": new, "target_id": old, "type": "supersedes"}
    again = api.post("/link", json={"source_id": new, "target_id": old, "type": "supersedes"})
    assert again.status_code == 200  # idempotent

    [connection] = api.get("/connections", params={"id": old}).json()["connections"]
    assert connection["id"] == new and connection["content"] == "Our cat prefers the blue cushion"
    assert (connection["type"], connection["label"], connection["weight"], connection["provenance"]) == (
        "supersedes", "Supersedes", 1.0, "explicit")
    assert isinstance(connection["linkedAt"], int)
    assert api.get("/connections", params={"id": old, "type": "relates_to"}).json()["connections"] == []

    assert api.post("/unlink", json={"source_id": old, "target_id": new}).json() == {"ok": True, "deleted": 1}
    assert api.post("/unlink", json={"source_id": old, "target_id": new}).json() == {"ok": True, "deleted": 0}
    assert api.get("/connections", params={"id": old}).json()["connections"] == []


def test_relates_to_is_undirected_and_stored_in_canonical_order(api):
    a, b = sorted([capture(api, "first note"), capture(api, "second note")])
    response = api.post("/link", json={"source_id": b, "target_id": a}).json()
    assert (response["source_id"], response["target_id"], response["type"]) == (a, b, "relates_to")
    assert [c["id"] for c in api.get("/connections", params={"id": b}).json()["connections"]] == [a]


def test_connections_are_capped_at_eight_strongest_and_skip_deprecated(api):
    hub = capture(api, "hub")
    spokes = [capture(api, f"spoke {n}") for n in range(10)]
    for spoke in spokes:
        api.post("/link", json={"source_id": hub, "target_id": spoke})
    api.post("/status", json={"id": spokes[0], "status": "deprecated"})
    found = api.get("/connections", params={"id": hub}).json()["connections"]
    assert len(found) == 8 and spokes[0] not in {c["id"] for c in found}


def test_link_errors(api):
    a = capture(api, "an episodic memory", ["kind:episodic"])
    b = capture(api, "a fact", ["kind:semantic"])
    cases = [
        ({"source_id": a, "target_id": a}, 400, "Cannot link an entry to itself", None),
        ({"source_id": a}, 400, "Missing or empty target_id", None),
        ({"source_id": a, "target_id": b, "type": "befriends"}, 400, None, None),
        ({"source_id": a, "target_id": "missing"}, 404, "No entry found with ID: missing", None),
        ({"source_id": a, "target_id": b, "type": "follows"}, 400, None, "kind_not_allowed"),
    ]
    for body, status, error, code in cases:
        response = api.post("/link", json=body)
        assert response.status_code == status, (body, response.text)
        payload = response.json()
        assert payload["ok"] is False
        if error:
            assert payload["error"] == error
        if code:
            assert payload["code"] == code
    assert api.get("/connections").status_code == 400
    assert api.get("/connections", params={"id": "missing"}).status_code == 404


def test_forgetting_a_memory_removes_its_edges_for_good(server, api):
    a, b = capture(api, "keeps"), capture(api, "goes")
    api.post("/link", json={"source_id": a, "target_id": b})
    api.post("/forget", json={"id": b})
    assert api.get("/connections", params={"id": a}).json()["connections"] == []
    server.stop()
    from .conftest import run_cli

    assert run_cli("replay", "--data-dir", str(server.data_dir)).returncode == 0
    server.start()
    with server.client() as again:
        assert again.get("/connections", params={"id": a}).json()["connections"] == []


def test_recall_hops_bring_in_linked_memories_and_say_how(api):
    match = capture(api, "The Zephyr launch is planned for March")
    linked = capture(api, "Budget approved by the finance committee")
    api.post("/link", json={"source_id": linked, "target_id": match, "type": "caused_by"})
    settle(api)
    direct = api.get("/recall", params={"query": "Zephyr launch"}).json()["results"]
    assert [r["id"] for r in direct] == [match] and direct[0]["hop"] == 0
    expanded = api.get("/recall", params={"query": "Zephyr launch", "hops": 1}).json()["results"]
    by_id = {r["id"]: r for r in expanded}
    assert set(by_id) == {match, linked}
    hop = by_id[linked]
    assert (hop["hop"], hop["via_type"], hop["via_provenance"], hop["related_to"]) == \
        (1, "caused_by", "explicit", match)
    assert isinstance(hop["linked_at"], int) and hop["score"] == 60.0  # seed 100 x 0.6 x weight 1
    filtered = api.get("/recall", params={"query": "Zephyr launch", "hops": 1, "tag": "nope"}).json()["results"]
    assert filtered == []


@pytest.mark.model  # links are inferred from meaning
def test_indexing_infers_links_between_close_memories(api):
    first = capture(api, "I am allergic to peanuts")
    second = capture(api, "I have a peanut allergy")
    unrelated = capture(api, "The train to Lyon leaves at noon")
    settle(api)
    [edge] = api.get("/connections", params={"id": second}).json()["connections"]
    assert (edge["id"], edge["type"], edge["provenance"]) == (first, "relates_to", "inferred")
    assert 0.75 <= edge["weight"] < 1.0
    assert api.get("/connections", params={"id": unrelated}).json()["connections"] == []
