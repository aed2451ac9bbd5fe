"""Projects over HTTP: the registry, the project parameter on capture, list and recall."""


def test_project_registry_lifecycle(api):
    created = api.post("/projects", json={"name": "SignPath", "description": "Code signing", "aliases": ["Signing"]})
    assert created.status_code == 201
    project = created.json()["project"]
    assert (project["id"], project["name"], project["aliases"], project["status"], project["layer"]) == (
        "signpath", "SignPath", ["signing"], "active", "personal")
    assert project["updated_at"] is None and isinstance(project["created_at"], int)

    again = api.post("/projects", json={"name": "SignPath"})
    assert (again.status_code, again.json()) == (409, {"ok": False, "error": 'project "signpath" already exists'})

    patched = api.patch("/projects/signpath", json={"status": "archived", "description": "Windows installer"})
    assert patched.json()["project"]["status"] == "archived" and patched.json()["project"]["updated_at"]
    assert api.get("/projects").json() == {"projects": []}
    [listed] = api.get("/projects", params={"include_archived": 1}).json()["projects"]
    assert listed["description"] == "Windows installer"

    assert api.delete("/projects/signpath").json() == {"ok": True, "deleted": True}
    assert api.delete("/projects/signpath").status_code == 404


def test_project_validation(api):
    assert api.post("/projects", json={"name": "  "}).status_code == 400
    assert api.post("/projects", json={"name": "x", "id": "Bad Slug!"}).status_code == 400
    assert api.post("/projects", json={"name": "x" * 121}).status_code == 400
    assert api.post("/projects", json={"name": "x", "aliases": ["kind:episodic"]}).status_code == 400
    assert api.post("/projects", json={"name": "x", "aliases": [f"a{n}" for n in range(17)]}).status_code == 400
    assert api.post("/projects", json={"name": "Second Brain!"}).json()["project"]["id"] == "second-brain"
    assert api.patch("/projects/second-brain", json={"status": "paused"}).status_code == 400
    assert api.patch("/projects/nope", json={"status": "archived"}).status_code == 404


def test_the_project_parameter_on_capture_list_and_recall(api):
    tagged = api.post("/capture", json={"content": "Renew the code signing certificate", "project": "signpath"}).json()
    assert tagged["tags"] == ["project:signpath", "kind:semantic"]
    [auto] = api.get("/projects", params={"counts": 1}).json()["projects"]
    assert (auto["id"], auto["count"]) == ("signpath", 1)
    api.patch("/projects/signpath", json={"aliases": ["certificates"]})
    alias = api.post("/capture", json={"content": "Certificate expires in June", "tags": ["certificates"]}).json()
    api.post("/capture", json={"content": "Unrelated certificate of the boat"})

    listed = {e["id"] for e in api.get("/list", params={"project": "signpath"}).json()}
    assert listed == {tagged["id"], alias["id"]}
    recalled = {r["id"]
                for r in api.get("/recall", params={"query": "certificate", "project": "signpath"}).json()["results"]}
    assert recalled == {tagged["id"], alias["id"]}

    unknown = api.get("/list", params={"project": "nope"})
    assert unknown.status_code == 404
    assert unknown.json() == {"ok": False, "error": 'unknown project "nope"', "known_projects": ["signpath"]}
    assert api.get("/recall", params={"query": "x", "project": "nope"}).status_code == 404
    bad = api.post("/capture", json={"content": "x", "project": "Not A Slug"})
    assert bad.status_code == 400 and api.get("/count").json() == {"count": 3}
    assert api.post("/capture", json={"content": "x", "tags": ["project:Also Bad!"]}).status_code == 400


def test_concurrent_captures_into_a_new_project_all_land(api):
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    def capture(n: int) -> int:
        with httpx.Client(base_url=str(api.base_url), headers=dict(api.headers), timeout=30) as client:
            return client.post("/capture", json={"content": f"race note {n}", "project": "racing"}).status_code

    with ThreadPoolExecutor(6) as pool:
        assert list(pool.map(capture, range(12))) == [200] * 12
    [project] = api.get("/projects", params={"counts": 1}).json()["projects"]
    assert (project["id"], project["count"]) == ("racing", 12)
