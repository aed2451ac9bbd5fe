"""The integration framework on a real SQLite brain with a real notes folder: bounded syncs that go on where the
last stopped, a crash mid-sync that the next sync finishes without writing anything twice, replay, and whose
workspace a member's connection writes to."""

import os
import time
import uuid
from pathlib import Path

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app.handling import Context
from second_brain.app.integrations.background import Continuation
from second_brain.app.recall.pipeline import RecallRequest
from second_brain.app.transfer import parse_payload
from second_brain.domain import integrations as i
from second_brain.domain.capture import content_stream
from second_brain.domain.errors import Forbidden, ManagedMirror
from second_brain.domain.events import ContentClaimed, MemoryCaptured, memory_stream
from second_brain.domain.team import token_hash
from second_brain.ports.integrations import Item
from second_brain.ports.read_model import Filters
from tests.support.brains import make_brain


def mirror_id(brain, integration_id: str, external_id: str) -> str:
    """The id a new item's mirror takes in this brain (keyed with its secret)."""
    return i.mirror_id(integration_id, external_id, secret=brain.memories.content_key)


@pytest.fixture
def brain(request, tmp_path, clock):
    brain = make_brain(getattr(request, "param", "sqlite"), request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


@pytest.fixture
def owner(brain) -> Context:
    return Context(brain.team.owner_identity(), "owner")


@pytest.fixture
def vault(tmp_path) -> Path:
    folder = tmp_path / "vault"
    folder.mkdir()
    for n in range(12):
        (folder / f"note-{n:02}.md").write_text(f"Note number {n} about herons\n")
    return folder


def captures(brain, memory_id: str) -> int:
    return sum(isinstance(e.event, MemoryCaptured) for e in brain.store.read_stream(memory_stream(memory_id)))


def test_a_bounded_sync_goes_on_where_the_last_one_stopped(brain, owner, vault):
    connected = brain.integrations.connect(owner, "notes", "Vault", {"path": str(vault)})
    integration_id = connected["integration"]["id"]
    assert connected["sync"]["created"] == 12  # the first sync, in full (the default bound is 500 changes)
    for n in range(12, 24):
        (vault / f"note-{n:02}.md").write_text(f"Note number {n} about herons\n")
    (vault / "note-00.md").unlink()
    runs = [brain.integrations.sync(owner, integration_id, limit=5) for _ in range(4)]
    assert [(r["created"], r["removed"], r["complete"]) for r in runs] == [
        (5, 0, False), (5, 0, False), (2, 1, True), (0, 0, True)]  # removals wait for a full pass
    state = i.fold(brain.store.read_stream(i.integration_stream(integration_id)), integration_id)
    assert len(state.mirrors) == 23 and all(captures(brain, m) == 1 for m in state.mirrors.values())


def test_a_sync_that_crashed_halfway_is_finished_by_the_next_without_writing_twice(brain, owner, vault, monkeypatch):
    integration_id = brain.integrations.connect(owner, "notes", "Vault", {"path": str(vault)})["integration"]["id"]
    for n in range(12):
        (vault / f"note-{n:02}.md").write_text(f"Note number {n} about herons, revised\n")
    store, appended = brain.integrations.store, []

    class Crashing:
        def __getattr__(self, name):
            return getattr(store, name)

        def append(self, events):
            if len(appended) == 5:
                raise SystemExit("the process died")  # not an error a sync handles: the run just stops
            appended.append(events)
            return store.append(events)

    crashing = Crashing()
    for writer in (brain.integrations, brain.memories.streams):  # the sync's writers: the integration, its mirrors
        monkeypatch.setattr(writer, "store", crashing)
    with pytest.raises(SystemExit):
        brain.integrations.sync(owner, integration_id)
    for writer in (brain.integrations, brain.memories.streams):
        monkeypatch.setattr(writer, "store", store)
    finished = brain.integrations.sync(owner, integration_id)
    assert (finished["updated"], finished["unchanged"], finished["complete"]) == (7, 5, True)
    state = i.fold(store.read_stream(i.integration_stream(integration_id)), integration_id)
    for memory_id in state.mirrors.values():
        memory = brain.memories.load(owner, memory_id)[0]
        assert memory.content.endswith("revised") and captures(brain, memory_id) == 1


def test_mirrors_survive_a_replay_and_stay_managed(brain, owner, vault):
    integration_id = brain.integrations.connect(owner, "notes", "Vault", {"path": str(vault)})["integration"]["id"]
    memory_id = mirror_id(brain, integration_id, "note-03.md")
    assert brain.store.rebuild_projections() > 0  # every projection dropped and rebuilt from the log
    row = brain.queries.read_model.get(memory_id, owner.identity.readable)
    assert row is not None and row.source == "notes" and row.content.startswith("note-03")
    memory = brain.memories.load(owner, memory_id)[0]
    assert memory.mirror == integration_id and memory.origin == (vault / "note-03.md").as_uri()
    with pytest.raises(ManagedMirror, match="note-03.md"):
        brain.memories.update(owner, memory_id, "edited here", None)
    with pytest.raises(ManagedMirror):
        brain.memories.forget(owner, memory_id)


def test_a_company_connection_writes_where_the_team_reads_and_a_member_names_no_folder(brain, owner, tmp_path,
                                                                                      vault):
    token = brain.team.add_member(owner, "Bob", role="member")["token"]
    bob = Context(brain.team.member_identity(token_hash(token)), "bob")
    owner = Context(brain.team.owner_identity(), "owner")  # with the roster as it is now
    shared = brain.integrations.connect(owner, "notes", "Team wiki", {"path": str(vault)},
                                        workspace="company")["integration"]
    assert shared["layer"] == "company"
    mirror = brain.memories.load(bob, mirror_id(brain, shared["id"], "note-03.md"))[0]  # the team reads it
    assert mirror.workspace == "company" and mirror.actor == owner.identity.actor_id
    assert [x["id"] for x in brain.integrations.list(bob)] == [shared["id"]]
    with pytest.raises(Forbidden):  # who connected it, or an admin, syncs it
        brain.integrations.sync(bob, shared["id"])
    with pytest.raises(ManagedMirror):  # and nobody edits its mirrors here, an admin neither
        brain.memories.update(owner, mirror.id, "edited", None)
    bob_vault = tmp_path / "bob"
    bob_vault.mkdir()
    with pytest.raises(Forbidden, match="owner"):  # a folder is read with the server's rights: the owner's to name
        brain.integrations.connect(bob, "notes", "His", {"path": str(bob_vault)})
    with pytest.raises(Forbidden, match="admin"):
        brain.integrations.connect(bob, "notes", "His", {"path": str(bob_vault)}, workspace="company")


def test_wikilinks_become_edges_whichever_sync_makes_each_end(brain, owner, tmp_path):
    vault = tmp_path / "linked"
    vault.mkdir()
    integration_id = brain.integrations.connect(owner, "notes", "Linked", {"path": str(vault)})["integration"]["id"]
    (vault / "a.md").write_text("Alpha links to [[z]] and [[m|the middle]]\n")
    (vault / "m.md").write_text("Middle\n")
    (vault / "z.md").write_text("Zulu links back to [[a]]\n")
    ids = {name: mirror_id(brain, integration_id, f"{name}.md") for name in "amz"}

    def neighbours(name: str) -> set[str]:
        return {c["id"] for c in brain.links.connections(owner, ids[name], None)}

    # one note a sync: a's link to z waits for the sync that makes z
    runs = [brain.integrations.sync(owner, integration_id, limit=1) for _ in range(4)]
    assert [r["created"] for r in runs] == [1, 1, 1, 0]
    assert neighbours("a") == {ids["m"], ids["z"]} and neighbours("m") == {ids["a"]}
    assert neighbours("z") == {ids["a"]}
    # a link taken out upstream takes its edge out; one the other note still makes stays; a person's stays
    brain.links.link(owner, ids["m"], ids["z"], "relates_to")
    (vault / "a.md").write_text("Alpha no longer links anything\n")
    (vault / "m.md").write_text("Middle, edited\n")
    brain.integrations.sync(owner, integration_id)
    assert neighbours("a") == {ids["z"]}  # z still links a
    assert neighbours("m") == {ids["z"]}  # the person's edge to z stays


class Versioned:
    """A connector over a dict of items (id → (text, version)) that reads only what its mirror lacks, as the
    mailbox and Notion do: an item at the version its mirror holds is listed unread, at most the budget are read."""

    spec = i.ConnectorSpec("imap", "Versioned", "email", (i.Field("host", "Host"),
                                                          i.Field("token", "Token", secret=True)),
                           i.ConnectForm("Connect", "Connect", "", "Versioned"), provider_from="host")

    def __init__(self) -> None:
        self.upstream: dict[str, tuple[str, str]] = {}
        self.read: list[str] = []
        self.tokens: list[str] = []
        self.broken: set[str] = set()

    def check(self, settings):
        pass

    def items(self, settings, synced):
        self.tokens.append(settings["token"])
        budget = synced.budget
        for external_id, (content, version) in sorted(self.upstream.items()):
            if external_id in self.broken:
                yield Item(external_id, "", failed="this message cannot be read (ValueError)")
            elif synced.version(external_id) == version:
                yield Item(external_id, "", unreadable=True)
            elif budget == 0:
                yield Item(external_id, "", later=True)
            else:
                budget -= 1
                self.read.append(external_id)
                yield Item(external_id, content, url=f"fake://{external_id}/{version}", version=version)


def test_a_connector_reads_only_what_changed_and_at_most_its_budget_a_run(brain, owner):
    fake = Versioned()
    brain.integrations.connectors["imap"] = fake
    fake.upstream = {f"m{n}": (f"Message {n} about herons", "1") for n in range(7)}
    connected = brain.integrations.connect(owner, "imap", "Mail", {"host": "imap.gmail.com", "token": "s3cret"},
                                           )
    integration_id = connected["integration"]["id"]
    assert connected["integration"]["source"] == "email-gmail"
    assert connected["sync"]["created"] == 7 and fake.read == [f"m{n}" for n in range(7)]
    fake.read.clear()
    fake.upstream |= {f"m{n}": (f"Message {n} about herons", "1") for n in range(7, 12)}
    fake.upstream["m0"] = ("Message 0 about herons, moved", "2")  # a new version of one of them
    runs = [brain.integrations.sync(owner, integration_id, limit=4) for _ in range(3)]
    assert [(r["created"], r["updated"], r["complete"]) for r in runs] == [(3, 1, False), (2, 0, True), (0, 0, True)]
    assert sorted(fake.read) == ["m0", "m10", "m11", "m7", "m8", "m9"]  # each read once, the rest listed unread
    # the same words at a new version (a message saved again): noted, not read again next time
    fake.upstream["m1"] = ("Message 1 about herons", "3")
    fake.read.clear()
    assert brain.integrations.sync(owner, integration_id)["unchanged"] == 12 and fake.read == ["m1"]
    fake.read.clear()
    brain.integrations.sync(owner, integration_id)
    assert fake.read == []
    # a run whose budget went on items that turned out unchanged is not complete: the rest waits for the next
    fake.upstream |= {"m2": ("Message 2 about herons", "4"), "m3": ("Message 3 about herons", "4"),
                      "m4": ("Message 4 about herons, edited", "4")}
    runs = [brain.integrations.sync(owner, integration_id, limit=2) for _ in range(2)]
    assert [(r["updated"], r["complete"]) for r in runs] == [(0, False), (1, True)]
    # an item that cannot be read keeps its mirror and is said; the rest goes on, a removal too
    fake.broken = {"m5"}
    fake.upstream["m5"] = ("Message 5 about herons, edited", "9")
    del fake.upstream["m6"]
    report = brain.integrations.sync(owner, integration_id)
    assert (report["failed"], report["removed"]) == (1, 1) and "m5: this message cannot be read" in report["error"]
    assert brain.memories.load(owner, mirror_id(brain, integration_id, "m5"))[0].content == "Message 5 about herons"
    # the token reached the connector at every sync, and is in no event of the log
    assert set(fake.tokens) == {"s3cret"}
    assert not any("s3cret" in str(e.event) for e in brain.store.read_all())
    # a brain whose secret is gone says so in words, and removes nothing
    brain.integrations.secrets.delete(integration_id)
    report = brain.integrations.sync(owner, integration_id)
    assert report["complete"] is False and "token is no longer kept here" in report["error"]
    assert len(i.fold(brain.store.read_stream(i.integration_stream(integration_id)), integration_id).mirrors) == 11


def test_a_mirror_is_judged_as_a_capture_is_but_never_folded_blocked_or_retiring_anything(brain, owner, tmp_path):
    """Capture intelligence on mirrors (issue 47, with the capture-trust rules): a mirror repeating a memory is
    stored and flagged beside it; a mirror contradicting one keeps both and flags the pair (nothing retired); a
    capture repeating a mirror is a repeat of it; a mirror's words give it its time, and new words a new one."""
    typed = brain.memories.capture(owner, "The boiler is serviced every March by Hallam Heating", [], "api")
    wifi = brain.memories.capture(owner, "The office wifi password is heron42", [], "api")
    gate = brain.memories.capture(owner, "The gate code is 4512", [], "api")
    vault = tmp_path / "judged"
    vault.mkdir()
    (vault / "boiler.md").write_text("The boiler is serviced every March by Hallam Heating\n")
    (vault / "wifi.md").write_text("# The office wifi password is kestrel7\n")
    (vault / "gate.md").write_text("# The gate code is 4512\n")
    (vault / "passport.md").write_text("Renew the passport by 15 March 2027\n")
    (vault / "plumber.md").write_text("Call the plumber tomorrow at 9am\n")
    (vault / "old.md").write_text("Lunch with Dana tomorrow at noon\n")
    os.utime(vault / "old.md", (1_560_000_000, 1_560_000_000))  # written in 2019: its tomorrow is long past
    integration_id = brain.integrations.connect(owner, "notes", "Judged", {"path": str(vault)})["integration"]["id"]

    def mirror(name: str):
        return brain.memories.load(owner, mirror_id(brain, integration_id, name))[0]

    boiler = mirror("boiler.md")
    assert boiler.exists and "duplicate-candidate" in boiler.tags  # stored all the same, flagged
    assert brain.memories.load(owner, typed.id)[0].content.startswith("The boiler")  # untouched
    gate_mirror = mirror("gate.md")  # the very words of a memory: flagged beside it, which keeps its claim
    assert "duplicate-candidate" in gate_mirror.tags
    assert brain.memories.capture(owner, "The gate code is 4512", [], "api").id == gate.id
    wifi_mirror = mirror("wifi.md")
    assert "possible-update" in wifi_mirror.tags, wifi_mirror.tags  # the pair flagged for review
    assert not any(t.startswith("status:deprecated") for t in brain.memories.load(owner, wifi.id)[0].tags)
    assert not any(t.startswith("status:") for t in wifi_mirror.tags)  # neither retired
    passport = mirror("passport.md")
    assert passport.when_at is not None and passport.when_kind == "due"  # its words' time, as a capture reads it
    assert mirror("plumber.md").when_at is not None  # "tomorrow", read from when the note was written: now
    assert mirror("old.md").when_at is None  # a 2019 "tomorrow" is history, not a reminder
    claims = brain.store.read_stream(content_stream(passport.workspace, passport.content,
                                                    brain.memories.content_key))
    assert [e.event for e in claims] == [ContentClaimed(passport.id)]  # claimed as a capture claims its text
    again = brain.memories.capture(owner, passport.content, [], "api")
    assert again.verdict.action == "block" and again.id == passport.id  # a repeat of the mirror (its text claimed)
    # new words, a new time; the flag kept through the update
    (vault / "passport.md").write_text("Renew the passport by 20 April 2027\n")
    (vault / "boiler.md").write_text("The boiler is serviced every March by Hallam Heating (since 2019)\n")
    brain.integrations.sync(owner, integration_id)
    moved = mirror("passport.md")
    assert moved.when_at is not None and moved.when_at > passport.when_at
    assert "duplicate-candidate" in mirror("boiler.md").tags


def test_a_request_writes_for_its_time_and_the_rest_follows_off_the_request(brain, owner, vault):
    asked: list[str] = []
    brain.integrations.on_incomplete = asked.append
    brain.integrations.request_seconds = 0.0  # every request out of time after its first write
    connected = brain.integrations.connect(owner, "notes", "Vault", {"path": str(vault)})
    integration_id = connected["integration"]["id"]
    assert (connected["sync"]["created"], connected["sync"]["complete"]) == (1, False)
    assert asked == [integration_id]  # handed on, not left for the hourly run

    continuation = Continuation(brain.integrations.sync_changed)  # as a served brain's
    continuation.start()
    try:
        continuation.ask(integration_id)
        deadline = time.monotonic() + 30
        while brain.integrations.list(owner)[0]["mirrors"] < 12 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        continuation.stop()
    listed = brain.integrations.list(owner)[0]
    assert (listed["mirrors"], listed["complete"], listed["last_error"]) == (12, True, None)


@pytest.mark.parametrize("brain", ["sqlite", "opensearch"], indirect=True)  # issue 62 item 9: on both read models
def test_a_member_cannot_claim_a_mirror_s_id_first(brain, owner, tmp_path):
    """Issue 62: a member who sees a company integration's id and guesses a file name cannot compute its mirror's
    id (it is keyed with the brain's secret), and even a memory already at that id never hides the note: the item
    takes another id and the sync says so."""
    folder = tmp_path / "board"
    folder.mkdir()
    token = brain.team.add_member(owner, "Bob", role="member")["token"]
    bob = Context(brain.team.member_identity(token_hash(token)), "bob")
    owner = Context(brain.team.owner_identity(), "owner")
    shared = brain.integrations.connect(owner, "notes", "Board", {"path": str(folder)}, workspace="company")
    integration_id = shared["integration"]["id"]
    guessed = str(uuid.uuid5(i.NAMESPACE, f"{integration_id}\nboard-minutes.md"))  # what the id used to be
    keyed = mirror_id(brain, integration_id, "board-minutes.md")
    assert keyed != guessed
    def decoy(at: str, content: str):
        return parse_payload({"version": 3, "entries": [{"id": at, "content": content, "tags": [], "source": "api",
                                                         "created_at": 1}]})

    for squatted in (guessed, keyed):  # the old guess, and the keyed id as if it had leaked: his go to stand-ins
        brain.transfer.import_page(bob, decoy(squatted, f"decoy at {squatted}"), 10, 0)
    assert brain.store.read_stream(memory_stream(keyed)) == []
    # Whoever may write at that id (the owner restoring a backup) still cannot hide the note.
    brain.transfer.import_page(owner, decoy(keyed, "an old memory that happens to hold this id"), 10, 0)
    (folder / "board-minutes.md").write_text("# Board minutes\nWe approved the budget.\n")
    report = brain.integrations.sync(owner, integration_id)
    assert report["created"] == 1 and "held by another memory" in report["error"]
    found = brain.recall.recall(owner, RecallRequest("board minutes approved budget", 5,
                                                     Filters(owner.identity.readable)))
    assert any("We approved the budget" in r["content"] for r in found["results"])
    state = i.fold(brain.store.read_stream(i.integration_stream(integration_id)), integration_id)
    assert state.mirrors["board-minutes.md"] not in (guessed, keyed)
