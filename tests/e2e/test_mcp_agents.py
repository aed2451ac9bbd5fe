"""Issue 63: what an agent needs to run a person's week over MCP, driven by the `mcp` package's own client over
streamable HTTP (a real server) and over stdio (`brain mcp` as a subprocess): reminder tools, one time language,
strict arguments, MCP-native answers and prompt errors. The brain's time zone is Europe/Berlin, so a time said
back carries +01:00."""

import json
import os
import re
from contextlib import asynccontextmanager

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from .conftest import BRAIN
from .test_mcp import call, error, over_http

ZONE = {"BRAIN_TIMEZONE": "Europe/Berlin"}
pytestmark = pytest.mark.server_env(**ZONE)
UNIX_MS = re.compile(r"(?<![\d.])1[6-9]\d{11}(?!\d)")  # a Unix ms time (2020-2033), where an ISO time belongs
ISO_BERLIN = re.compile(r"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\+01:00")


@pytest.fixture(params=["http", "stdio"])
def connect(request, tmp_path):
    """A client session factory over one transport."""
    if request.param == "http":
        server = request.getfixturevalue("server")
        return lambda: over_http(server)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")} | ZONE
    params = StdioServerParameters(command=BRAIN[0], args=[*BRAIN[1:], "mcp", "--data-dir", str(tmp_path / "b")],
                                   env=env)

    @asynccontextmanager
    async def stdio():
        async with Client(params, read_timeout_seconds=60) as client:
            yield client
    return stdio


def run(connect, steps):
    async def session():
        async with connect() as client:
            return await steps(client)
    return anyio.run(session)


def test_an_agent_lists_snoozes_and_clears_what_is_due(connect):
    """Item 1: the reminder a note's words set is said back with its undo as a tool call; due lists it with its id
    and its time in the brain's zone; snooze moves it (words accepted), clear_reminder takes it away."""
    async def steps(client):
        saved = json.loads(await call(client, "remember", content="Take Maya to the dentist on Friday at 9"))
        memory_id, reminder = saved["id"], saved["reminder"]
        assert f'call clear_reminder with {{"id": "{memory_id}"}}' in reminder["message"]
        assert ISO_BERLIN.fullmatch(reminder["when_at"]) and reminder["when_at"].endswith("T09:00:00+01:00")
        due = await call(client, "due", days=7)
        assert memory_id in due and "Coming up: " in due and "T09:00:00+01:00 · event" in due
        snoozed = json.loads(await call(client, "snooze", id=memory_id, until="tomorrow at 10"))
        assert snoozed["when_at"].endswith("T10:00:00+01:00")
        assert "T10:00:00+01:00" in await call(client, "due", days=7)
        assert json.loads(await call(client, "clear_reminder", id=memory_id))["cleared"] is True
        assert memory_id not in await call(client, "due", days=30)
        appended = json.loads(await call(client, "append", id=memory_id, addition="Bring the forms",
                                         when="in 3 days"))
        assert ISO_BERLIN.fullmatch(appended["reminder"]["when_at"])
        return [saved, snoozed, appended]

    answers = json.dumps(run(connect, steps))
    assert not UNIX_MS.search(answers) and "POST /" not in answers  # times in ISO, tools instead of routes


def test_every_time_parameter_takes_words_iso_and_unix_ms_and_says_what_it_read(connect):
    """Item 2: after, before, as_of, when and until take ISO 8601, Unix ms or words, read in the brain's zone and
    said back as ISO; a moment the grammar does not know is refused in one sentence that says what it takes."""
    async def steps(client):
        memory_id = json.loads(await call(client, "remember", content="The boiler service is booked",
                                          when="2026-12-24T08:30"))["id"]
        recalled = await call(client, "recall", query="boiler service", after="7d")
        assert re.match(r"Written after 20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\+01:00\.\n\n", recalled), recalled
        assert memory_id in recalled
        assert memory_id not in await call(client, "list_recent", before="last week")
        assert memory_id in await call(client, "list_recent", after="yesterday", before="in 1 hour")
        assert memory_id in await call(client, "list_recent", after=1_600_000_000_000)  # Unix ms, as ever
        assert "boiler" in await call(client, "get", id=memory_id, as_of="now")
        assert "No events" not in await call(client, "timeline", after="1h")
        before = await error(client, "get", id=memory_id, as_of="2020-01-01")
        assert before.startswith(f"get: Memory {memory_id} did not exist yet at 2020-01-01T00:00:00+01:00: it was "
                                 "saved at 20"), before
        brief = (await client.get_prompt("brief")).messages[0].content.text
        assert re.search(r'"day": "20\d\d-\d\d-\d\d"', brief) and not re.search(r'"day": \d', brief)
        refused = await error(client, "recall", query="boiler", after="someday")
        assert refused.startswith("recall: after must be an ISO date") and '"7d"' in refused
        return await error(client, "snooze", id=memory_id, until="whenever")

    assert "until must be" in run(connect, steps)


def test_an_unknown_argument_is_refused_naming_the_one_meant_and_nothing_is_written(connect):
    """Item 3: every schema takes only what it names; an unknown argument is refused with the closest known one,
    before anything runs."""
    async def steps(client):
        tools = (await client.list_tools()).tools
        assert all(t.input_schema.get("additionalProperties") is False for t in tools)
        assert all(t.title and t.title != t.name for t in tools)
        said = [await error(client, "recall", query="pricing", limit=3),
                await error(client, "remember", content="The office wifi is Fieldnote-5G", priority=5),
                await error(client, "list_recent", limit=3),
                await error(client, "get", memory_id="x"),
                await error(client, "forget", id="x", zzz=1)]
        listed = await call(client, "list_recent")
        return said, listed

    said, listed = run(connect, steps)
    assert said == ["recall: unknown argument limit (did you mean topK?).",
                    "remember: unknown argument priority (it takes: content, tags, source, volatility, workspace, "
                    "team, project, when, when_kind, force).",
                    "list_recent: unknown argument limit (did you mean n?).",
                    "get: unknown argument memory_id (did you mean id?).",
                    "forget: unknown argument zzz (it takes: id)."]
    assert "wifi" not in listed  # the refused remember wrote nothing


def test_prompt_errors_are_invalid_params_in_one_sentence(connect):
    """Item 5: a prompt called without its argument, with one it does not take, or with a moment it cannot read
    answers JSON-RPC -32602 in one sentence, never "Internal server error"."""
    async def steps(client):
        errors = []
        for arguments in ({}, {"since": "someday"}, {"since": "7d", "until": "now"}):
            with pytest.raises(MCPError) as raised:
                await client.get_prompt("changes_since", arguments)
            errors.append((raised.value.code, str(raised.value)))
        fine = (await client.get_prompt("changes_since", {"since": "7d"})).messages[0].content.text
        return errors, fine

    errors, fine = run(connect, steps)
    assert [code for code, _ in errors] == [-32602] * 3
    assert "changes_since: since is required." in errors[0][1]
    assert "changes_since: since must be an ISO date" in errors[1][1]
    assert "unknown argument until" in errors[2][1]
    assert "Internal" not in json.dumps(errors) and fine.startswith("Tell me what changed")


def test_changes_since_says_each_change_with_its_memorys_words_and_connections_say_which_way(connect):
    """Item 5: changes_since gives one sentence per change with the memory's first words, leaving the brain's
    bookkeeping (classified, recalled, opened) out unless asked; connections say which way each link goes."""
    async def steps(client):
        old = json.loads(await call(client, "remember", content="The Atlas launch is in February"))["id"]
        new = json.loads(await call(client, "remember", content="Atlas launch moved to March, says Priya"))["id"]
        await call(client, "recall", query="Atlas launch")
        await call(client, "get", id=new)
        await call(client, "link", source_id=new, target_id=old, type="supersedes")
        quiet = (await client.get_prompt("changes_since", {"since": "1h"})).messages[0].content.text
        loud = (await client.get_prompt("changes_since", {"since": "1h", "everything": "yes"})).messages[0].content.text
        seen_from_old = json.loads(await call(client, "connections", id=old))["connections"]
        seen_from_new = json.loads(await call(client, "connections", id=new))["connections"]
        return old, new, quiet, loud, seen_from_old, seen_from_new

    old, new, quiet, loud, seen_from_old, seen_from_new = run(connect, steps)
    assert f"\u201cAtlas launch moved to March, says Priya\u201d (memory {new})." in quiet
    assert f"\u201cThe Atlas launch is in February\u201d (memory {old})." in quiet
    assert f"{new} supersedes {old}" in quiet
    assert not re.search(r"recalled|opened|\(rules\)", quiet)  # no bookkeeping
    assert "(rules)" in loud and "recalled" in loud  # unless asked
    supersedes_old = [c for c in seen_from_old if c["type"] == "supersedes"]
    assert [(c["id"], c["direction"], c["relation"]) for c in supersedes_old] == [
        (new, "incoming", "it supersedes this memory")]
    assert [(c["direction"], c["relation"]) for c in seen_from_new if c["type"] == "supersedes"] == [
        ("outgoing", "this memory supersedes it")]
    assert all(ISO_BERLIN.fullmatch(c["linkedAt"]) for c in seen_from_old + seen_from_new)  # no Unix ms


def test_recall_says_how_far_to_trust_each_result(connect):
    """Item 4: a confirmed fact, a draft that contradicts it and a weak match each say so in words, with the review
    item to settle the pair; a query about nothing held says so first and never shows 100."""
    async def steps(client):
        canonical = json.loads(await call(client, "remember", content="The deploy window is Friday afternoon."))["id"]
        await call(client, "set_status", id=canonical, status="canonical")
        draft = json.loads(await call(client, "remember", content="The deploy window is Thursday afternoon."))
        about = await call(client, "recall", query="when is the deploy window")
        nothing = await call(client, "recall", query="zebra xylophone quantum")
        return canonical, draft, about, nothing

    canonical, draft, about, nothing = run(connect, steps)
    assert draft["status"] == "draft" and draft["kept_canonical"] == canonical
    assert "Confirmed (canonical)" in about and "Draft: not confirmed" in about
    assert f'call answer_conflict with {{"conflict": "{draft["conflict"]}"' in about
    assert about.count("May conflict with") == 2  # each side names the other
    assert re.match(r"Nothing (strong )?found", nothing) and "score 100" not in nothing
    assert all(label == "weak" for label in re.findall(r"score [\d.]+, (\w+) match", nothing))


def test_every_answer_is_data_as_well_as_text(connect):
    """Item 5: each tool publishes an outputSchema and answers with structured content beside its text (times in
    ISO 8601 in the brain's zone), which the SDK client checks against that schema."""
    async def steps(client):
        tools = (await client.list_tools()).tools
        memory_id = json.loads(await call(client, "remember", content="The Lisbon flat is booked for March 3"))["id"]
        answers = {}
        for tool, arguments in (("recall", {"query": "Lisbon flat"}), ("list_recent", {}), ("get", {"id": memory_id}),
                                ("due", {"days": 7}), ("connections", {"id": memory_id})):
            result = await client.call_tool(tool, arguments)
            assert not result.is_error and result.content[0].text, tool
            answers[tool] = result.structured_content
        return tools, memory_id, answers

    tools, memory_id, answers = run(connect, steps)
    assert all(t.output_schema and t.output_schema.get("type") == "object" for t in tools)
    [found] = [r for r in answers["recall"]["results"] if r["id"] == memory_id]
    assert found["match"] in ("strong", "partial", "weak") and ISO_BERLIN.fullmatch(found["created_at"])
    assert answers["list_recent"]["items"][0]["id"] == memory_id and answers["get"]["id"] == memory_id
    assert set(answers["due"]) >= {"overdue", "upcoming"} and answers["connections"]["connections"] == []
    assert not UNIX_MS.search(json.dumps(answers))
