"""A team brain over HTTP: the owner, an admin and two members, each with their own token, on a real server."""

import hashlib
import json
import uuid
from dataclasses import dataclass

import anyio
import httpx
import pytest

from tests.e2e.test_durability import files_containing
from tests.e2e.test_mcp import call, error, over_http


@dataclass
class Person:
    id: str
    token: str
    api: httpx.Client


@pytest.fixture
def team(server, api):
    people = {}
    for name, role in (("Ann", "admin"), ("Bob", "member"), ("Cat", "member")):
        answer = api.post("/team/members", json={"name": name, "email": f"{name.lower()}@example.com",
                                                 "role": role})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        client = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {body['token']}"}, timeout=30)
        people[name] = Person(body["member"]["id"], body["token"], client)
    yield people
    for person in people.values():
        person.api.close()


def capture(person: Person, content: str, **fields) -> str:
    answer = person.api.post("/capture", json={"content": content, **fields})
    assert answer.status_code == 200 and answer.json()["ok"], answer.text
    return answer.json()["id"]


def vectorize(api: httpx.Client) -> None:
    while api.post("/vectorize-pending", params={"limit": 500}).json().get("remaining"):
        pass


def test_tokens_are_shown_once_and_only_their_hash_is_kept(server, api, team):
    for person in team.values():
        assert person.api.get("/team/me").json()["me"]["id"] == person.id
        assert files_containing(server.data_dir, person.token.encode()) == []
        assert files_containing(server.data_dir, hashlib.sha256(person.token.encode()).hexdigest().encode())
    listed = api.get("/team/members").json()
    assert {m["name"] for m in listed["members"]} >= {"Ann", "Bob", "Cat"}
    assert all("token" not in m and "token_hash" not in m for m in listed["members"])
    assert httpx.get(server.url + "/count", headers={"Authorization": "Bearer sbm_not-a-member"}).json() == {
        "ok": False, "error": "Unauthorized", "code": "invalid_token"}


def test_roles_decide_who_may_administer(api, team):
    bob, ann = team["Bob"], team["Ann"]
    for method, path, body in (("GET", "/team/members", None), ("POST", "/team/members", {"name": "Eve"}),
                               ("POST", "/team/members/token", {"id": team["Cat"].id}),
                               ("POST", "/team/members/suspend", {"id": team["Cat"].id, "suspended": True}),
                               ("POST", "/team/members/remove", {"id": team["Cat"].id}),
                               ("POST", "/team/workspaces/rename", {"name": "Bob's"}),
                               ("GET", "/team/activity", None), ("PATCH", "/config", {"MMR_LAMBDA": 0.5})):
        answer = bob.api.request(method, path, json=body)
        assert answer.status_code == 403, (path, answer.text)
        assert answer.json()["ok"] is False
    assert ann.api.get("/team/members").status_code == 200
    roster = bob.api.get("/team/roster").json()["teams"][0]["members"]
    assert {"name": "Ann", "role": "admin"}.items() <= next(m for m in roster if m["name"] == "Ann").items()
    assert all("email" not in m and "suspended" not in m for m in roster)
    assert bob.api.post("/team/profile", json={"name": "Robert"}).json()["member"]["name"] == "Robert"
    assert bob.api.post("/team/profile", json={"id": team["Cat"].id, "name": "Kit"}).status_code == 403
    assert api.post("/team/workspaces/rename", json={"name": "Acme"}).json()["workspace"]["name"] == "Acme"
    assert bob.api.get("/team/workspaces").json()["workspaces"][0]["name"] == "Acme"


def test_another_members_private_memory_is_invisible_everywhere(server, api, team):
    bob, cat = team["Bob"], team["Cat"]
    marker = f"zephyrquill{uuid.uuid4().hex[:8]}"
    private = capture(bob, f"My private salary review note {marker} #secret-{marker}")
    vectorize(api)
    assert bob.api.get("/entry", params={"id": private}).json()["entry"]["workspace"] == "personal"
    unknown = str(uuid.uuid4())
    for method, path, fields in (
        ("GET", "/entry", {}), ("GET", "/connections", {}), ("POST", "/append", {"addition": "x"}),
        ("POST", "/update", {"content": "x"}), ("POST", "/forget", {}), ("POST", "/status", {"status": "draft"}),
        ("POST", "/share", {}), ("POST", "/tags", {"add": ["x"]}),
    ):
        def ask(memory_id: str, method: str = method, path: str = path, fields: dict = fields) -> httpx.Response:
            if method == "GET":
                return cat.api.get(path, params={"id": memory_id})
            return cat.api.post(path, json={"id": memory_id, **fields})

        answer, missing = ask(private), ask(unknown)
        assert answer.status_code == missing.status_code == 404, (path, answer.text)
        assert answer.json() == {**missing.json(), "error": missing.json()["error"].replace(unknown, private)}
    for client in (cat.api, team["Ann"].api, api):  # an admin, even the owner, never reads another's personal layer
        assert client.get("/recall", params={"query": marker}).json()["results"] == []
        assert client.get("/entry", params={"id": private}).status_code == 404
    assert marker not in cat.api.get("/recall", params={"query": "salary review"}).text
    assert marker not in cat.api.get("/list").text
    assert marker not in cat.api.get("/tags").text
    assert marker not in cat.api.get("/export").text
    assert cat.api.get("/count").json()["count"] == 0
    # The same words are not a repeat of a note the author cannot see.
    assert cat.api.post("/capture", json={"content": f"My private salary review note {marker}"}).json()["ok"]


def test_sharing_moves_a_memory_and_company_rules_hold(api, team):
    bob, cat, ann = team["Bob"], team["Cat"], team["Ann"]
    memory = capture(bob, "The staging database password rotates every Monday")
    assert cat.api.get("/entry", params={"id": memory}).status_code == 404
    shared = bob.api.post("/share", json={"id": memory, "workspace": "company"}).json()
    assert shared == {"ok": True, "id": memory, "status": "shared", "workspace": "company"}
    assert bob.api.post("/share", json={"id": memory}).json()["status"] == "no_change"
    seen = cat.api.get("/entry", params={"id": memory}).json()["entry"]
    assert (seen["workspace"], seen["actor_name"], seen["can_edit"]) == ("company", "Bob", False)
    assert [e["event"] for e in seen["timeline"]][-1] == "shared"
    listed = cat.api.get("/list", params={"workspace": "company"}).json()
    assert [(e["id"], e["actor_name"]) for e in listed] == [(memory, "Bob")]
    assert cat.api.get("/list", params={"actor": "bob"}).json()[0]["id"] == memory
    for path, body in (("/append", {"id": memory, "addition": "and Thursday"}), ("/forget", {"id": memory}),
                       ("/status", {"id": memory, "status": "deprecated"}),
                       ("/tags", {"id": memory, "add": ["not-mine"]}),
                       ("/share", {"id": memory, "workspace": "personal"})):
        assert cat.api.post(path, json=body).status_code == 403, path
    assert ann.api.post("/append", json={"id": memory, "addition": "and Thursday"}).json()["ok"]
    assert bob.api.post("/share", json={"id": memory, "workspace": "personal"}).json()["status"] == "unshared"
    assert cat.api.get("/entry", params={"id": memory}).status_code == 404
    assert bob.api.get("/entry", params={"id": memory}).json()["entry"]["workspace"] == "personal"


@pytest.mark.model  # found by meaning
def test_a_shared_memory_is_found_by_meaning_by_the_team_and_lost_when_taken_back(api, team):
    bob, cat = team["Bob"], team["Cat"]
    memory = capture(bob, "Our biggest customer churned because invoices arrived late")
    vectorize(api)
    question = {"query": "why did the client leave us"}
    assert cat.api.get("/recall", params=question).json()["results"] == []
    bob.api.post("/share", json={"id": memory})
    assert [r["id"] for r in cat.api.get("/recall", params=question).json()["results"]] == [memory]
    bob.api.post("/share", json={"id": memory, "workspace": "personal"})
    assert cat.api.get("/recall", params=question).json()["results"] == []


def test_capture_defaults_and_links_stay_in_one_workspace(api, team):
    bob = team["Bob"]
    assert bob.api.get("/team/me").json()["me"]["effective_default_share"] == "personal"
    bob.api.post("/team/me/default-share", json={"default": "company"})
    first = capture(bob, "Release train leaves every second Tuesday")
    assert bob.api.get("/entry", params={"id": first}).json()["entry"]["workspace"] == "company"
    second = capture(bob, "My dentist appointment is on Friday", workspace="personal")
    answer = bob.api.post("/link", json={"source_id": first, "target_id": second})
    assert answer.status_code == 400 and answer.json()["code"] == "cross_workspace_link"
    bob.api.post("/team/me/default-share", json={"default": "inherit"})
    api.patch("/config", json={"TEAM_DEFAULT_SHARE": "company"})
    third = capture(bob, "Standup moves to 9:30 from next week")
    assert bob.api.get("/entry", params={"id": third}).json()["entry"]["workspace"] == "company"
    assert bob.api.post("/team/me/default-share", json={"default": "everyone"}).status_code == 400


def test_a_member_never_retires_another_members_company_memory(api, team):
    bob, cat = team["Bob"], team["Cat"]
    old = capture(bob, "The office wifi password is hunter2", workspace="company")
    vectorize(api)
    answer = cat.api.post("/capture", json={"content": "The office wifi password is not hunter2 anymore",
                                            "workspace": "company"}).json()
    assert answer["ok"]
    assert "status:deprecated" not in bob.api.get("/entry", params={"id": old}).json()["entry"]["tags"]


def test_suspension_rotation_and_removal_answer_with_their_codes(server, api, team):
    cat, bob = team["Cat"], team["Bob"]
    assert api.post("/team/members/suspend", json={"id": cat.id, "suspended": True}).json()["member"]["suspended"]
    answer = cat.api.get("/count")
    assert (answer.status_code, answer.json()["code"]) == (401, "suspended")
    api.post("/team/members/suspend", json={"id": cat.id, "suspended": False})
    assert cat.api.get("/count").status_code == 200

    rotated = api.post("/team/members/token", json={"id": cat.id}).json()["token"]
    assert rotated != cat.token
    assert cat.api.get("/count").json()["code"] == "invalid_token"
    assert httpx.get(server.url + "/count", headers={"Authorization": f"Bearer {rotated}"}).status_code == 200

    marker = f"QUOKKA-{uuid.uuid4().hex}"
    private = capture(bob, f"Bob's private plan {marker}", tags=[f"t-{marker.lower()}"])
    # A project's slug names its stream (an identifier the log keeps); its name and description are erased.
    assert bob.api.post("/projects", json={"id": "bobs-plan", "name": f"Plan {marker}",
                                           "description": f"all about {marker}"}).status_code == 201
    public = capture(bob, "Bob's handover notes for the team", workspace="company")
    vectorize(api)
    assert files_containing(server.data_dir, marker.encode())
    removed = api.post("/team/members/remove", json={"id": bob.id}).json()
    assert removed == {"ok": True, "id": bob.id, "removed": True, "erased_memories": 1}
    assert bob.api.get("/count").json()["code"] == "removed"
    for encoded in (marker.encode(), marker.lower().encode()):
        assert files_containing(server.data_dir, encoded) == []
    kept = cat.api.get("/entry", params={"id": public}, headers={"Authorization": f"Bearer {rotated}"}).json()
    assert kept["entry"]["actor_name"] == "Bob"
    taken_back = api.post("/share", json={"id": public, "workspace": "personal"})  # Bob has no personal layer now
    assert taken_back.status_code == 400 and "left the team" in taken_back.json()["error"]
    assert api.get("/entry", params={"id": public}).json()["entry"]["workspace"] == "company"
    assert api.get("/entry", params={"id": private}).status_code == 404
    assert "Bob" not in [m["name"] for m in api.get("/team/members").json()["members"]]


def test_the_activity_feed_names_people_and_never_shows_secrets(api, team):
    bob = team["Bob"]
    secret = f"PRIVATE-{uuid.uuid4().hex}"
    memory = capture(bob, f"shared note {secret}")
    bob.api.post("/share", json={"id": memory})
    api.post("/team/members/suspend", json={"id": team["Cat"].id, "suspended": True})
    feed = api.get("/team/activity", params={"limit": 2}).json()
    assert [item["type"] for item in feed["activity"]] == ["member_suspended", "memory_shared"]
    assert feed["activity"][0]["member_name"] == "Cat" and feed["activity"][1]["author_name"] == "Bob"
    assert feed["total"] == 5 and feed["next_offset"] == 2
    everything = api.get("/team/activity", params={"limit": 500}).text
    assert secret not in everything
    for person in team.values():
        assert person.token not in everything
        assert hashlib.sha256(person.token.encode()).hexdigest() not in everything
    assert api.get("/team/activity", params={"limit": 500}).json()["limit"] == 100


def test_a_members_agent_works_in_their_scope_over_mcp(server, api, team):
    bob, cat = team["Bob"], team["Cat"]
    theirs = capture(cat, "Cat keeps her passport in the blue drawer")

    async def session():
        async with over_http(server, token=bob.token) as client:
            assert json.loads(await call(client, "list_teams"))["teams"][0]["id"] == "company"
            saved = json.loads(await call(client, "remember", content="Quarterly planning is on the 3rd",
                                          workspace="company"))
            assert "No entry found" in await error(client, "get", id=theirs)
            assert "No entry found" in await error(client, "share", id=theirs)
            assert "passport" not in await call(client, "recall", query="passport drawer")
            return saved["id"]

    planned = anyio.run(session)
    assert cat.api.get("/entry", params={"id": planned}).json()["entry"]["actor_name"] == "Bob"

    async def stranger():
        async with over_http(server, token=cat.token) as client:
            return await error(client, "share", id=planned, workspace="personal")

    assert "Only the memory's author or an admin" in anyio.run(stranger)


def test_several_teams_on_one_brain_keep_apart(api, team):
    bob, cat = team["Bob"], team["Cat"]
    ops = api.post("/team/workspaces", json={"name": "Ops", "members": [cat.id]}).json()["workspace"]
    assert [w["name"] for w in cat.api.get("/team/workspaces").json()["workspaces"]] == ["Company", "Ops"]
    assert [w["name"] for w in bob.api.get("/team/workspaces").json()["workspaces"]] == ["Company"]
    on_call = capture(cat, "The pager rotation changes on Mondays", workspace="company", team=ops["id"])
    primary = capture(cat, "Lunch is at noon on Fridays", workspace="company")
    assert bob.api.post("/capture", json={"content": "x", "workspace": "company", "team": ops["id"]}).status_code == 404
    assert bob.api.get("/entry", params={"id": on_call}).status_code == 404
    assert bob.api.get("/entry", params={"id": primary}).json()["entry"]["actor_name"] == "Cat"
    assert [e["id"] for e in cat.api.get("/list", params={"workspace": "company", "team": ops["id"]}).json()] == [
        on_call]
    assert api.post("/team/workspaces/members", json={"id": ops["id"], "member": bob.id, "joined": True}).json()["ok"]
    assert bob.api.get("/entry", params={"id": on_call}).json()["entry"]["workspace"] == "company"
    roster = bob.api.get("/team/roster").json()["teams"]
    assert {t["name"]: sorted(m["name"] for m in t["members"]) for t in roster}["Ops"] == ["Bob", "Cat", "Owner"]
    api.post("/team/workspaces/members", json={"id": ops["id"], "member": bob.id, "joined": False})
    assert bob.api.get("/entry", params={"id": on_call}).status_code == 404
    assert api.post("/team/workspaces/rename", json={"id": ops["id"], "name": "Operations"}).json()[
        "workspace"] == {"id": ops["id"], "name": "Operations"}
    feed = [item["type"] for item in api.get("/team/activity").json()["activity"]]
    assert feed[:5] == ["workspace_renamed", *["membership_changed"] * 3, "team_created"]


def test_projects_live_in_a_workspace_and_a_shared_slug_is_narrowed_by_it(api, team):
    bob, cat = team["Bob"], team["Cat"]
    assert bob.api.post("/projects", json={"id": "roadmap", "name": "Team roadmap", "workspace": "company"}
                        ).json()["project"]["layer"] == "company"
    assert cat.api.post("/projects", json={"id": "roadmap", "name": "My roadmap"}).status_code == 201
    assert [p["layer"] for p in cat.api.get("/projects", params={"workspace": "company"}).json()["projects"]] == [
        "company"]
    assert bob.api.get("/projects", params={"workspace": "personal"}).json()["projects"] == []
    ambiguous = cat.api.patch("/projects/roadmap", json={"description": "x"})
    assert ambiguous.status_code == 400 and "more than one workspace" in ambiguous.json()["error"]
    narrowed = cat.api.patch("/projects/roadmap", params={"workspace": "personal"}, json={"description": "mine"})
    assert narrowed.json()["project"] | {"layer": "personal", "name": "My roadmap", "description": "mine"} == \
        narrowed.json()["project"]
    assert cat.api.delete("/projects/roadmap", params={"workspace": "company"}).json()["deleted"]
    assert bob.api.get("/projects").json()["projects"] == []


def test_what_leaves_a_callers_scope_leaves_their_exports_timelines_and_feed(api, team):
    bob, cat, ann = team["Bob"], team["Cat"], team["Ann"]
    first = capture(bob, "The release train leaves every second Tuesday at ten", workspace="company")
    second = capture(bob, "Release notes are written by the on-call engineer", workspace="company")
    assert bob.api.post("/link", json={"source_id": first, "target_id": second}).json()["ok"]
    assert len(cat.api.get("/export").json()["edges"]) == 1
    bob.api.post("/share", json={"id": first, "workspace": "personal"})
    assert cat.api.get("/export").json()["edges"] == []  # the link's far end is private again

    original = capture(bob, "The wifi password at the cabin is on the fridge.")
    similar = bob.api.post("/capture", json={"content": "You can find the cabin wifi password on the fridge."})
    flagged = similar.json()
    assert flagged.get("warning") == "similar" and flagged["matchId"] == original, flagged
    bob.api.post("/share", json={"id": flagged["id"]})
    names = [e["payload"].get("match_id") for e in cat.api.get("/entry", params={"id": flagged["id"]}).json()[
        "entry"]["timeline"] if e["event"] == "duplicate_suspected"]
    assert names == [None]  # Bob's private original is not named to Cat
    assert [e["payload"]["match_id"] for e in bob.api.get("/entry", params={"id": flagged["id"]}).json()["entry"][
        "timeline"] if e["event"] == "duplicate_suspected"] == [original]

    ops = api.post("/team/workspaces", json={"name": "Ops", "members": [cat.id]}).json()["workspace"]
    on_call = capture(cat, "The pager goes to whoever deployed last", workspace="company", team=ops["id"])
    cat.api.post("/share", json={"id": on_call, "workspace": "personal"})
    assert on_call not in ann.api.get("/team/activity", params={"limit": 100}).text  # Ann is not in Ops
    assert on_call in api.get("/team/activity", params={"limit": 100}).text  # the owner is in every team


def test_a_company_default_lands_in_personal_for_someone_in_no_team(api):
    loner = api.post("/team/members", json={"name": "Lone", "teams": []}).json()
    client = httpx.Client(base_url=str(api.base_url), headers={"Authorization": f"Bearer {loner['token']}"})
    with client:
        assert client.get("/team/workspaces").json()["workspaces"] == []
        client.post("/team/me/default-share", json={"default": "company"})
        memory = client.post("/capture", json={"content": "Notes to self"}).json()["id"]
        assert client.get("/entry", params={"id": memory}).json()["entry"]["workspace"] == "personal"
        refused = client.post("/capture", json={"content": "For the team", "workspace": "company"})
        assert refused.status_code == 400
