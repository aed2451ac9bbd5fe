"""GET /graph over HTTP against a real server: nodes and edges for the dashboard, its parameters and errors."""

import httpx


def capture(api, content, tags=(), workspace=None):
    body = {"content": content, "tags": list(tags)} | ({"workspace": workspace} if workspace else {})
    return api.post("/capture", json=body).json()["id"]


def link(api, source, target, kind="relates_to"):
    assert api.post("/link", json={"source_id": source, "target_id": target, "type": kind}).json()["ok"]


def test_the_graph_of_a_small_brain(api):
    hub = capture(api, "The Atlas launch plan", ["project:atlas"])
    spokes = [capture(api, text) for text in ("Our cat prefers the blue cushion", "Quarterly tax filing is due",
                                                "The boiler was serviced in March")]
    digest = capture(api, "A digest of the launch", ["synthesized"])
    pattern = capture(api, "A recurring theme of launches", ["auto-insight"])
    for other in (*spokes, digest, pattern):
        link(api, hub, other)
    link(api, spokes[0], spokes[1])

    graph = api.get("/graph").json()
    assert graph["ok"] is True and graph["seed"] is None
    ids = [n["id"] for n in graph["nodes"]]
    assert ids[0] == hub and set(ids) == {hub, *spokes}  # the digest and the pattern are no nodes
    assert all({e["source_id"], e["target_id"]} <= set(ids) for e in graph["edges"])
    assert len(graph["edges"]) == 4
    edge = graph["edges"][0]
    assert set(edge) == {"source_id", "target_id", "type", "weight", "provenance", "created_at"}
    assert (edge["type"], edge["provenance"], edge["weight"]) == ("relates_to", "explicit", 1.0)
    node = next(n for n in graph["nodes"] if n["id"] == hub)
    assert (node["label"], node["workspace"], node["actor_name"], node["degree"]) == (
        "The Atlas launch plan", "personal", None, 3)

    around = api.get("/graph", params={"seed": spokes[2], "limit": 2}).json()
    assert [n["id"] for n in around["nodes"]] == [spokes[2], hub] and len(around["edges"]) == 1
    assert [n["id"] for n in api.get("/graph", params={"project": "atlas", "limit": 1}).json()["nodes"]] == [hub]
    assert api.get("/graph", params={"limit": "100000"}).status_code == 200  # clamped to the ceiling


def test_company_nodes_name_their_author(server, api):
    bob_token = api.post("/team/members", json={"name": "Bob"}).json()["token"]
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {bob_token}"}) as bob:
        shared = capture(bob, "The handbook lives in the wiki", workspace="company")
        private = capture(bob, "Bob's private note")
    mine = capture(api, "The owner's note on the handbook")
    graph = api.get("/graph", params={"workspace": "company"}).json()
    assert [(n["id"], n["workspace"], n["actor_name"]) for n in graph["nodes"]] == [(shared, "company", "Bob")]
    every = {n["id"] for n in api.get("/graph").json()["nodes"]}
    assert every == {shared, mine} and private not in every


def test_graph_errors(api):
    memory = capture(api, "a memory")
    digest = capture(api, "a digest", ["synthesized"])
    cases = [
        ({"limit": "0"}, 400, "limit must be at least 1"),
        ({"limit": "-3"}, 400, "limit must be at least 1"),
        ({"limit": "many"}, 400, "limit must be an integer"),
        ({"workspace": "everyone"}, 400, "workspace must be personal or company"),
        ({"seed": "no-such-memory"}, 404, "No entry found with ID: no-such-memory"),
        ({"seed": memory, "workspace": "company"}, 404, f"No entry found with ID: {memory}"),
        ({"seed": digest}, 400, None),
        ({"team": "company-nope", "workspace": "company"}, 404, None),
    ]
    for params, status, message in cases:
        answer = api.get("/graph", params=params)
        assert answer.status_code == status, (params, answer.text)
        assert answer.json()["ok"] is False
        if message:
            assert answer.json()["error"] == message, params
    unknown = api.get("/graph", params={"project": "nope"})
    assert unknown.status_code == 404 and unknown.json()["known_projects"] == []
    assert unknown.json()["error"] == 'unknown project "nope"'
