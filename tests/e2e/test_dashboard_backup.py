"""The Backup view in a real browser: the export downloads a JSON file holding the brain's memories (and "as of"
a past moment, the brain as it was then); that file imported into a second brain's dashboard goes page by page
through POST /import with a progress bar to 100%, and the memories arrive; a bad file is refused in a sentence."""

import json
import re
import uuid
from datetime import datetime
from zoneinfo import ZoneInfo

from playwright.sync_api import expect

from .browser import TIMEZONE, TOKEN_KEY, Dashboard, new_context
from .conftest import Server

COUNT = 130  # more than one page of POST /import (the view sends 100 rows a page)


def seed(server: Server) -> dict[str, str]:
    """COUNT memories restored at once (quicker than capturing each), one link, and one captured memory."""
    entries = [{"id": str(uuid.uuid4()), "content": f"Backup note number {n}: the spare key is under pot {n}",
                "tags": ["backup-test"], "created_at": 1_700_000_000_000 + n * 1000,
                "updated_at": 1_700_000_000_000 + n * 1000} for n in range(COUNT)]
    edges = [{"source_id": entries[0]["id"], "target_id": entries[1]["id"], "type": "relates_to", "weight": 1,
              "provenance": "explicit", "created_at": 1_700_000_500_000}]
    with server.client() as api:
        page = api.post("/import", params={"limit": 1000}, json={"entries": entries, "edges": edges}).json()
        assert page["imported"] == COUNT and page["edges_imported"] == 1, page
        captured = api.post("/capture", json={"content": "The boiler was serviced in March"}).json()["id"]
    return {e["id"]: e["content"] for e in entries} | {captured: "The boiler was serviced in March"}


def test_export_downloads_the_memories_and_import_restores_them_elsewhere(dashboard, browser, tmp_path):
    memories = seed(dashboard.server)
    page = dashboard.open("backup")
    dashboard.accessible_light_and_dark()
    page.emulate_media(color_scheme="light")

    with page.expect_download() as download:
        page.get_by_role("button", name="Download backup").click()
    saved = download.value
    today = datetime.now(ZoneInfo(TIMEZONE)).date()  # the person's day, not the test machine's
    assert saved.suggested_filename == f"second-brain-{today.isoformat()}.json"
    path = tmp_path / saved.suggested_filename
    saved.save_as(path)
    backup = json.loads(path.read_text())
    assert {e["id"]: e["content"] for e in backup["entries"]} == memories
    assert len(backup["edges"]) == 1
    expect(page.locator("#export-status")).to_contain_text(f"{COUNT + 1} memories, 1 link, 0 projects")

    # "As of" a moment before anything was written: the brain as it stood then, in a file named for that day.
    page.fill("#export-as-of", "2020-01-02T10:00")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download backup").click()
    assert download.value.suggested_filename == "second-brain-2020-01-02.json"
    download.value.save_as(tmp_path / "then.json")
    then = json.loads((tmp_path / "then.json").read_text())
    assert then["entries"] == [] and then["as_of"]

    # Into a second brain, through its dashboard.
    second = Server(tmp_path / "second").start()
    context = new_context(browser)
    try:
        board = Dashboard(context.new_page(), second)
        other = board.page
        other.set_default_timeout(20_000)
        other.goto(second.url + "/#/backup")
        other.evaluate(f"localStorage.setItem('{TOKEN_KEY}', '{second.token}')")
        other.reload()
        pages = []
        other.on("request", lambda r: "/import?" in r.url and r.method == "POST" and pages.append(r.url))
        other.set_input_files("#import-file", str(path))
        other.get_by_role("button", name="Import").click()
        expect(other.locator("#import-status [role=status]")).to_contain_text("Import complete")
        expect(other.locator("#import-percent")).to_have_text("100%")
        assert other.eval_on_selector("#import-progress", "p => [p.value, p.max]") == [COUNT + 2, COUNT + 2]
        expect(other.locator("#import-counts")).to_contain_text(f"Memories: {COUNT + 1} imported, 0 already here, "
                                                                "0 failed. Links: 1 imported")
        assert [re.search(r"offset=(\d+)", url).group(1) for url in pages] == ["0", "100"]
        with second.client() as api:
            restored = api.get("/export").json()
        assert {e["id"]: e["content"] for e in restored["entries"]} == memories
        assert len(restored["edges"]) == 1
        board.screenshot("backup")
        board.accessible_light_and_dark()
        board.accessible_at_phone_width()

        # Indexed for search by meaning from the view (POST /vectorize-pending until none remain).
        other.get_by_role("button", name="Index them now").click()
        # (the brain's own indexer may have finished first: then there was nothing left to do, and it says so)
        expect(other.locator("#import-status")).to_contain_text(
            re.compile("all found by meaning now|Nothing was waiting"), timeout=90_000)
        with second.client() as api:
            assert api.post("/vectorize-pending").json()["remaining"] == 0
        # Pressed again, it says there was nothing to do (it used to answer nothing at all).
        other.get_by_role("button", name="Index them now").click()
        expect(other.locator("#import-status")).to_contain_text("Nothing was waiting: every memory is already found "
                                                                "by meaning.")

        # The same file again: everything is skipped, nothing doubled.
        other.get_by_role("button", name="Import").click()
        expect(other.locator("#import-counts")).to_contain_text(f"Memories: 0 imported, {COUNT + 1} already here")
        # Nothing new, said so; nothing to index, so no button offering it.
        expect(other.locator("#import-status [role=status]")).to_have_text(
            "Nothing new: everything in this file is already here.")
        expect(other.get_by_role("button", name="Index them now")).to_have_count(0)
        assert not board.errors, board.errors
    finally:
        context.close()
        second.stop()


def test_a_file_that_is_not_a_backup_is_refused_in_a_sentence(dashboard):
    page = dashboard.open("backup")
    page.set_input_files("#import-file", files=[{"name": "notes.json", "mimeType": "application/json",
                                                 "buffer": b"this is not json"}])
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#import-status [role=alert]")).to_contain_text("notes.json is not a JSON backup")
    page.set_input_files("#import-file", files=[{"name": "odd.json", "mimeType": "application/json",
                                                 "buffer": b'{"entries": 5}'}])
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#import-status [role=alert]")).to_have_text(
        "Malformed import payload: entries: Input should be a valid list")
    page.get_by_role("button", name="Import").click()  # (a second time, the file unchanged: the same sentence)
    page.set_input_files("#import-file", files=[])
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#import-status [role=alert]")).to_have_text("Choose a backup file first.")
    # An entry the format refuses is said in words, not as the pattern it failed.
    page.set_input_files("#import-file", files=[{"name": "ids.json", "mimeType": "application/json",
                                                 "buffer": b'{"entries": [{"id": "my note", "content": "x", '
                                                           b'"created_at": 1}]}'}])
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#import-status [role=alert]")).to_have_text(
        "Malformed import payload: entries[0].id: an id is 1-128 letters, digits or _ . : - starting with a letter "
        "or digit, with no spaces")
    with dashboard.server.client() as api:
        assert api.get("/export").json()["entries"] == []  # nothing was written
