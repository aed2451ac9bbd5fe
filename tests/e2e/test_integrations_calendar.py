"""A calendar's ICS feed, served by the test over HTTP, connected to a served brain: events become mirrors with
their time anchor, recurring ones expanded within the window, a moved event or occurrence followed (the same
memory, its anchor moved), a cancelled one removed, and a feed that cannot be read said in words."""

import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.ical import calendar, event, stamp

from .killed import kill_mid_sync, resume


class Feed(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), FeedHandler)
        self.ics = ""
        self.status = 200

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/calendar.ics"


class FeedHandler(BaseHTTPRequestHandler):
    server: Feed

    def do_GET(self) -> None:
        body = self.server.ics.encode()
        self.send_response(self.server.status)
        self.send_header("content-type", "text/calendar")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def feed() -> Iterator[Feed]:
    server = Feed()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


# Loopback allowed (the feed is this test's, on 127.0.0.1); folders not watched.
pytestmark = pytest.mark.server_env(BRAIN_PUSH_ALLOW_LOOPBACK="true", BRAIN_WATCH_FOLDERS="false")


def mirrors(api) -> list[dict]:
    return [row for row in api.get("/list", params={"n": 100}).json() if row["source"] == "calendar"]


def test_a_calendar_feed_is_mirrored_with_its_times_and_followed(api, server, feed, caplog):
    caplog.set_level(logging.INFO, logger="httpx")
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    dentist = now + timedelta(hours=5)  # within /due's upcoming window
    first_standup = now - timedelta(days=10)
    moved_from = first_standup + timedelta(weeks=3)  # the fourth standup, moved an hour later
    skipped = first_standup + timedelta(weeks=2)
    feed.ics = calendar(
        event("dentist-1", dentist, "Dentist", "LOCATION:Harbour Street 4"),
        event("standup-1", first_standup, "Standup", "RRULE:FREQ=WEEKLY;COUNT=6", f"EXDATE:{stamp(skipped)}"),
        event("standup-1", moved_from + timedelta(hours=1), "Standup (moved)", f"RECURRENCE-ID:{stamp(moved_from)}"),
        event("party-1", now + timedelta(days=5), "Party", "STATUS:CANCELLED"))
    connected = api.post("/integrations", json={"kind": "calendar", "name": "Work",
                                                "settings": {"url": feed.url}})
    assert connected.status_code == 200, connected.text
    integration = connected.json()["integration"]["id"]
    # the feed's address is a secret (whoever holds it reads the calendar): sealed outside the log, never shown
    assert connected.json()["integration"]["settings"] == {"url": "(secret, kept sealed)"}
    assert feed.url not in api.get("/integrations").text
    assert connected.json()["sync"]["created"] == 6  # the dentist, and 6 standups less the skipped one; no party
    found = mirrors(api)
    by_title = {}
    for row in found:
        by_title.setdefault(row["content"].split("\n")[0], []).append(row)
    assert sorted(by_title) == ["Dentist", "Standup", "Standup (moved)"] and len(by_title["Standup"]) == 4
    [mirror] = by_title["Dentist"]
    entry = api.get("/entry", params={"id": mirror["id"]}).json()["entry"]
    assert entry["when_at"] == int(dentist.timestamp() * 1000) and entry["when_kind"] == "event"
    assert "Where: Harbour Street 4" in entry["content"] and "calendar" in entry["tags"]
    upcoming = api.get("/due").json()["upcoming"]
    assert mirror["id"] in [e["id"] for e in upcoming]
    refused = api.post("/update", json={"id": mirror["id"], "content": "Dentist moved"})
    assert refused.status_code == 409 and "managed mirror of calendar" in refused.json()["error"]

    # the dentist moves a day later, the moved standup moves again: the same memories, their anchors moved
    moved = dentist + timedelta(days=1)
    feed.ics = feed.ics.replace(event("dentist-1", dentist, "Dentist", "LOCATION:Harbour Street 4"),
                                event("dentist-1", moved, "Dentist", "LOCATION:Harbour Street 4")).replace(
        event("standup-1", moved_from + timedelta(hours=1), "Standup (moved)", f"RECURRENCE-ID:{stamp(moved_from)}"),
        event("standup-1", moved_from + timedelta(hours=2), "Standup (moved)", f"RECURRENCE-ID:{stamp(moved_from)}"))
    sync = api.post("/integrations/sync", json={"id": integration}).json()["sync"]
    assert (sync["created"], sync["updated"], sync["removed"]) == (0, 2, 0), sync
    entry = api.get("/entry", params={"id": mirror["id"]}).json()["entry"]
    assert entry["when_at"] == int(moved.timestamp() * 1000)

    # cancelled: its mirror goes
    feed.ics = feed.ics.replace("SUMMARY:Dentist", "SUMMARY:Dentist\r\nSTATUS:CANCELLED")
    sync = api.post("/integrations/sync", json={"id": integration}).json()["sync"]
    assert sync["removed"] == 1 and api.get("/entry", params={"id": mirror["id"]}).status_code == 404

    # a feed that answers an error is said in words, and removes nothing
    feed.status = 500
    sync = api.post("/integrations/sync", json={"id": integration}).json()["sync"]
    assert sync["removed"] == 0 and "HTTP 500" in sync["error"]
    assert len(mirrors(api)) == 5

    # the feed's address (a secret: whoever holds it reads the calendar) is in no event, answer or log line
    events = server.brain.store.read_all(limit=100_000)
    assert feed.url not in str([e.event for e in events])
    assert feed.url not in api.get("/integrations").text and feed.url not in str(sync)
    assert all(feed.url not in str(api.get("/entry", params={"id": row["id"]}).json()) for row in mirrors(api))
    assert "HTTP Request: GET http://127.0.0.1" in caplog.text and feed.url not in caplog.text

    # disconnected, forgetting its mirrors: the feed's sealed address is erased with it
    gone = api.post("/integrations/disconnect", json={"id": integration, "forget_mirrors": True}).json()
    assert gone == {"ok": True, "id": integration, "disconnected": True, "forgotten": 5}
    assert mirrors(api) == [] and server.brain.integrations.secrets.get(integration) is None


def test_a_calendar_address_that_cannot_work_is_refused_before_connecting(api, feed):
    feed.ics = "this is not a calendar"
    for kind, settings, words in (
            ("calendar", {}, "settings.url"), ("calendar", {"url": "ftp://example.com/cal.ics"}, "https://"),
            ("calendar", {"url": "http://example.com/cal.ics"}, "https://"),
            # addresses no client can parse: said in words, never a 500
            ("calendar", {"url": "https://calendar.example.com:abc/cal.ics"}, "cannot work"),
            ("calendar", {"url": "https://[calendar.example.com/cal.ics"}, "cannot work"),
            ("caldav", {"url": "https://dav.example.com:99999/", "username": "me", "password": "pw"}, "cannot"),
            ("notion", {"token": "ntn_x", "page": "https://[notion.so/x"}, "cannot work"),
            ("calendar", {"url": "https://calendar.example.com/cal.ics", "password": "stray"}, "takes no password")):
        refused = api.post("/integrations", json={"kind": kind, "settings": settings})
        assert refused.status_code == 400 and words in refused.json()["error"], (settings, refused.text)
    feed.status = 404
    refused = api.post("/integrations", json={"kind": "calendar", "settings": {"url": feed.url}})
    assert refused.status_code == 400 and "HTTP 404" in refused.json()["error"]
    assert api.get("/integrations").json()["integrations"] == []


def test_a_sync_killed_halfway_is_finished_by_the_next_without_a_duplicate(tmp_path, feed):
    total = 300
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(days=1)
    feed.ics = calendar(*(event(f"review-{n}", start + timedelta(hours=n), f"Review {n:03}") for n in range(total)))
    env = {"BRAIN_PUSH_ALLOW_LOOPBACK": "true", "BRAIN_WATCH_FOLDERS": "false"}
    kill_mid_sync(tmp_path / "brain", env, lambda api: api.post("/integrations", json={
        "kind": "calendar", "name": "Reviews", "settings": {"url": feed.url}}))
    titles = resume(tmp_path / "brain", env, total, "calendar")
    assert sorted(titles) == [f"Review {n:03}" for n in range(total)]  # each once
