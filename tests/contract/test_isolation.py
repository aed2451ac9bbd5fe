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
        def api(who: str):
            client.headers["Authorization"] = f"Bearer {tokens[who]}"
            return client

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


ID_ROUTES = (  # method, path, body or query for a memory id
    ("GET", "/entry", lambda i, own: {"params": {"id": i}}),
    ("GET", "/connections", lambda i, own: {"params": {"id": i}}),
    ("POST", "/append", lambda i, own: {"json": {"id": i, "addition": "more"}}),
    ("POST", "/update", lambda i, own: {"json": {"id": i, "content": "rewritten"}}),
    ("POST", "/status", lambda i, own: {"json": {"id": i, "status": "draft"}}),
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
