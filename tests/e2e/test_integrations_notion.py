"""Notion connected to a served brain over HTTP, against a stand-in for Notion's API (tests/support/notion_server.py,
written from Notion's public reference: no Notion server is reachable here). A database's pages and a page's tree
become mirrors (nested blocks read, every list followed past its first 100), followed through an edit and a page
moved to the trash, refused at /update, disconnected both ways; a 429 is waited out, a wrong token or an unshared
database is refused at connect in words, a Notion that fails is an error not a removal, and a brain killed mid-sync
takes it up again without a page mirrored twice."""

import signal
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from second_brain.app.handling import Context
from tests.support.notion_server import (
    NotionServer,
    bookmark,
    bullet,
    callout,
    code,
    column_list,
    divider,
    heading,
    image,
    link_to_page,
    mention,
    numbered,
    paragraph,
    quote,
    table,
    text,
    to_do,
    toggle,
)

from .conftest import Server
from .killed import NO_MODEL


@pytest.fixture
def notion() -> Iterator[NotionServer]:
    fake = NotionServer()
    yield fake
    fake.close()


def environment(notion: NotionServer) -> dict[str, str]:
    # Loopback allowed (the stand-in is on 127.0.0.1); no folders watched; the connector calls the stand-in.
    return {"BRAIN_PUSH_ALLOW_LOOPBACK": "true", "BRAIN_WATCH_FOLDERS": "false", "BRAIN_NOTION_API_URL": notion.url}


@pytest.fixture
def brain(tmp_path, notion) -> Iterator[Server]:
    server = Server(tmp_path / "brain", env=environment(notion)).start()
    yield server
    if server.running:
        server.stop()


@pytest.fixture
def api(brain) -> Iterator[httpx.Client]:
    with brain.client() as client:
        yield client


def connect(api, notion: NotionServer, **settings: str) -> dict:
    answer = api.post("/integrations", json={"kind": "notion", "name": "Wiki",
                                             "settings": {"token": notion.token, **settings}})
    assert answer.status_code == 200, answer.text
    return answer.json()


def sync(api, integration: str) -> dict:
    answer = api.post("/integrations/sync", json={"id": integration})
    assert answer.status_code == 200, answer.text
    return answer.json()["sync"]


def mirrors(api) -> dict[str, dict]:
    """Every memory from Notion, by title (its first line), each title asserted once."""
    found: dict[str, dict] = {}
    for offset in range(0, 10_000, 100):
        rows = api.get("/list", params={"n": 100, "offset": offset}).json()
        for row in rows:
            if row["source"] == "notion":
                title = row["content"].split("\n")[0]
                assert title not in found, f"{title} mirrored twice"
                found[title] = row
        if len(rows) < 100:
            return found
    raise AssertionError("more memories than expected")


def counts(report: dict) -> tuple[int, int, int]:
    return report["created"], report["updated"], report["removed"]


PRICING_BODY = """The floor is [40 euros](https://example.com/price-list) a seat, see Renewals.
# Floor
- Enterprise
  - Above 500 seats
    - [x] Approved by finance
- Startups
1. Ask
2. Offer
Between the lists
1. Again
- [ ] Update the deck
- Why
  Margins fell in Q3.
> Never below the floor
> not even at quarter end
> 💡 Ask Dana first
```python
floor = 40
```
---
| Plan | Floor |
|---|---|
| Team | 40 |
[Price list](https://example.com/price-list)
Left column
Right column"""


def test_a_database_is_mirrored_kept_up_to_date_and_disconnected(api, notion):
    wiki = notion.database("Wiki")
    renewals = notion.page("Renewals", [paragraph("Renewals are due every March.")], database=wiki,
                           tags=["Contracts"])
    # a page of 130 blocks: two pages of blocks
    runbook = notion.page("Runbook", [paragraph(f"Step {n}.") for n in range(1, 131)], database=wiki)
    pricing = notion.page("Pricing floor", [
        paragraph("The floor is ", text("40 euros", "https://example.com/price-list"), " a seat, see ",
                  mention(renewals, "Renewals"), "."),
        heading(1, "Floor"),
        bullet("Enterprise", children=[bullet("Above 500 seats", children=[to_do("Approved by finance",
                                                                                checked=True)])]),
        bullet("Startups"), numbered("Ask"), numbered("Offer"), paragraph("Between the lists"), numbered("Again"),
        to_do("Update the deck"), toggle("Why", children=[paragraph("Margins fell in Q3.")]),
        quote("Never below the floor\nnot even at quarter end"), callout("💡", "Ask Dana first"),
        code("floor = 40", "python"), divider(), table(["Plan", "Floor"], ["Team", "40"]),
        bookmark("https://example.com/price-list", "Price list"), image("https://example.com/chart.png"),
        link_to_page(runbook), column_list([paragraph("Left column")], [paragraph("Right column")]),
    ], database=wiki, tags=["Sales", "Pricing"])
    # and 102 pages more: 105 in all, two pages of query results
    for n in range(102):
        notion.page(f"Note {n:03}", [paragraph(f"Note number {n}.")], database=wiki)

    # the database named by its link, as copied from the browser
    link = f"https://www.notion.so/acme/{wiki.replace('-', '')}?v=0123456789abcdef0123456789abcdef"
    connected = connect(api, notion, database=link)
    integration = connected["integration"]
    assert connected["sync"] == {"created": 105, "updated": 0, "removed": 0, "unchanged": 0, "failed": 0,
                                 "complete": True, "error": None}
    assert notion.count("POST", "/v1/data_sources/", 200) == 2  # the query's 100, then the next_cursor's 5
    assert notion.count("GET", f"/v1/blocks/{runbook}/children", 200) == 2
    # the token is sealed, never shown back
    assert integration["settings"] == {"database": link, "token": "(secret, kept sealed)"}
    assert notion.token not in str(connected) and notion.token not in api.get("/integrations").text

    found = mirrors(api)
    assert len(found) == 105 and api.get("/count").json() == {"count": 105}
    entry = api.get("/entry", params={"id": found["Pricing floor"]["id"]}).json()["entry"]
    assert entry["content"] == "Pricing floor\n\n" + PRICING_BODY
    assert entry["source"] == "notion"
    assert {"notion", "sales", "pricing"} <= set(entry["tags"]) and "Sales" not in entry["tags"]
    assert "contracts" in found["Renewals"]["tags"]
    url = notion.pages[pricing]["url"]
    assert [e["payload"]["url"] for e in entry["timeline"] if e["event"] == "synced"] == [url]
    runbook_text = api.get("/entry", params={"id": found["Runbook"]["id"]}).json()["entry"]["content"]
    assert runbook_text.startswith("Runbook\n\nStep 1.\nStep 2.\n") and runbook_text.endswith("Step 129.\nStep 130.")
    # the mention and the link-to-page block: edges between the mirrors
    linked = api.get("/connections", params={"id": found["Pricing floor"]["id"]}).json()["connections"]
    assert {c["id"] for c in linked} == {found["Renewals"]["id"], found["Runbook"]["id"]}
    hits = api.get("/recall", params={"query": "floor euros seat"}).json()["results"]
    assert found["Pricing floor"]["id"] in [h["id"] for h in hits]

    # a mirror is changed in Notion, not here: 409, naming Notion and the page
    refused = api.post("/update", json={"id": found["Pricing floor"]["id"], "content": "The floor is 50."})
    assert refused.status_code == 409
    assert "managed mirror of notion" in refused.json()["error"] and url in refused.json()["error"]

    # an edit upstream: the same memory revised, its timeline showing the second sync
    notion.set_body(pricing, [paragraph("The floor is 45 euros a seat.")])
    report = sync(api, integration["id"])
    assert (*counts(report), report["unchanged"], report["complete"]) == (0, 1, 0, 104, True)
    entry = api.get("/entry", params={"id": found["Pricing floor"]["id"]}).json()["entry"]
    assert entry["content"] == "Pricing floor\n\nThe floor is 45 euros a seat."
    timeline = api.get("/timeline", params={"id": found["Pricing floor"]["id"]}).json()["timeline"]
    assert [e["type"] for e in timeline].count("synced") == 2, timeline
    assert counts(sync(api, integration["id"])) == (0, 0, 0)  # nothing changed: nothing written

    # a page moved to the trash goes; a new page comes
    notion.trash(renewals)
    notion.page("Onboarding", [paragraph("Laptops ship on day one.")], database=wiki)
    report = sync(api, integration["id"])
    assert counts(report) == (1, 0, 1) and report["complete"] is True
    assert api.get("/entry", params={"id": found["Renewals"]["id"]}).status_code == 404
    hits = api.get("/recall", params={"query": "renewals due every March"}).json()["results"]
    assert found["Renewals"]["id"] not in [h["id"] for h in hits]
    assert "Onboarding" in mirrors(api) and "Renewals" not in mirrors(api)

    # disconnected, the mirrors kept: ordinary memories from then on
    gone = api.post("/integrations/disconnect", json={"id": integration["id"]}).json()
    assert gone == {"ok": True, "id": integration["id"], "disconnected": True, "kept": 105}
    assert api.post("/update", json={"id": found["Pricing floor"]["id"],
                                     "content": "The floor is 50 euros a seat."}).status_code == 200
    assert api.get("/integrations").json()["integrations"][0]["connected"] is False


def test_a_page_not_edited_since_its_sync_is_listed_not_read_again(api, notion):
    wiki = notion.database("Wiki")
    pages = [notion.page(f"Old note {n}", [paragraph(f"Written long ago, number {n}.")], database=wiki)
             for n in range(5)]
    for page in pages:  # edited an hour ago: a settled version (Notion gives edit times to the minute)
        notion.pages[page]["last_edited_time"] = "2026-01-05T10:00:00.000Z"
    connected = connect(api, notion, database=wiki)
    integration = connected["integration"]["id"]
    read = notion.count("GET", "/v1/blocks/", 200)
    report = sync(api, integration)
    assert (*counts(report), report["unchanged"]) == (0, 0, 0, 5)
    assert notion.count("GET", "/v1/blocks/", 200) == read  # no body read again
    # an edit moves the page's edit time: read again, its mirror updated
    notion.set_body(pages[0], [paragraph("Rewritten today.")])
    report = sync(api, integration)
    assert counts(report) == (0, 1, 0) and notion.count("GET", "/v1/blocks/", 200) == read + 1
    assert "Rewritten today." in mirrors(api)["Old note 0"]["content"]


def test_a_page_edited_within_the_last_minutes_is_read_again_at_every_sync(api, notion):
    """Notion gives edit times to the minute: a version taken within the minute of an edit could hide the next
    edit of that minute, so a page edited in the last two minutes is read again however its time reads."""
    wiki = notion.database("Wiki")
    notion.page("Fresh note", [paragraph("Written just now.")], database=wiki)  # edited this minute
    integration = connect(api, notion, database=wiki)["integration"]["id"]
    read = notion.count("GET", "/v1/blocks/", 200)
    sync(api, integration)
    assert notion.count("GET", "/v1/blocks/", 200) == read + 1


def test_disconnecting_can_forget_the_mirrors(api, notion):
    wiki = notion.database("Wiki")
    for title in ("One", "Two", "Three"):
        notion.page(title, [paragraph(f"{title} body")], database=wiki)
    integration = connect(api, notion, database=wiki.replace("-", ""))["integration"]["id"]
    ids = [row["id"] for row in mirrors(api).values()]
    assert len(ids) == 3
    gone = api.post("/integrations/disconnect", json={"id": integration, "forget_mirrors": True}).json()
    assert gone["forgotten"] == 3
    assert mirrors(api) == {} and all(api.get("/entry", params={"id": i}).status_code == 404 for i in ids)


def test_a_page_and_the_pages_under_it_are_mirrored(api, notion):
    handbook = notion.page("Handbook", [paragraph("How we work."), toggle("More")])
    holidays = notion.page("Holidays", [paragraph("25 days a year.")], parent=handbook)
    notion.page("Summer", [paragraph("Two weeks in August.")], parent=holidays)
    # a child page inside a toggle is a child page too (its block nested in the parent's body)
    notion.page("Hiring", [paragraph("Two interviews.")], parent=handbook, within=notion.block_of(handbook, "toggle"))

    link = f"https://www.notion.so/acme/Handbook-{handbook.replace('-', '')}"
    connected = connect(api, notion, page=link)
    assert (connected["sync"]["created"], connected["sync"]["complete"]) == (4, True), connected
    found = mirrors(api)
    assert set(found) == {"Handbook", "Holidays", "Summer", "Hiring"}
    assert found["Handbook"]["content"] == "Handbook\n\nHow we work.\n- More\n  Hiring\nHolidays"
    assert found["Summer"]["content"] == "Summer\n\nTwo weeks in August."

    def neighbours(title: str) -> set[str]:
        linked = api.get("/connections", params={"id": found[title]["id"]}).json()["connections"]
        return {c["content"].split("\n")[0] for c in linked}

    # each page and its child pages: edges between their mirrors
    assert neighbours("Handbook") == {"Holidays", "Hiring"} and neighbours("Holidays") == {"Handbook", "Summer"}

    # a child page moved to the trash goes, and the page under it with it
    notion.trash(holidays)
    report = sync(api, connected["integration"]["id"])
    assert counts(report) == (0, 1, 2), report  # the handbook lost its child page's title
    assert set(mirrors(api)) == {"Handbook", "Hiring"}
    assert api.get("/entry", params={"id": found["Summer"]["id"]}).status_code == 404


def test_a_page_past_the_longest_mirror_still_has_its_child_pages_found_and_a_bounded_run_removes_nothing(
        api, brain, notion):
    handbook = notion.page("Handbook", [paragraph(f"Section {n}: " + "policy words " * 160) for n in range(120)])
    notion.page("Appendix", [paragraph("Holidays are 25 days.")], parent=handbook)  # after ~250,000 characters
    for n in range(3):
        notion.page(f"Team {n}", [paragraph(f"Team {n} works remotely.")], parent=handbook)
    connected = connect(api, notion, page=handbook)
    assert connected["sync"]["created"] == 5, connected["sync"]
    assert {"Handbook", "Appendix", "Team 0"} <= set(mirrors(api))
    # a run that may read only two bodies lists the rest as not read: not complete, and nothing is removed
    assert brain.brain is not None
    owner = Context(brain.brain.team.owner_identity(), "test")
    report = brain.brain.integrations.sync(owner, connected["integration"]["id"], limit=2)
    assert (report["complete"], report["removed"]) == (False, 0), report
    assert len(mirrors(api)) == 5


def test_a_rate_limit_mid_sync_is_waited_out(api, notion):
    wiki = notion.database("Wiki")
    pages = [notion.page(f"Page {n}", [paragraph(f"Body {n}.")], database=wiki) for n in range(3)]
    integration = connect(api, notion, database=wiki)["integration"]["id"]
    notion.set_body(pages[2], [paragraph("Body 2, edited.")])
    # the database and the query answer; then two 429s, each asking for a second
    notion.rate_limit(2, retry_after="1", after=2)
    started = time.monotonic()
    report = sync(api, integration)
    assert time.monotonic() - started >= 2.0  # waited as Retry-After asked
    assert (*counts(report), report["complete"], report["error"]) == (0, 1, 0, True, None)
    assert notion.count("GET", "/v1/blocks/", 429) == 2
    assert "Body 2, edited." in mirrors(api)["Page 2"]["content"]

    # a Notion that keeps answering 429 (five tries, each told to wait 0 s) stops the sync in words, removing nothing
    notion.rate_limit(5, retry_after="0")
    report = sync(api, integration)
    assert (*counts(report), report["complete"]) == (0, 0, 0, False)
    assert "Notion kept asking to slow down (429 rate_limited) after 5 tries" in report["error"]
    assert len(mirrors(api)) == 3
    assert sync(api, integration)["error"] is None  # and the next goes through


def test_settings_that_cannot_work_are_refused_at_connect_in_words(api, notion):
    wiki = notion.database("Wiki")
    page = notion.page("Pricing", [paragraph("Floor 40.")], database=wiki)
    binned = notion.page("Old plans", [paragraph("Floor 30.")])
    notion.trash(binned)
    unshared = "0123456789abcdef0123456789abcdef"
    for settings, words in (
        ({"database": wiki}, "settings.token"),
        ({"token": "ntn_wrong_token", "database": wiki}, "Notion refused the token (401 unauthorized)"),
        ({"token": notion.token, "database": unshared}, "share the page or database with the integration"),
        ({"token": notion.token, "page": unshared}, "Notion cannot find the page 01234567-89ab-cdef"),
        ({"token": notion.token, "database": "not-an-id"}, "settings.database is not a Notion database's id"),
        ({"token": notion.token, "database": wiki, "page": page}, "either settings.database"),
        ({"token": notion.token}, "either settings.database"),
        ({"token": notion.token, "database": page}, "is a page, not a database"),
        ({"token": notion.token, "database": f"{wiki}, {unshared}"}, "Notion cannot find the database"),
        ({"token": notion.token, "page": binned}, f"The Notion page {binned} is in the trash"),
    ):
        refused = api.post("/integrations", json={"kind": "notion", "name": "Wiki", "settings": settings})
        assert refused.status_code == 400 and words in refused.json()["error"], (settings, refused.text)
        assert "ntn_wrong_token" not in refused.text
    assert api.get("/integrations").json()["integrations"] == []
    assert api.get("/count").json() == {"count": 0}


def test_a_notion_that_fails_is_an_error_in_words_not_a_removal(brain, api, notion):
    waits: list[float] = []
    assert brain.brain is not None
    brain.brain.integrations.connectors["notion"].sleep = waits.append  # no real waits between the tries
    wiki = notion.database("Wiki")
    for n in range(2):
        notion.page(f"Page {n}", [paragraph(f"Body {n}.")], database=wiki)
    integration = connect(api, notion, database=wiki)["integration"]["id"]

    notion.fail(2, status=503)  # two 503s: tried again, and through
    report = sync(api, integration)
    assert report["error"] is None and waits == [1.0, 2.0]
    notion.fail(3, status=502, after=1)  # the database answers; its query fails three times
    report = sync(api, integration)
    assert (report["removed"], report["complete"]) == (0, False)
    assert "Notion answered HTTP 502 (bad_gateway) to 3 tries" in report["error"]
    assert api.get("/integrations").json()["integrations"][0]["last_error"] == report["error"]

    notion.close()  # Notion out of reach
    report = sync(api, integration)
    assert report["removed"] == 0 and f"Notion at {notion.url} cannot be reached" in report["error"]
    assert len(mirrors(api)) == 2


def test_a_brain_killed_mid_sync_takes_it_up_again_without_duplicates(tmp_path, notion):
    wiki = notion.database("Wiki")
    for n in range(30):
        notion.page(f"Note {n:03}", [paragraph(f"Note number {n}.")], database=wiki)
    # the process is killed; no model (it starts in a second, and what is under test is the log's recovery)
    first = Server(tmp_path / "brain", env=environment(notion) | NO_MODEL, in_process=False).start()
    with first.client() as api:
        integration = connect(api, notion, database=wiki)["integration"]["id"]
        for n in range(30, 180):
            notion.page(f"Note {n:03}", [paragraph(f"Note number {n}.")], database=wiki)
        written_at_kill: list[int] = []
        answered = threading.Event()

        def kill_mid_write() -> None:  # the sync reads its 180 pages, then writes 150 mirrors: killed among those
            with first.client() as watcher:
                while not answered.is_set():
                    written = watcher.get("/count").json()["count"]
                    if written >= 60:  # the sync is writing: 30 of its 150 are in
                        assert first.process is not None
                        first.process.send_signal(signal.SIGKILL)
                        first.process.wait()
                        written_at_kill.append(written)
                        return
                    time.sleep(0.005)

        killer = threading.Thread(target=kill_mid_write)
        killer.start()
        try:
            with pytest.raises(httpx.TransportError):  # the brain died under the request
                api.post("/integrations/sync", json={"id": integration})
        finally:
            answered.set()
            killer.join()
    assert written_at_kill and 60 <= written_at_kill[0] < 180

    again = Server(first.data_dir, env=environment(notion) | NO_MODEL).start()  # as the first, without a model
    try:
        with again.client() as api:
            held = api.get("/count").json()["count"]
            assert 60 <= held < 180  # what the killed sync wrote is kept, and no more
            report = sync(api, integration)
            assert (report["created"], report["removed"], report["complete"]) == (180 - held, 0, True), report
            assert report["created"] + report["unchanged"] == 180
            found = mirrors(api)  # each title once
            assert sorted(found) == [f"Note {n:03}" for n in range(180)]
            assert api.get("/count").json() == {"count": 180}
            assert counts(sync(api, integration)) == (0, 0, 0)
    finally:
        again.stop()
