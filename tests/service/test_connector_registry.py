"""Connectors plug in (issue 59, item 4): a connector is one module of adapters/integrations/ declaring its spec, found
by the registry without being listed anywhere; its spec names exactly the settings it reads, and the domain's checks,
GET /integrations/kinds, the published schema of POST /integrations (one branch per kind) and the dashboard's forms
are made from it. A module dropped into the package (here through its search path) is connected end to end with no
other file touched; a kind registered but not run here (a folder on Lambda) is known and refused in words; and a
start imports no connector's heavy library."""

import ast
import inspect
import subprocess
import sys
import textwrap

import pytest
from fastapi.testclient import TestClient

import second_brain.adapters.integrations as registry
from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.app.handling import Context
from second_brain.bootstrap import connectors
from second_brain.domain.errors import InvalidInput
from second_brain.entrypoints.api.app import create_app
from second_brain.ports.integrations import Unavailable
from second_brain.settings import Settings
from tests.support.brains import make_brain

TOKEN = "owner-token"
# What each kind's mirrors carry as their source, as before the specs (the old domain KINDS map; a mailbox's names
# its provider, from its host).
SOURCES = {"caldav": "calendar", "calendar": "calendar", "imap": "email-gmail", "notes": "notes", "notion": "notion"}
ECHO = '''
"""A connector written by the registry's test, in a folder of its own: its items are the words of its settings."""

from second_brain.domain.integrations import ConnectForm, ConnectorSpec, Field
from second_brain.ports.integrations import Item

SPEC = ConnectorSpec(
    kind="echo", title="Echo", source="echo",
    fields=(Field("words", "Words", "what it mirrors, one memory a word", required=True),
            Field("key", "Key", "what opens it", secret=True, format="password")),
    form=ConnectForm("Connect an echo", "Connect echo", "Each word becomes a memory.", name="Echo"))


class Echo:
    spec = SPEC

    def check(self, settings):
        pass

    def items(self, settings, synced):
        for word in settings.get("words", "").split():
            yield Item(word, f"The echo in the valley answered {word} three times")


def connector(settings):
    return Echo()
'''


@pytest.fixture
def brain(request, tmp_path, clock):
    brain = make_brain("sqlite", request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


@pytest.fixture
def owner(brain) -> Context:
    return Context(brain.team.owner_identity(), "owner")


@pytest.fixture
def echo(tmp_path, monkeypatch):
    """The echo connector's module in a folder on the package's search path, as if it were dropped into it: the
    registry and the imported modules are as they were after the test."""
    folder = tmp_path / "plugged"
    folder.mkdir()
    (folder / "echo.py").write_text(ECHO)
    monkeypatch.setattr(registry, "__path__", [*registry.__path__, str(folder)])
    monkeypatch.delitem(sys.modules, f"{registry.__name__}.echo", raising=False)
    yield folder
    sys.modules.pop(f"{registry.__name__}.echo", None)


@pytest.fixture
def plugged(echo, request, tmp_path, clock):
    """A brain started with the echo module in the package."""
    brain = make_brain("sqlite", request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


def settings_read(module) -> set[str]:
    """The settings a module reads by name: `settings.get("x")`, `settings["x"]`."""
    found = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            target, key = node.func.value, node.args[0] if node.args else None
        elif isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "settings" and isinstance(key, ast.Constant) \
                and isinstance(key.value, str):
            found.add(key.value)
    return found


def test_every_connector_declares_exactly_the_settings_it_reads():
    found = registry.found()
    assert [r.spec.kind for r in found] == ["caldav", "calendar", "imap", "notes", "notion"]
    for registered in found:
        spec, module = registered.spec, sys.modules[registered.module]
        assert settings_read(module) == spec.names, spec.kind  # any other setting is refused, none is unread
        assert [f.name for f in spec.fields] == list(dict.fromkeys(f.name for f in spec.fields)), spec.kind
        assert all(f.secret for f in spec.fields if f.format == "password"), spec.kind  # a hidden field is sealed
        assert set(spec.one_of) <= spec.names, spec.kind
        if spec.provider_from:  # the source is named from a setting the log keeps
            assert spec.provider_from in spec.names - spec.secrets, spec.kind
        made = registered.make(Settings())
        assert made.spec is spec
    assert {r.spec.kind: r.spec.secrets for r in found} == {
        "caldav": {"password"}, "calendar": {"url"}, "imap": {"password"}, "notes": set(), "notion": {"token"}}
    assert [r.spec.kind for r in found if r.spec.local] == ["notes"]
    host = {"host": "imap.gmail.com"}
    assert {r.spec.kind: r.spec.source_of(host) for r in found} == SOURCES
    assert [r.spec.kind for r in found if r.spec.watched] == ["notes"]


def test_the_brain_runs_the_registered_connectors_and_a_local_one_only_on_a_machine(tmp_path):
    here = connectors(Settings(data_dir=tmp_path))
    assert sorted(here) == ["caldav", "calendar", "imap", "notes", "notion"]
    assert not any(isinstance(c, Unavailable) for c in here.values())
    on_lambda = connectors(Settings(data_dir=tmp_path), folders=False)
    assert sorted(on_lambda) == sorted(here) and isinstance(on_lambda["notes"], Unavailable)
    assert [kind for kind, c in on_lambda.items() if isinstance(c, Unavailable)] == ["notes"]


def test_a_kind_registered_but_not_run_here_is_known_and_refused_in_words(brain, owner):
    brain.integrations.connectors["notes"] = Unavailable(brain.integrations.connectors["notes"].spec)
    with pytest.raises(InvalidInput) as unknown:
        brain.integrations.connect(owner, "nope", "Nope", {})
    assert unknown.value.message == "Unknown integration kind: nope (one of: caldav, calendar, imap, notes, notion)"
    with pytest.raises(InvalidInput) as refused:
        brain.integrations.connect(owner, "notes", "Vault", {"path": "/tmp"})
    assert refused.value.message == "Integrations of kind notes are not available here"
    kinds = {k["kind"]: k for k in ops.integration_kinds(brain, owner)["kinds"]}
    assert not kinds["notes"]["available"] and kinds["imap"]["available"]
    with pytest.raises(InvalidInput) as stray:
        brain.integrations.connect(owner, "calendar", "Cal", {"url": "https://calendar.example.com/a.ics", "x": "1"})
    assert stray.value.message == "A calendar integration takes no x (it takes url)"


def test_the_kinds_answer_and_the_published_schema_have_one_entry_per_kind(brain):
    with TestClient(create_app(brain, TOKEN), base_url="http://127.0.0.1:8787") as client:
        answer = client.get("/integrations/kinds", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        schema = client.get("/openapi.json").json()
    assert answer["ok"] is True
    kinds = {k["kind"]: k for k in answer["kinds"]}
    assert list(kinds) == ["caldav", "calendar", "imap", "notes", "notion"]
    imap = kinds["imap"]
    assert (imap["title"], imap["source"], imap["local"], imap["available"]) == ("Mailbox (IMAP)", "email", False, True)
    assert [f["name"] for f in imap["fields"]] == ["host", "username", "password", "mailbox", "security", "port"]
    assert [f["label"] for f in imap["fields"]] == ["IMAP server", "User name", "Password (an app password)",
                                                    "Folder or label", "Connection", "Port (if not the usual one)"]
    assert imap["fields"][4]["choices"][0] == {"value": "tls", "label": "TLS (port 993)"}
    assert imap["form"] == {"title": "Connect a mailbox", "button": "Connect mailbox", "intro": imap["form"]["intro"],
                            "name": "Mail", "name_placeholder": "Brain label"}
    assert kinds["notes"]["local"] and kinds["notion"]["one_of"] == ["database", "page"]

    body = schema["paths"]["/integrations"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["kind", "settings"]
    assert body["properties"]["kind"]["enum"] == list(kinds)
    branches = {b["properties"]["kind"]["const"]: b["properties"]["settings"] for b in body["oneOf"]}
    assert list(branches) == list(kinds)  # one branch per kind
    for kind, settings in branches.items():
        fields = kinds[kind]["fields"]
        assert list(settings["properties"]) == [f["name"] for f in fields] and not settings["additionalProperties"]
        assert settings.get("required", []) == [f["name"] for f in fields if f["required"]], kind
    assert branches["imap"]["properties"]["security"]["enum"] == ["tls", "starttls", "none"]
    assert branches["imap"]["properties"]["port"]["pattern"] == "^[0-9]{1,5}$"
    assert branches["notes"]["properties"]["path"]["pattern"] == "^/"
    assert branches["notion"]["oneOf"] == [{"required": ["database"]}, {"required": ["page"]}]
    assert "(a secret)" in branches["calendar"]["properties"]["url"]["description"]
    assert set(body["properties"]["settings"]["properties"]) == {n for s in branches.values() for n in s["properties"]}
    assert "/integrations/kinds" in schema["paths"]


def test_a_connector_module_dropped_into_the_package_is_found_served_published_and_connected(plugged):
    """The ≤ 2 files claim: the echo module (written by this test) and nothing else."""
    assert [r.spec.kind for r in registry.found()] == ["caldav", "calendar", "echo", "imap", "notes", "notion"]
    assert plugged.integrations.connectors["echo"].spec.title == "Echo"
    with TestClient(create_app(plugged, TOKEN), base_url="http://127.0.0.1:8787") as client:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        kinds = {k["kind"]: k for k in client.get("/integrations/kinds", headers=auth).json()["kinds"]}
        schema = client.get("/openapi.json").json()
        connected = client.post("/integrations", headers=auth, json={
            "kind": "echo", "name": "Valley", "settings": {"words": "heron kestrel", "key": " sesame "}}).json()
        stray = client.post("/integrations", headers=auth, json={"kind": "echo", "settings": {"path": "/"}})
        unknown = client.post("/integrations", headers=auth, json={"kind": "nope", "settings": {}})
    assert kinds["echo"]["fields"][0] == {"name": "words", "label": "Words", "required": True, "secret": False,
                                          "help": "what it mirrors, one memory a word", "format": "text",
                                          "pattern": "", "choices": [], "placeholder": ""}
    assert kinds["echo"]["form"]["button"] == "Connect echo" and kinds["echo"]["available"]
    body = schema["paths"]["/integrations"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "echo" in body["properties"]["kind"]["enum"]
    [branch] = [b["properties"]["settings"] for b in body["oneOf"] if b["properties"]["kind"]["const"] == "echo"]
    assert branch["required"] == ["words"] and branch["properties"]["key"]["description"] == "what opens it (a secret)"
    assert connected["ok"] and connected["sync"]["created"] == 2, connected
    integration = connected["integration"]
    assert integration["source"] == "echo" and integration["settings"] == {
        "words": "heron kestrel", "key": "(secret, kept sealed)"}
    assert plugged.integrations.secrets.get(integration["id"]) == {"key": " sesame "}  # a secret as typed
    assert stray.status_code == 400
    assert stray.json()["error"] == "A echo integration takes no path (it takes key, words)"
    assert unknown.json()["error"] == ("Unknown integration kind: nope (one of: caldav, calendar, echo, imap, notes, "
                                       "notion)")


def test_a_module_that_is_half_a_connector_or_repeats_a_kind_stops_the_start(echo):
    (echo / "half.py").write_text("SPEC = None\n\ndef connector(settings):\n    return None\n")
    with pytest.raises(TypeError, match="half is half a connector"):
        registry.found()
    (echo / "half.py").write_text(ECHO)  # a second echo
    sys.modules.pop(f"{registry.__name__}.half", None)
    try:
        with pytest.raises(TypeError, match="both declare the kind echo"):
            registry.found()
    finally:
        sys.modules.pop(f"{registry.__name__}.half", None)


def test_a_start_imports_no_connector_library_until_a_connector_needs_it(tmp_path):
    """icalendar and notion-client take tens of milliseconds to import, which a cold start that syncs nothing
    should not pay: each connector imports its library where it first calls it."""
    probe = textwrap.dedent(f"""
        import sys
        from second_brain.bootstrap import connectors
        from second_brain.settings import Settings
        made = connectors(Settings(data_dir={str(tmp_path)!r}))
        assert sorted(made) == ["caldav", "calendar", "imap", "notes", "notion"], sorted(made)
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("icalendar", "recurring_ical_events",
                                                                   "notion_client")))
    """)
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "[]"
