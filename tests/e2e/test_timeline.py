"""GET /timeline over HTTP: the audit feed newest first, paged by cursor, filtered, scoped to the caller."""

import json

import httpx

SECRET = "SECRET-KESTREL-2290"


def test_timeline_pages_filters_and_scopes(server, api):
    bob_token = api.post("/team/members", json={"name": "Bob", "role": "member"}).json()["token"]
    bob = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {bob_token}"}, timeout=30)
    private = bob.post("/capture", json={"content": f"Bob's {SECRET} plan", "workspace": "personal"}).json()["id"]
    one = api.post("/capture", json={"content": "Tea is in the left cupboard", "tags": ["home"]}).json()["id"]
    two = api.post("/capture", json={"content": "Coffee beans go in the freezer"}).json()["id"]
    assert api.post("/append", json={"id": one, "addition": "Green tea too"}).json()["ok"]
    assert api.post("/link", json={"source_id": one, "target_id": two}).json()["ok"]

    answer = api.get("/timeline").json()
    assert answer["ok"] is True and answer["order"] == "newest_first" and answer["next_cursor"] is None
    items = answer["timeline"]
    assert [i["position"] for i in items] == sorted((i["position"] for i in items), reverse=True)
    assert {i["stream"]["kind"] for i in items} == {"memory", "edge", "team"}
    assert private not in json.dumps(answer) and SECRET not in json.dumps(answer)
    assert "Tea is in" not in json.dumps(answer)  # never a memory's text
    bobs = bob.get("/timeline").json()["timeline"]
    assert {i["stream"]["id"] for i in bobs} == {private}  # his own; no team stream for a member
    assert SECRET not in json.dumps(bobs)

    first = api.get("/timeline", params={"limit": 2}).json()
    rest = api.get("/timeline", params={"cursor": first["next_cursor"], "limit": 200}).json()
    assert first["timeline"] + rest["timeline"] == items and rest["next_cursor"] is None

    mine = api.get("/timeline", params={"id": one}).json()["timeline"]
    assert [i["type"] for i in mine][::-1] == ["created", "classified", "appended", "link_created"]
    types = api.get("/timeline", params=[("type", "appended"), ("type", "link_created,created")]).json()["timeline"]
    assert [i["type"] for i in types] == ["link_created", "appended", "created", "created"]
    assert api.get("/timeline", params={"actor": "Bob"}).json()["timeline"] == []  # Bob's events are his own
    newest = items[0]["at"]
    assert {i["at"] for i in api.get("/timeline", params={"after": newest}).json()["timeline"]} == {newest}
    assert api.get("/timeline", params={"after": "2000-01-01", "before": "2000-01-02"}).json()["timeline"] == []

    for params, status, error in (({"id": private}, 404, f"No entry found with ID: {private}"),
                                  ({"id": "nope"}, 404, "No entry found with ID: nope"),
                                  ({"type": "exploded"}, 400, "type: unknown event type exploded"),
                                  ({"after": "yesterday-ish"}, 400, None),
                                  ({"limit": "many"}, 400, "limit must be an integer"),
                                  ({"cursor": "x"}, 400, "cursor must be an integer")):
        response = api.get("/timeline", params=params)
        assert response.status_code == status and response.json()["ok"] is False, params
        assert error is None or response.json()["error"] == error
    assert "after" in api.get("/timeline", params={"after": "yesterday-ish"}).json()["error"]
    assert api.get("/timeline", params={"limit": 100_000}).json()["limit"] == 200
    bob.close()
