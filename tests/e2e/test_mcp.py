"""The MCP server driven by the `mcp` package's own client: over streamable HTTP against a real server
process, and over stdio against `brain mcp` as a subprocess."""

import json
import os
import re

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from .conftest import BRAIN, TOKEN

TOOLS = {"remember", "append", "update", "set_status", "recall", "list_recent", "get", "forget", "link", "unlink",
         "conflicts", "answer_conflict",
         "connections", "share", "list_teams", "list_projects", "timeline", "due", "snooze", "clear_reminder"}


def over_http(server, mode="auto", token=TOKEN):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(f"{server.url}/mcp", http_client=http), mode=mode)


def text(result) -> str:
    return result.content[0].text


async def call(client, tool, **arguments):
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    return text(result)


async def error(client, tool, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return text(result)


def test_an_agent_can_do_everything_it_needs_over_http(server):
    async def session():
        async with over_http(server) as client:
            tools = (await client.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            assert all(len(t.description or "") > 30 for t in tools), "every tool explains itself"
            recall_schema = next(t for t in tools if t.name == "recall").input_schema
            assert recall_schema["required"] == ["query"] and "description" in recall_schema["properties"]["topK"]

            saved = json.loads(await call(client, "remember", content="The pricing floor is $6k per year #work",
                                          project="pricing"))
            assert saved["ok"] is True and {"work", "project:pricing"} <= set(saved["tags"])
            memory_id = saved["id"]
            entry = server_entry(server, memory_id)
            assert entry["source"] == "claude"  # remember defaults the source to claude, /capture to api

            other = json.loads(await call(client, "remember", content="Dana owns the enterprise pricing sheet"))["id"]
            renewal = json.loads(await call(client, "remember", content="Renew the car insurance",
                                            when=1_900_000_000_000))["id"]  # Unix ms, as the tool promises
            assert server_entry(server, renewal)["when_at"] == 1_900_000_000_000
            appended = json.loads(await call(client, "append", id=memory_id, addition="Raised to $7k."))
            assert "Update" in appended["message"]
            found = await call(client, "recall", query="pricing floor", topK=99)  # clamped, not refused
            assert found.startswith('Note: topK 99 is outside 1-20, so 20 was used.\n\n2 memories for "pricing floor"')
            assert memory_id in found and "Raised to $7k" in found
            slipped = await call(client, "recall", query="pricng flor")  # one slip in each word, as a person types
            assert slipped.startswith('2 memories for "pricing floor", best first (no memory holds a word as typed: '
                                      'searched as "pricing floor")') and memory_id in slipped
            assert memory_id in await call(client, "list_recent", n=5, project="pricing")
            assert json.loads(await call(client, "link", source_id=memory_id, target_id=other))["type"] == "relates_to"
            assert other in await call(client, "connections", id=memory_id)
            assert json.loads(await call(client, "unlink", source_id=other, target_id=memory_id))["deleted"] == 1
            status = json.loads(await call(client, "set_status", id=memory_id, status="canonical"))["status"]
            assert status == "canonical"
            assert json.loads(await call(client, "update", id=other, content="Dana owns the pricing sheet"))["ok"]
            assert "pricing" in await call(client, "list_projects")
            assert json.loads(await call(client, "list_teams"))["teams"] == [
                {"id": "company", "name": "Company", "primary": True, "workspace_id": "company"}]
            full = await call(client, "get", id=memory_id)
            assert "The pricing floor is $6k per year\n\n[Update" in full and "status:canonical" in full

            # Errors carry the REST API's messages.
            # A value outside a parameter's enum is refused by its schema, in one sentence (test_mcp_contract.py).
            assert await error(client, "set_status", id=memory_id, status="final") == \
                'set_status: status must be one of "canonical", "draft", "deprecated" (got "final").'
            assert "No entry found with ID: nope" in await error(client, "get", id="nope")
            assert await error(client, "remember", content="x", volatility="Durable") == \
                'remember: volatility must be one of "durable", "state", "volatile" (got "Durable").'
            assert await error(client, "link", source_id=memory_id, target_id=other, type="likes") == \
                ('link: type must be one of "relates_to", "supersedes", "caused_by", "decided", "about_person", '
                 '"part_of_project", "follows" (got "likes").')
            assert await error(client, "share", id=memory_id, workspace="team") == \
                'share: workspace must be one of "personal", "company" (got "team").'

            assert json.loads(await call(client, "forget", id=other))["ok"] is True
            assert "No entry found" in await error(client, "get", id=other)

    anyio.run(session)


def test_older_clients_that_use_the_initialize_handshake_work_too(server):
    async def session():
        async with over_http(server, mode="legacy") as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            memory_id = json.loads(await call(client, "remember", content="Legacy clients still work"))["id"]
            assert memory_id in await call(client, "recall", query="legacy clients")

    anyio.run(session)


def test_long_memories_are_cut_with_a_marker_and_get_returns_them_whole(server):
    long_note = "Quarterly planning notes. " + " ".join(f"Item {n}: review the vendor contract terms."
                                                        for n in range(150))

    async def session():
        async with over_http(server) as client:
            memory_id = json.loads(await call(client, "remember", content=long_note))["id"]
            found = await call(client, "recall", query="vendor contract terms")
            marker = f'[truncated · {len(long_note)} chars total · get("{memory_id}") for full text]'
            assert marker in found and len(found) < len(long_note)
            assert marker in await call(client, "list_recent")
            assert (await call(client, "get", id=memory_id)).endswith(long_note)

    anyio.run(session)


def test_a_long_reply_is_capped_with_a_count_of_what_was_dropped(server):
    with server.client() as api:
        for n in range(20):
            api.post("/capture", json={"content": f"Falcon migration log {n}: " + f"step {n} moved shard data. " * 130})

    async def session():
        async with over_http(server) as client:
            found = await call(client, "recall", query="falcon migration shard", topK=20)
            assert len(found) <= 12_500
            omitted = re.search(r"(\d+) more match(?:es)? omitted", found)
            shown = len(re.findall(r"^\[\d+\] id: ", found, re.MULTILINE))
            assert omitted and shown >= 1 and shown + int(omitted.group(1)) == 20

    anyio.run(session)


def test_mcp_refuses_callers_without_the_token_or_with_a_foreign_host(server):
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    anonymous = httpx.post(f"{server.url}/mcp", json=hello, headers=headers)
    assert anonymous.status_code == 401 and anonymous.json() == {"ok": False, "error": "Unauthorized",
                                                                 "code": "invalid_token"}
    wrong = httpx.post(f"{server.url}/mcp", json=hello, headers={**headers, "Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    rebinding = httpx.post(f"{server.url}/mcp", json=hello,
                           headers={**headers, "Authorization": f"Bearer {TOKEN}", "Host": "evil.example:80"})
    assert rebinding.status_code in (400, 403, 421)


def test_brain_mcp_over_stdio(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    params = StdioServerParameters(command=BRAIN[0], args=[*BRAIN[1:], "mcp", "--data-dir", str(tmp_path / "b")],
                                   env=env)

    async def session():
        async with Client(params, read_timeout_seconds=60) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            memory_id = json.loads(await call(client, "remember", content="Stdio clients get the same brain"))["id"]
            assert memory_id in await call(client, "recall", query="stdio clients")
            assert "Stdio clients get the same brain" in await call(client, "get", id=memory_id)
            assert json.loads(await call(client, "forget", id=memory_id))["ok"] is True

    anyio.run(session)


def server_entry(server, memory_id):
    with server.client() as api:
        return api.get("/entry", params={"id": memory_id}).json()["entry"]

