"""Integrations over HTTP against a real notes folder: first sync, an edit and a delete upstream, the 409 on a
mirror, disconnect, and a sync that stops halfway and is taken up again."""

import time
from pathlib import Path

import pytest

from .conftest import Server
from .killed import kill_mid_sync, resume

# Not watching its folders: each test says when a sync runs, and counts what it did.
pytestmark = pytest.mark.server_env(BRAIN_WATCH_FOLDERS="false")


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def vault(tmp_path) -> Path:
    folder = tmp_path / "vault"
    write(folder, "Pricing.md", "---\ntags: [sales]\n---\n# Pricing floor\n\nThe floor is 40 euros a seat, see "
                                "[[Renewals]].\n")
    write(folder, "projects/Renewals.md", "Renewals are due every March. #contracts\n")
    write(folder, ".obsidian/workspace.md", "not a note")
    return folder


def connect(api, vault: Path) -> dict:
    answer = api.post("/integrations", json={"kind": "notes", "name": "Vault", "settings": {"path": str(vault)}})
    assert answer.status_code == 200, answer.text
    return answer.json()


def mirrors(api) -> dict[str, dict]:
    rows = api.get("/list", params={"n": 50}).json()
    return {row["content"].split("\n")[0]: row for row in rows if row["source"] == "notes"}


def test_a_notes_folder_is_mirrored_kept_up_to_date_and_disconnected(api, vault):
    connected = connect(api, vault)
    integration = connected["integration"]
    assert connected["sync"] == {"created": 2, "updated": 0, "removed": 0, "unchanged": 0, "failed": 0,
                                 "complete": True, "error": None}
    assert (integration["kind"], integration["mirrors"], integration["connected"]) == ("notes", 2, True)
    found = mirrors(api)
    assert set(found) == {"Pricing floor", "Renewals"}  # the hidden .obsidian folder is no note
    assert set(found["Pricing floor"]["tags"]) >= {"sales"} and "contracts" in found["Renewals"]["tags"]
    # the wikilink is an edge between the two mirrors
    linked = api.get("/connections", params={"id": found["Pricing floor"]["id"]}).json()
    assert [c["id"] for c in linked["connections"]] == [found["Renewals"]["id"]]
    # found by words like any memory
    hits = api.get("/recall", params={"query": "floor euros seat"}).json()
    assert found["Pricing floor"]["id"] in [h["id"] for h in hits["results"]]

    # a mirror cannot be edited or forgotten here: 409, saying where to change it
    pricing = found["Pricing floor"]["id"]
    for path, body in (("/update", {"id": pricing, "content": "floor is 50"}),
                       ("/append", {"id": pricing, "addition": "and more"}),
                       ("/forget", {"id": pricing})):
        refused = api.post(path, json=body)
        assert refused.status_code == 409, (path, refused.text)
        assert refused.json()["ok"] is False and "managed mirror of notes" in refused.json()["error"]
        assert "Pricing.md" in refused.json()["error"]  # the link back to the original

    # an edit upstream: the same memory, revised, its timeline showing the sync
    write(vault, "Pricing.md", "---\ntags: [sales, pricing]\n---\n# Pricing floor\n\nThe floor is 45 euros a seat.\n")
    sync = api.post("/integrations/sync", json={"id": integration["id"]}).json()["sync"]
    assert (sync["created"], sync["updated"], sync["removed"], sync["unchanged"]) == (0, 1, 0, 1)
    entry = api.get("/entry", params={"id": pricing}).json()["entry"]
    assert "45 euros" in entry["content"] and "pricing" in entry["tags"]
    timeline = api.get("/timeline", params={"id": pricing}).json()["timeline"]
    assert [e["type"] for e in timeline].count("synced") == 2, timeline
    # syncing again changes nothing
    again = api.post("/integrations/sync", json={"id": integration["id"]}).json()["sync"]
    assert (again["created"], again["updated"], again["removed"]) == (0, 0, 0)

    # a delete upstream: the mirror goes
    (vault / "projects/Renewals.md").unlink()
    sync = api.post("/integrations/sync", json={"id": integration["id"]}).json()["sync"]
    assert sync["removed"] == 1
    assert set(mirrors(api)) == {"Pricing floor"}
    assert api.get("/entry", params={"id": found["Renewals"]["id"]}).status_code == 404

    listed = api.get("/integrations").json()["integrations"]
    assert [(x["id"], x["mirrors"], x["last_error"]) for x in listed] == [(integration["id"], 1, None)]

    # disconnect, keeping the mirrors: ordinary memories from then on, editable here
    gone = api.post("/integrations/disconnect", json={"id": integration["id"]}).json()
    assert gone == {"ok": True, "id": integration["id"], "disconnected": True, "kept": 1}
    assert api.get("/entry", params={"id": pricing}).json()["entry"]["managed_by"] is None  # released
    assert api.post("/update", json={"id": pricing, "content": "The floor is 50 euros a seat."}).status_code == 200
    assert api.get("/integrations").json()["integrations"][0]["connected"] is False
    refused = api.post("/integrations/sync", json={"id": integration["id"]})
    assert refused.status_code == 400 and "disconnected" in refused.json()["error"]


def test_the_same_folder_is_not_connected_twice_while_connected(api, vault):
    first = connect(api, vault)["integration"]["id"]
    again = api.post("/integrations", json={"kind": "notes", "name": "Again", "settings": {"path": str(vault)}})
    assert again.status_code == 400 and f"already connected as Vault ({first})" in again.json()["error"]
    assert len(api.get("/integrations").json()["integrations"]) == 1
    api.post("/integrations/disconnect", json={"id": first})
    assert connect(api, vault)["integration"]["id"] != first  # once disconnected, it may be connected again


def test_disconnecting_can_forget_the_mirrors(api, vault):
    integration = connect(api, vault)["integration"]
    ids = [row["id"] for row in mirrors(api).values()]
    gone = api.post("/integrations/disconnect", json={"id": integration["id"], "forget_mirrors": True}).json()
    assert gone["forgotten"] == 2
    assert mirrors(api) == {} and all(api.get("/entry", params={"id": i}).status_code == 404 for i in ids)


def test_bad_settings_are_refused_in_words_and_connect_nothing(api, tmp_path):
    for settings, words in (({}, "settings.path"), ({"path": "relative/dir"}, "absolute"),
                            ({"path": str(tmp_path / "missing")}, "No folder")):
        refused = api.post("/integrations", json={"kind": "notes", "settings": settings})
        assert refused.status_code == 400 and words in refused.json()["error"], refused.text
    unknown = api.post("/integrations", json={"kind": "fax", "settings": {}})
    assert unknown.status_code == 400
    assert api.get("/integrations").json()["integrations"] == []


def test_a_folder_that_goes_away_is_an_error_in_words_not_a_removal(api, vault):
    integration = connect(api, vault)["integration"]
    moved = vault.rename(vault.with_name("elsewhere"))
    sync = api.post("/integrations/sync", json={"id": integration["id"]}).json()["sync"]
    assert sync["complete"] is False and "cannot be read" in sync["error"] and sync["removed"] == 0
    assert len(mirrors(api)) == 2  # nothing removed for a folder that could not be read
    listed = api.get("/integrations").json()["integrations"][0]
    assert "cannot be read" in listed["last_error"]
    moved.rename(vault)
    assert api.post("/integrations/sync", json={"id": integration["id"]}).json()["sync"]["error"] is None


def test_a_served_brain_picks_up_changes_to_the_folder_as_they_happen(tmp_path, vault):
    """`brain serve` watches each connected folder (by default): an edit, a new note and a deleted one reach the
    brain within seconds, with no sync asked for."""
    watching = Server(tmp_path / "watching").start()
    try:
        with watching.client() as api:
            picked_up(api, vault)
    finally:
        watching.stop()


def picked_up(api, vault: Path) -> None:
    connect(api, vault)
    write(vault, "Pricing.md", "---\ntags: [sales]\n---\n# Pricing floor\n\nThe floor is 55 euros a seat.\n")
    write(vault, "New idea.md", "Sell the harbour crane cables by the metre.\n")
    (vault / "projects/Renewals.md").unlink()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = mirrors(api)
        if set(found) == {"Pricing floor", "New idea"} and "55 euros" in found["Pricing floor"]["content"]:
            break
        time.sleep(0.3)
    assert set(found) == {"Pricing floor", "New idea"}, found
    assert "55 euros" in found["Pricing floor"]["content"]


def test_a_note_deleted_and_made_again_is_mirrored_again(api, vault):
    integration = connect(api, vault)["integration"]["id"]
    renewals = vault / "projects/Renewals.md"
    text = renewals.read_text()
    renewals.unlink()
    assert api.post("/integrations/sync", json={"id": integration}).json()["sync"]["removed"] == 1
    renewals.write_text(text)  # restored from the trash
    assert api.post("/integrations/sync", json={"id": integration}).json()["sync"]["created"] == 1
    assert set(mirrors(api)) == {"Pricing floor", "Renewals"}


def test_what_the_folder_cannot_vouch_for_is_never_removed(api, vault, tmp_path):
    """An emptied (or unmounted) folder, a note grown past 1 MB, a note behind a link out of the folder, a note with
    more tags than a memory holds: none removes a mirror or stops the others."""
    integration = connect(api, vault)["integration"]["id"]
    outside = tmp_path / "secret.md"
    outside.write_text("The server's own secret")
    (vault / "linked.md").symlink_to(outside)
    (vault / "tagged.md").write_text("Many tags " + " ".join(f"#t{n}" for n in range(100)) + "\n")
    (vault / "Pricing.md").write_text("x" * 1_000_001)
    sync = api.post("/integrations/sync", json={"id": integration}).json()["sync"]
    assert (sync["created"], sync["removed"], sync["error"]) == (1, 0, None), sync
    found = mirrors(api)
    assert "Pricing floor" in found and "The server's own secret" not in str(found)  # kept; the link not followed
    upstream = [t for t in found["tagged"]["tags"] if t[0] == "t" and t[1:].isdigit()]
    assert upstream == [f"t{n}" for n in range(64)]  # the first 64 of its hundred (and the brain's own beside them)
    for path in vault.rglob("*"):
        if path.is_file() or path.is_symlink():
            path.unlink()
    emptied = api.post("/integrations/sync", json={"id": integration}).json()["sync"]
    assert emptied["removed"] == 0 and "nothing was removed" in emptied["error"]
    assert len(mirrors(api)) == 3


def test_a_sync_killed_halfway_is_finished_by_the_next_without_a_duplicate(tmp_path):
    total = 300
    vault = tmp_path / "many"
    for n in range(total):
        write(vault, f"note-{n:03}.md", f"# Standup {n:03}\n\nShipped fix number {n} to the harbour crane.\n")
    env = {"BRAIN_WATCH_FOLDERS": "false"}
    kill_mid_sync(tmp_path / "brain", env, lambda api: api.post("/integrations", json={
        "kind": "notes", "name": "Many", "settings": {"path": str(vault)}}))
    titles = resume(tmp_path / "brain", env, total, "notes")
    assert sorted(titles) == [f"Standup {n:03}" for n in range(total)]  # each once
