"""Isolation on every path, on every backend: the owner, an admin and a member each ask every REST route and MCP
tool about another member's private memories, and about a company memory they did not write.

The answer for a private memory is what an id that never existed gets (404, the same body); a company memory
they may read but not change answers 403 to a member and lets an admin through. Run through the REST app over
ASGI and the MCP tools in-process, on SQLite and on the OpenSearch read model and vector index.
"""

import uuid

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp.server.mcpserver.exceptions import ToolError

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app.handling import Context
from second_brain.domain.team import token_hash
from second_brain.entrypoints.api.app import create_app
from second_brain.entrypoints.mcp import build_mcp
from tests.support.brains import make_brain
from tests.support.push import p256dh

OWNER_TOKEN = "isolation-owner-token"
SECRET = "zanzibarite"


@pytest.fixture(params=["sqlite", "opensearch"])
def brain(request, tmp_path, clock):
    brain = make_brain(request.param, request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


@pytest.fixture
def world(brain):
    """Bob's private memories (linked, anchored, a task, in a project) and a company memory of his, plus a memory
    of each other person's own to point links at."""
    owner = Context(brain.team.owner_identity(), "setup")
    tokens = {"owner": OWNER_TOKEN}
    for name, role in (("Ann", "admin"), ("Bob", "member"), ("Cat", "member")):
        tokens[name] = brain.team.add_member(owner, name, role=role)["token"]
    app = create_app(brain, OWNER_TOKEN)
    with TestClient(app) as client:
        def api(who: str) -> "Caller":
            return Caller(client, tokens[who])

        bob = api("Bob")
        assert bob.post("/projects", json={"id": "bob-secret", "name": f"Plan {SECRET}"}).status_code == 201
        private = bob.post("/capture", json={"content": f"Bob's {SECRET} plan for the reorg", "tags": ["task"],
                                             "project": "bob-secret", "when": "2099-01-01"}).json()["id"]
        other = bob.post("/capture", json={"content": f"More about {SECRET} budgets"}).json()["id"]
        assert bob.post("/link", json={"source_id": private, "target_id": other}).json()["ok"]
        company = bob.post("/capture", json={"content": "Company handbook lives in the wiki",
                                             "workspace": "company"}).json()["id"]
        own = {who: api(who).post("/capture", json={"content": f"{who}'s own note about lunch"}).json()["id"]
               for who in ("owner", "Ann", "Cat")}
        bob.post("/vectorize-pending", params={"limit": 100})
        yield {"api": api, "tokens": tokens, "private": private, "other": other, "company": company, "own": own}


class Caller:
    """One person's requests over the shared client: their token on each request, so two people's calls can
    interleave in one test."""

    def __init__(self, client: TestClient, token: str) -> None:
        self.client, self.token = client, token

    def request(self, method: str, path: str, **kwargs):
        return self.client.request(method, path, headers={"Authorization": f"Bearer {self.token}"}, **kwargs)

    def get(self, path: str, **kwargs):
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs):
        return self.request("POST", path, **kwargs)

    def patch(self, path: str, **kwargs):
        return self.request("PATCH", path, **kwargs)


ID_ROUTES = (  # method, path, body or query for a memory id
    ("GET", "/entry", lambda i, own: {"params": {"id": i}}),
    ("GET", "/connections", lambda i, own: {"params": {"id": i}}),
    ("POST", "/append", lambda i, own: {"json": {"id": i, "addition": "more"}}),
    ("POST", "/update", lambda i, own: {"json": {"id": i, "content": "rewritten"}}),
    ("POST", "/status", lambda i, own: {"json": {"id": i, "status": "draft"}}),
    ("POST", "/tags", lambda i, own: {"json": {"id": i, "add": ["leaked"]}}),
    ("POST", "/share", lambda i, own: {"json": {"id": i, "workspace": "company"}}),
    ("POST", "/due/snooze", lambda i, own: {"json": {"id": i, "until": "2099-06-01"}}),
    ("POST", "/due/clear", lambda i, own: {"json": {"id": i}}),
    ("POST", "/loops/resolve", lambda i, own: {"json": {"id": i, "action": "done"}}),
    ("POST", "/patterns/resolve", lambda i, own: {"json": {"id": i, "action": "confirm"}}),
    ("POST", "/link", lambda i, own: {"json": {"source_id": own, "target_id": i}}),
    ("POST", "/unlink", lambda i, own: {"json": {"source_id": i, "target_id": own}}),
    ("POST", "/forget", lambda i, own: {"json": {"id": i}}),
)


@pytest.mark.parametrize("who", ["owner", "Ann", "Cat"])
def test_another_members_private_memory_answers_like_one_that_never_existed(world, who):
    api, private, own = world["api"](who), world["private"], world["own"][who]
    unknown = str(uuid.uuid4())
    for method, path, request in ID_ROUTES:
        answer, missing = (api.request(method, path, **request(i, own)) for i in (private, unknown))
        assert answer.status_code == missing.status_code == (200 if path == "/unlink" else 404), (path, answer.text)
        assert answer.text == missing.text.replace(unknown, private), path
    for method in ("PATCH", "DELETE"):
        answer = api.request(method, "/projects/bob-secret", json={"name": "x"} if method == "PATCH" else None)
        assert answer.status_code == 404 and "bob-secret" not in answer.json().get("known_projects", []), answer.text

    reads = {
        "/list": {}, "/recall": {"query": SECRET}, "/tags": {"counts": "1"}, "/stats": {}, "/due": {},
        "/loops": {}, "/export": {}, "/projects": {}, "/connections": {"id": own}, "/count": {},
    }
    for path, params in reads.items():
        answer = api.get(path, params=params)
        assert answer.status_code == 200, (path, answer.text)
        shown = str(answer.json()["results"]) if path == "/recall" else answer.text  # it echoes the query
        assert SECRET not in shown and private not in shown and "bob-secret" not in shown, path
    found = {r["id"] for r in api.get("/recall", params={"query": f"{SECRET} reorg plan", "topK": 20}
                                      ).json()["results"]}
    assert found.isdisjoint({private, world["other"]})
    counted = api.get("/count").json()["count"]
    assert counted == len(api.get("/list", params={"n": 100}).json())  # their own memories and the company's


def test_a_company_memory_is_readable_by_all_but_changed_only_by_its_author_or_an_admin(world):
    company, cat = world["company"], world["api"]("Cat")
    seen = cat.get("/entry", params={"id": company}).json()["entry"]
    assert (seen["workspace"], seen["actor_name"], seen["can_edit"]) == ("company", "Bob", False)
    for method, path, request in ID_ROUTES:
        if path in ("/entry", "/connections", "/link", "/unlink"):
            continue
        body = request(company, world["own"]["Cat"])
        if path == "/share":
            body["json"]["workspace"] = "personal"
        answer = cat.request(method, path, **body)
        assert answer.status_code == 403, (path, answer.text)
        assert answer.json()["ok"] is False
    ann = world["api"]("Ann")
    assert ann.post("/append", json={"id": company, "addition": "and in the drive"}).json()["ok"]
    assert ann.post("/status", json={"id": company, "status": "canonical"}).json()["ok"]


@pytest.mark.parametrize("who", ["owner", "Ann", "Cat"])
def test_every_mcp_tool_keeps_to_the_callers_scope(brain, world, who):
    identity = (brain.team.owner_identity() if who == "owner"
                else brain.team.member_identity(token_hash(world["tokens"][who])))
    mcp = build_mcp(brain, lambda: identity)
    private, own = world["private"], world["own"][who]

    async def outcome(tool: str, **arguments) -> str:
        try:
            return await answered(tool, **arguments)
        except ToolError as exc:
            return f"error: {exc}"

    async def answered(tool: str, **arguments) -> str:
        result = await mcp.call_tool(tool, arguments)
        return " ".join(getattr(part, "text", "") for part in result.content)

    async def session() -> None:
        for tool, arguments in (
            ("get", {"id": private}), ("append", {"id": private, "addition": "x"}),
            ("update", {"id": private, "content": "x"}), ("set_status", {"id": private, "status": "draft"}),
            ("share", {"id": private}), ("forget", {"id": private}), ("connections", {"id": private}),
            ("link", {"source_id": own, "target_id": private}), ("unlink", {"source_id": private, "target_id": own}),
        ):
            unknown = str(uuid.uuid4())
            got = await outcome(tool, **arguments)
            missing = await outcome(tool, **{k: unknown if v == private else v for k, v in arguments.items()})
            assert got == missing.replace(unknown, private), tool
            assert f"No entry found with ID: {private}" in got or tool == "unlink", (tool, got)
        for tool, arguments in (("recall", {"query": SECRET}), ("list_recent", {"n": 50}), ("list_projects", {}),
                                ("list_teams", {}), ("connections", {"id": own})):
            text = await answered(tool, **arguments)
            assert SECRET not in text and private not in text and "bob-secret" not in text, tool

    anyio.run(session)


# -- issue 38: what a member or an admin may not reach (items 5-8, 10, 11) ---------------------------------------------


def test_only_the_owner_decides_where_the_owners_captures_land(world):
    ann, owner = world["api"]("Ann"), world["api"]("owner")
    refused = ann.post("/team/members/default-share", json={"id": "owner", "default": "company"})
    assert (refused.status_code, refused.json()["ok"]) == (403, False)
    assert ann.patch("/config", json={"TEAM_DEFAULT_SHARE": "company"}).status_code == 200  # the members' default
    stored = owner.post("/capture", json={"content": "Owner's plain note about the quarterly numbers"}).json()
    assert (stored["workspace"], stored["visibility"]) == ("personal", "Saved in your personal workspace: only "
                                                                        "you can read it")
    assert world["api"]("Cat").get("/entry", params={"id": stored["id"]}).status_code == 404
    assert owner.get("/team/me").json()["me"]["effective_default_share"] == "personal"
    assert owner.post("/team/me/default-share", json={"default": "inherit"}).status_code == 400
    cat = world["api"]("Cat").post("/capture", json={"content": "Cat's plain note under the team's default"}).json()
    assert (cat["workspace"], cat["team"]) == ("company", "company")  # a member follows it, and is told so
    assert cat["visibility"] == "Shared with the team Company: every member of it can read it"
    assert owner.post("/team/members/default-share", json={"id": "owner", "default": "company"}).status_code == 200


def test_an_admin_changes_only_the_teams_they_belong_to(world):
    owner, ann = world["api"]("owner"), world["api"]("Ann")
    members = {m["name"]: m["id"] for m in owner.get("/team/members").json()["members"]}
    ops = owner.post("/team/workspaces", json={"name": "Ops", "members": [members["Cat"]]}).json()["workspace"]["id"]
    joined = ann.post("/team/workspaces/members", json={"id": ops, "member": members["Ann"], "joined": True})
    assert joined.status_code == 403, joined.text
    assert ann.post("/team/workspaces/rename", json={"id": ops, "name": "Mine now"}).status_code == 403
    assert ann.post("/team/members", json={"name": "Dan", "teams": [ops]}).status_code == 403
    assert ops not in [w["id"] for w in ann.get("/team/workspaces").json()["workspaces"]]
    assert owner.post("/team/workspaces/members", json={"id": ops, "member": members["Ann"],
                                                        "joined": True}).status_code == 200
    assert ann.post("/team/workspaces/rename", json={"id": ops, "name": "Operations"}).status_code == 200
    made = ann.post("/team/workspaces", json={"name": "Ann's own"}).json()["workspace"]
    assert made["members"] == ["Ann"]  # the admin who makes a team is in it, and so may run it


@pytest.mark.parametrize(("name", "status"), [
    ("Owner", 400), ("owner", 400), ("ＯＷＮＥＲ", 400), ("Second Brain", 400), ("me", 400), ("B\u200bob", 400),
    ("\u202eboB", 400), ("Bo\u0000b", 400), ("Cat\u2066", 400), ("ann", 409), ("Ann ", 409), ("ＡＮＮ", 409),
    # issue 62 item 2: look-alike letters and marks nobody sees
    ("\u041ewner", 400), ("\u039fwner", 400), ("Owner\u034f\u034f", 400), ("Owner\u3164", 400),
    ("Owner\ufe0f", 400), ("Owner\u2800", 400), ("Owner\u115f", 400), ("Second Br\u0430in", 400),
    ("0wner", 400), ("\u0391\u039d\u039d", 409)])  # a zero for the O; "ANN" in Greek capitals
def test_a_member_cannot_take_a_name_that_is_reserved_taken_or_hidden(world, name, status):
    cat = world["api"]("Cat")
    answer = cat.post("/team/profile", json={"name": name})
    assert (answer.status_code, answer.json()["ok"]) == (status, False), answer.text
    assert cat.get("/team/me").json()["me"]["name"] == "Cat"
    assert world["api"]("owner").post("/team/members", json={"name": name}).status_code == status


def test_a_shared_memory_shows_nothing_of_its_private_past_on_any_read(world):
    bob, cat = world["api"]("Bob"), world["api"]("Cat")
    memory = bob.post("/capture", json={"content": "Draft of the offsite agenda",
                                        "tags": ["secretprelabel", "confidentialtag"]}).json()["id"]
    assert bob.post("/update", json={"id": memory, "content": "Offsite agenda, second draft",
                                     "tags": ["hushhushtag"]}).json()["ok"]
    assert bob.post("/append", json={"id": memory, "addition": "quiet detail 12345"}).json()["ok"]
    assert bob.post("/update", json={"id": memory, "content": "Offsite agenda", "tags": ["agenda"]}).json()["ok"]
    assert bob.post("/share", json={"id": memory, "workspace": "company"}).json()["ok"]
    for params in ({"id": memory}, {"id": memory, "diff": "1"}):
        seen = cat.get("/entry", params=params).json()["entry"]
        before = [item for item in seen["timeline"] if item["payload"].get("before_shared")]
        assert {"created", "updated", "tags_changed", "appended"} <= {item["event"] for item in before}
        assert all(item["payload"] == {"before_shared": True} for item in before)
        shown = str(seen["timeline"]) + str(seen.get("revisions", ""))
        for secret in ("secretprelabel", "confidentialtag", "hushhushtag", "chars"):
            assert secret not in shown, (params, secret)
    feed = str(cat.get("/timeline", params={"id": memory}).json()["timeline"])
    assert "secretprelabel" not in feed and "characters" not in feed and "before it was shared" in feed


def test_a_member_does_not_rewire_links_between_other_peoples_memories(world):
    bob, cat, ann = world["api"]("Bob"), world["api"]("Cat"), world["api"]("Ann")
    other = bob.post("/capture", json={"content": "Travel policy lives in the handbook",
                                       "workspace": "company"}).json()["id"]
    assert bob.post("/link", json={"source_id": world["company"], "target_id": other}).json()["ok"]
    pair = {"source_id": world["company"], "target_id": other}
    for path in ("/unlink", "/link"):
        answer = cat.post(path, json=pair | ({"type": "caused_by"} if path == "/link" else {}))
        assert (answer.status_code, answer.json()["ok"]) == (403, False), (path, answer.text)
    assert [c["id"] for c in cat.get("/connections", params={"id": other}).json()["connections"]] == [
        world["company"]]
    cats = cat.post("/capture", json={"content": "Cat's take on the handbook", "workspace": "company"}).json()["id"]
    assert cat.post("/link", json={"source_id": cats, "target_id": other}).json()["ok"]  # one end is hers
    assert cat.post("/unlink", json={"source_id": cats, "target_id": other}).json()["deleted"] == 1
    assert ann.post("/unlink", json=pair).json()["deleted"] == 1  # an admin may


def test_importing_someone_elses_id_answers_as_an_unknown_id_does(world):
    cat = world["api"]("Cat")
    backup = {"entries": [{"id": world["private"], "content": "Cat's own note with a colliding id",
                           "created_at": 1_700_000_000_000}]}
    unknown = {"entries": [{**backup["entries"][0], "id": str(uuid.uuid4())}]}
    taken, fresh = cat.post("/import", json=backup).json(), cat.post("/import", json=unknown).json()
    assert {k: v for k, v in taken.items()} == {k: v for k, v in fresh.items()}, taken
    assert taken["imported"] == 1 and taken["results"] == []
    assert SECRET in world["api"]("Bob").get("/entry", params={"id": world["private"]}).text  # Bob's is untouched


def test_who_opened_or_recalled_a_company_memory_is_seen_by_them_and_admins_only(world):
    company, cat, ann, bob = world["company"], world["api"]("Cat"), world["api"]("Ann"), world["api"]("Bob")
    assert cat.get("/entry", params={"id": company}).status_code == 200  # Cat opens it
    cat.get("/recall", params={"query": "company handbook wiki"})

    def readers(api, path):
        answer = api.get(path, params={"id": company}).json()
        items = answer["entry"]["timeline"] if path == "/entry" else answer["timeline"]
        kinds = [(i["event"] if path == "/entry" else i["type"], i["actor_name"]) for i in items]
        return {k for k in kinds if k[0] in ("opened", "recalled")}

    for path in ("/entry", "/timeline"):
        assert ("opened", "Cat") in readers(ann, path), path
        assert ("opened", "Cat") in readers(cat, path), path
        assert not {who for _, who in readers(bob, path)} - {"Bob"}, path  # Bob sees his own reads only


def test_a_removed_members_erasures_are_the_admins_acts(brain, world):
    ann = world["api"]("Ann")
    members = {m["name"]: m["id"] for m in ann.get("/team/members").json()["members"]}
    assert ann.post("/team/members/remove", json={"id": members["Bob"]}).json()["erased_memories"] == 2
    forgotten = [e for e in brain.store.read_all() if type(e.event).__name__ == "MemoryForgotten"]
    assert len(forgotten) == 2 and {e.actor for e in forgotten} == {members["Ann"]}


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:9001/2018-06-01/runtime/invocation/next",
                                      "https://2130706433/wpush", "https://0x7f000001/wpush",
                                      "https://169.254.169.254/latest/meta-data", "https://[::ffff:10.0.0.1]/w",
                                      "https://metadata.google.internal/computeMetadata/v1/"])
def test_a_member_cannot_make_the_brain_post_inside_its_own_network(world, endpoint):
    """Item 9: a push endpoint is where the hourly sender POSTs; nothing on this machine or its network."""
    subscription = {"endpoint": endpoint, "keys": {"p256dh": p256dh(), "auth": "c2VjcmV0LWF1dGgtMTY"}}
    answer = world["api"]("Cat").post("/push/subscribe", json={"subscription": subscription})
    assert (answer.status_code, answer.json()["ok"]) == (400, False), answer.text


def test_a_member_is_told_over_mcp_and_rest_that_someone_else_replaced_their_token(brain, world):
    """Item 12: until Cat replaces it herself, every answer that is an object (and every recall) says who did it."""
    owner = world["api"]("owner")
    members = {m["name"]: m["id"] for m in owner.get("/team/members").json()["members"]}
    handed = owner.post("/team/members/token", json={"id": members["Cat"]}).json()["token"]
    identity = brain.team.member_identity(token_hash(handed))
    assert identity.notice.startswith("Owner replaced your token on ")
    mcp = build_mcp(brain, lambda: identity)

    async def told() -> tuple[str, str]:
        remembered = await mcp.call_tool("remember", {"content": "Cat's note after the token change"})
        recalled = await mcp.call_tool("recall", {"query": "token change"})
        return remembered.content[0].text, recalled.content[0].text

    remembered, recalled = anyio.run(told)
    assert '"notice": "Owner replaced your token on' in remembered
    assert recalled.startswith("Notice: Owner replaced your token on")
    world["tokens"]["Cat"] = handed
    cat = world["api"]("Cat")
    assert cat.get("/team/me").json()["me"]["notice"] == identity.notice
    mine = cat.post("/team/me/token").json()["token"]
    assert cat.get("/team/me").status_code == 401  # the handed token is gone
    world["tokens"]["Cat"] = mine
    me = world["api"]("Cat").get("/team/me").json()["me"]
    assert (me["notice"], me["token_known_to_another"], me["token_made_by"]) == ("", False, "Cat")
    assert brain.team.member_identity(token_hash(mine)).notice == ""
    assert owner.post("/team/me/token").status_code == 400  # the owner's token is the deployment's


def test_an_integration_and_its_mirrors_are_its_owners_alone(world, tmp_path):
    """The owner's notes folder: nobody else lists it, syncs it, disconnects it or reads its mirrors; what they get
    is what an id that never existed gets. A folder on the brain's machine is read with the server's rights, so no
    one but the owner may name one (a member would read the owner's files)."""
    vault = tmp_path / "owner-vault"
    vault.mkdir()
    (vault / "plan.md").write_text(f"The owner's {SECRET} notes\n")
    owner = world["api"]("owner")
    connected = owner.post("/integrations", json={"kind": "notes", "settings": {"path": str(vault)}}).json()
    integration = connected["integration"]["id"]
    [mirror] = [row["id"] for row in owner.get("/list").json() if row["source"] == "notes"]
    unknown = str(uuid.uuid4())
    for who in ("Ann", "Bob", "Cat"):
        caller = world["api"](who)
        assert caller.get("/integrations").json() == {"ok": True, "integrations": []}
        for path, body in (("/integrations/sync", {"id": integration}),
                           ("/integrations/disconnect", {"id": integration, "forget_mirrors": True})):
            theirs, never = caller.post(path, json=body), caller.post(path, json={**body, "id": unknown})
            assert theirs.status_code == never.status_code == 404
            assert theirs.json()["error"].replace(integration, unknown) == never.json()["error"]
        assert caller.get("/entry", params={"id": mirror}).status_code == 404
        assert mirror not in [r["id"] for r in caller.get("/recall", params={"query": SECRET}).json()["results"]]
        refused = caller.post("/integrations", json={"kind": "notes", "settings": {"path": str(vault)}})
        assert refused.status_code == 403 and "owner" in refused.json()["error"]
    assert [x["id"] for x in owner.get("/integrations").json()["integrations"]] == [integration]


# -- issue 62 item 9: each trust boundary of round 3, on both read models --------------------------------------------


class QuotingTriage:
    """A language model's verdicts, scripted: the note it is told of contradicts, or is merged into, a memory, with a
    reason that quotes the note (as models do)."""

    def __init__(self) -> None:
        self.verdicts: dict[str, object] = {}

    def assess(self, content: str, workspace: str):
        from second_brain.domain.capture import Verdict
        return self.verdicts.get(content, Verdict("store"))


def test_a_forgotten_note_leaves_no_words_in_the_memories_that_quoted_it(brain, world):
    """Item 3: its words in a model's reason on the memory it retired, and in a memory it was merged into and
    split out of again ("keep both"), are gone from every read of those memories once it is forgotten."""
    from second_brain.domain.capture import Verdict

    bob = world["api"]("Bob")
    triage = brain.memories.triage = QuotingTriage()
    old = bob.post("/capture", json={"content": "The Falcon go-live date is May 5"}).json()["id"]
    note = "The Falcon go-live date is June 9, vendor ZEPHYRINE slipped"
    triage.verdicts[note] = Verdict("contradiction", old, 0.93, f"'{note}' moves the date",
                                    match_content="The Falcon go-live date is May 5")
    newer = bob.post("/capture", json={"content": note}).json()
    assert newer["resolved_conflict"] == old
    floor = bob.post("/capture", json={"content": "The agency pricing floor is $6k"}).json()["id"]
    folded = "The agency pricing floor is $6k, signed by QUILLFEATHER"
    triage.verdicts[folded] = Verdict("merge", floor, 0.95, "overlap",
                                      "The agency pricing floor is $6k. Signed by QUILLFEATHER.",
                                      match_content="The agency pricing floor is $6k")
    merged = bob.post("/capture", json={"content": folded}).json()
    assert merged["action"] == "merged"
    split = bob.post("/conflicts/answer", json={"conflict": merged["conflict"], "keep": "both"}).json()["stored"]
    bob.post("/vectorize-pending", params={"limit": 100})
    for forgotten in (newer["id"], split):
        assert bob.post("/forget", json={"id": forgotten}).json()["ok"] is True
    reads = [bob.get("/entry", params={"id": m, "diff": "1"}).text for m in (old, floor)]
    reads += [bob.get("/export").text, bob.get("/list").text, bob.get("/timeline").text,
              bob.get("/recall", params={"query": "Falcon go-live ZEPHYRINE"}).text,
              bob.get("/recall", params={"query": "pricing floor QUILLFEATHER"}).text]
    for word in ("ZEPHYRINE", "QUILLFEATHER"):
        assert not any(word in read for read in reads), word
    assert bob.get("/entry", params={"id": floor}).json()["entry"]["content"] == "The agency pricing floor is $6k"


def test_errors_quote_little_of_what_was_sent(world):
    """Item 5: an error names what it refused in at most 40 characters of it, on every route."""
    owner = world["api"]("owner")
    answers = [owner.post("/conflicts/answer", json={"conflict": "x" * 300_000 + "@1", "keep": "both"}),
               owner.post("/integrations", json={"kind": "k" * 100_000, "settings": {}}),
               owner.post("/integrations", json={"kind": "notes", "settings": {"p" * 50_000: 1}}),
               owner.get("/entry", params={"id": "y" * 5_000})]
    for answer in answers:
        assert answer.status_code in (400, 404) and answer.json()["ok"] is False, answer.text[:200]
        assert len(answer.text) < 600, answer.text[:200]


@pytest.mark.parametrize("tag", ["a\u0000b", "line\nbreak", "bell\u0007", "\u202eright", "zero\u200bwidth",
                                 "filler\u3164"])
def test_tags_refuse_what_a_reader_cannot_see(world, tag):
    """Item 6: tags refuse control, bidirectional and zero-width characters, as names do."""
    cat = world["api"]("Cat")
    captured = cat.post("/capture", json={"content": "A note with an odd tag", "tags": [tag],
                                          "workspace": "company"})
    assert (captured.status_code, captured.json()["ok"]) == (400, False), captured.text
    memory = cat.post("/capture", json={"content": "Cat's note to tag later", "workspace": "company"}).json()["id"]
    tagged = cat.post("/tags", json={"id": memory, "add": [tag]})
    assert (tagged.status_code, tagged.json()["ok"]) == (400, False), tagged.text
    assert world["api"]("Ann").get("/entry", params={"id": memory}).json()["entry"]["tags"] == [
        t for t in cat.get("/entry", params={"id": memory}).json()["entry"]["tags"]]
    assert tag not in str(world["api"]("Ann").get("/list").json())


def test_a_device_another_member_registered_stays_theirs(brain, world):
    """Item 7: re-subscribing an endpoint someone else registered is refused; their reminders stay on it."""
    brain.push.resolve = lambda host: ["93.184.216.34"]  # a public address: this suite has no network
    device = {"endpoint": "https://push.example.com/w/cats-phone",
              "keys": {"p256dh": p256dh(), "auth": "MDEyMzQ1Njc4OWFiY2RlZg"}}  # 16 bytes
    assert world["api"]("Cat").post("/push/subscribe", json={"subscription": device}).json()["ok"] is True
    answer = world["api"]("Bob").post("/push/subscribe", json={"subscription": device})
    assert (answer.status_code, answer.json()["ok"]) == (409, False), answer.text
    holders = {d.actor for d in brain.push.state().devices.values()}
    members = {m["name"]: m["id"] for m in world["api"]("owner").get("/team/members").json()["members"]}
    assert holders == {members["Cat"]}


def test_a_notes_folder_is_never_the_whole_disk_a_system_folder_or_the_brains_own(brain, world):
    """Item 8: `/`, a system folder and the brain's data directory (or a folder holding it) are refused."""
    owner = world["api"]("owner")
    for path in ("/", "/etc", "/proc", str(brain.settings.data_dir), str(brain.settings.data_dir.parent)):
        answer = owner.post("/integrations", json={"kind": "notes", "settings": {"path": path}})
        assert (answer.status_code, answer.json()["ok"]) == (400, False), (path, answer.text)
    assert owner.get("/integrations").json()["integrations"] == []
