"""A CalDAV calendar on a real CalDAV server (Radicale, its own process) connected to a served brain: events become
mirrors with their time anchor, recurring ones expanded within the window, an edit, a moved occurrence, a
cancelled one and a deleted event followed; the calendars found from the server's address; a wrong password or an
address that is no CalDAV server refused in words at connect; and a brain killed mid-sync takes the sync up again
without mirroring anything twice."""

import signal
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from second_brain.adapters.integrations.caldav import SameOrigin, named_hosts
from second_brain.domain.errors import InvalidInput
from tests.support.ical import calendar as ics
from tests.support.ical import event, stamp
from tests.support.radicale_server import PASSWORD, USER, Radicale

from .conftest import Server

# Loopback allowed (Radicale is this test's, on 127.0.0.1); folders not watched.
ENV = {"BRAIN_PUSH_ALLOW_LOOPBACK": "true", "BRAIN_WATCH_FOLDERS": "false"}
pytestmark = pytest.mark.server_env(**ENV)


@pytest.fixture
def radicale() -> Iterator[Radicale]:
    server = Radicale().start()
    yield server
    server.stop()


def settings(url: str, **more: str) -> dict[str, str]:
    return {"url": url, "username": USER, "password": PASSWORD, **more}


def connect(api, url: str, **more: str) -> dict:
    answer = api.post("/integrations", json={"kind": "caldav", "name": "Work", "settings": settings(url, **more)})
    assert answer.status_code == 200, answer.text
    return answer.json()


def mirrors(api) -> list[dict]:
    return [row for row in api.get("/list", params={"n": 200}).json() if row["source"] == "calendar"]


def titled(api) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for row in mirrors(api):
        found.setdefault(row["content"].split("\n")[0], []).append(row)
    return found


def entry(api, memory_id: str) -> dict:
    return api.get("/entry", params={"id": memory_id}).json()["entry"]


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def test_a_caldav_calendar_is_mirrored_with_its_times_and_followed(api, radicale):
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    dentist, review = now + timedelta(hours=5), now + timedelta(days=2)
    first_standup = now - timedelta(days=10)  # weekly, six times: within the window (30 days back)
    standups = [first_standup + timedelta(weeks=n) for n in range(6)]
    calendar = radicale.make_calendar("work", "Work")
    dentist_url = radicale.put(calendar, "dentist", ics(event("dentist-1", dentist, "Dentist",
                                                              "LOCATION:Harbour Street 4")))
    radicale.put(calendar, "review", ics(event("review-1", review, "Design review", "LOCATION:Room 4",
                                               "DESCRIPTION:Bring the drawings")))
    series = event("standup-1", standups[0], "Standup", "RRULE:FREQ=WEEKLY;COUNT=6")
    moved = event("standup-1", standups[3] + timedelta(hours=1), "Standup (moved)",
                  f"RECURRENCE-ID:{stamp(standups[3])}")  # the fourth, an hour later
    radicale.put(calendar, "standup", ics(series, moved))
    radicale.put(calendar, "old", ics(event("old-1", now - timedelta(days=90), "Long ago")))  # out of the window

    connected = connect(api, calendar)
    integration = connected["integration"]["id"]
    assert connected["sync"] == {"created": 8, "updated": 0, "removed": 0, "unchanged": 0, "failed": 0,
                                 "complete": True, "error": None}
    found = titled(api)
    assert sorted(found) == ["Dentist", "Design review", "Standup", "Standup (moved)"]
    assert sorted(entry(api, row["id"])["when_at"] for row in found["Standup"]) == [
        ms(s) for n, s in enumerate(standups) if n != 3]
    [moved_mirror] = found["Standup (moved)"]
    assert entry(api, moved_mirror["id"])["when_at"] == ms(standups[3] + timedelta(hours=1))
    [mirror] = found["Dentist"]
    dentist_entry = entry(api, mirror["id"])
    assert dentist_entry["when_at"] == ms(dentist) and dentist_entry["when_kind"] == "event"
    assert "Where: Harbour Street 4" in dentist_entry["content"] and "calendar" in dentist_entry["tags"]
    assert f"When: {dentist.strftime('%Y-%m-%d %H:%M')}" in dentist_entry["content"]
    review_entry = entry(api, found["Design review"][0]["id"])
    assert "Where: Room 4" in review_entry["content"] and "Bring the drawings" in review_entry["content"]
    assert mirror["id"] in [e["id"] for e in api.get("/due").json()["upcoming"]]
    # a mirror is changed in the calendar, not here: the 409 names the event's resource on the server
    refused = api.post("/update", json={"id": mirror["id"], "content": "Dentist moved"})
    assert refused.status_code == 409 and dentist_url in refused.json()["error"], refused.text
    # the password is a secret: never shown back
    listed = api.get("/integrations")
    assert PASSWORD not in listed.text and listed.json()["integrations"][0]["mirrors"] == 8

    # an edit upstream (the dentist a day later, renamed) and the moved standup moved again: the same memories
    later = dentist + timedelta(days=1)
    radicale.put(calendar, "dentist", ics(event("dentist-1", later, "Dentist check-up", "LOCATION:Harbour Street 4")))
    moved_again = event("standup-1", standups[3] + timedelta(hours=2), "Standup (moved)",
                        f"RECURRENCE-ID:{stamp(standups[3])}")
    radicale.put(calendar, "standup", ics(series, moved_again))
    sync = api.post("/integrations/sync", json={"id": integration}).json()["sync"]
    assert (sync["created"], sync["updated"], sync["removed"], sync["unchanged"]) == (0, 2, 0, 6), sync
    dentist_entry = entry(api, mirror["id"])
    assert dentist_entry["content"].startswith("Dentist check-up") and dentist_entry["when_at"] == ms(later)
    assert entry(api, moved_mirror["id"])["when_at"] == ms(standups[3] + timedelta(hours=2))
    timeline = api.get("/timeline", params={"id": mirror["id"]}).json()["timeline"]
    assert [e["type"] for e in timeline].count("synced") == 2, timeline

    # an occurrence cancelled (an override with STATUS:CANCELLED): its mirror goes, the others stay
    cancelled = event("standup-1", standups[4], "Standup", f"RECURRENCE-ID:{stamp(standups[4])}", "STATUS:CANCELLED")
    radicale.put(calendar, "standup", ics(series, moved_again, cancelled))
    sync = api.post("/integrations/sync", json={"id": integration}).json()["sync"]
    assert (sync["created"], sync["updated"], sync["removed"]) == (0, 0, 1), sync
    assert sorted(entry(api, row["id"])["when_at"] for row in titled(api)["Standup"]) == [
        ms(s) for n, s in enumerate(standups) if n not in (3, 4)]

    # a deleted event: its mirror goes
    review_id = found["Design review"][0]["id"]
    radicale.delete(calendar, "review")
    sync = api.post("/integrations/sync", json={"id": integration}).json()["sync"]
    assert (sync["created"], sync["updated"], sync["removed"], sync["error"]) == (0, 0, 1, None), sync
    assert api.get("/entry", params={"id": review_id}).status_code == 404
    assert len(mirrors(api)) == 6

    # disconnected, the mirrors kept: ordinary memories from then on, editable here
    gone = api.post("/integrations/disconnect", json={"id": integration}).json()
    assert gone == {"ok": True, "id": integration, "disconnected": True, "kept": 6}
    assert api.post("/update", json={"id": mirror["id"], "content": "Dentist, my note"}).status_code == 200
    assert api.get("/integrations").json()["integrations"][0]["connected"] is False


def test_the_calendars_are_found_from_the_servers_address(api, radicale):
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    work, home = radicale.make_calendar("work", "Work"), radicale.make_calendar("home", "Home")
    tasks = radicale.make_calendar("tasks", "Tasks", components="VTODO")  # no events: not a calendar to mirror
    radicale.put(work, "planning", ics(event("planning-1", now + timedelta(days=1), "Planning")))
    radicale.put(home, "plumber", ics(event("plumber-1", now + timedelta(days=3), "Plumber")))
    todo = "\r\n".join(["BEGIN:VTODO", "UID:todo-1", f"DTSTAMP:{stamp(now)}", "SUMMARY:Buy paint", "END:VTODO"])
    radicale.put(tasks, "paint", ics(todo))

    everything = connect(api, radicale.url + "/")  # the server's root: its principal, its calendar home, each one
    assert everything["sync"]["created"] == 2 and everything["sync"]["complete"] is True
    assert sorted(titled(api)) == ["Planning", "Plumber"]
    plumber = entry(api, titled(api)["Plumber"][0]["id"])
    assert plumber["when_at"] == ms(now + timedelta(days=3))

    api.post("/integrations/disconnect", json={"id": everything["integration"]["id"], "forget_mirrors": True})
    only_home = connect(api, f"{radicale.url}/{USER}/", calendar="home")  # the principal, one calendar by name
    assert only_home["sync"]["created"] == 1 and sorted(titled(api)) == ["Plumber"]
    assert PASSWORD not in api.get("/integrations").text

    refused = api.post("/integrations", json={"kind": "caldav", "settings": settings(radicale.url, calendar="Gym")})
    assert refused.status_code == 400, refused.text
    assert "no calendar named Gym" in refused.json()["error"] and "Home, Work" in refused.json()["error"]


def test_settings_that_cannot_work_are_refused_in_words_before_connecting(api, server, radicale):
    calendar = radicale.make_calendar("work", "Work")
    for given, words in (
            ({"url": calendar, "username": USER, "password": "wrong"}, "refused the user name or password"),
            ({"url": f"{radicale.url}/{USER}/nothing/", "username": USER, "password": PASSWORD},
             "no calendar at"),
            ({"url": server.url + "/", "username": USER, "password": PASSWORD}, "is not a CalDAV server"),
            ({"url": calendar, "username": USER}, "settings.password"),
            ({"url": calendar.replace("127.0.0.1", "example.com"), "username": USER, "password": PASSWORD},
             "https://"),
            ({"url": f"http://127.0.0.1:{closed_port()}/", "username": USER, "password": PASSWORD},
             "cannot be reached")):
        refused = api.post("/integrations", json={"kind": "caldav", "name": "Work", "settings": given})
        assert refused.status_code == 400 and words in refused.json()["error"], (given, refused.text)
        assert "wrong" not in refused.text
    assert api.get("/integrations").json()["integrations"] == []


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_brain_killed_mid_sync_takes_the_sync_up_again_mirroring_each_event_once(tmp_path, radicale):
    """60 weekly events, five times each within the window: 300 mirrors, a sync that takes a moment. The brain (its
    own process) is killed once some are written; a new one on the same data takes the sync up again."""
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    calendar = radicale.make_calendar("work", "Work")
    starts = {f"Meeting {n:02}": now - timedelta(days=7) + timedelta(hours=n) for n in range(60)}
    with radicale.client() as client:  # one connection for the 60 PUTs
        for title, start in starts.items():
            body = ics(event(title.replace(" ", "-"), start, title, "RRULE:FREQ=WEEKLY;COUNT=5"))
            assert client.put(f"{calendar}{title.replace(' ', '-')}.ics", content=body.encode()).status_code == 201
    expected = sorted((title, ms(start + timedelta(weeks=k))) for title, start in starts.items() for k in range(5))
    env = {**ENV, "BRAIN_EMBEDDER": "none"}  # no model to load: the process starts in a second

    killed = Server(tmp_path / "brain", in_process=False, env=env).start()
    answered: list[httpx.Response] = []

    def connect_there() -> None:
        with killed.client() as api:
            try:
                answered.append(api.post("/integrations", json={"kind": "caldav", "name": "Work",
                                                                "settings": settings(calendar)}))
            except httpx.TransportError:
                pass  # killed under it

    connecting = threading.Thread(target=connect_there)
    connecting.start()
    with killed.client() as api:
        deadline = time.monotonic() + 30
        while api.get("/count").json()["count"] < 20 and time.monotonic() < deadline:
            time.sleep(0.005)
    killed.process.send_signal(signal.SIGKILL)
    killed.process.wait(timeout=30)
    connecting.join(timeout=30)
    assert answered == [], "the sync ended before the kill: nothing was tested"

    again = Server(tmp_path / "brain", env=env).start()
    try:
        with again.client() as api:
            written = api.get("/count").json()["count"]
            assert 20 <= written < len(expected)  # the kill came mid-sync
            [integration] = api.get("/integrations").json()["integrations"]
            sync = api.post("/integrations/sync", json={"id": integration["id"]}).json()["sync"]
            assert sync == {"created": len(expected) - written, "updated": 0, "removed": 0, "unchanged": written,
                            "failed": 0, "complete": True, "error": None}, sync
            rows = [row for offset in range(0, len(expected) + 100, 100)
                    for row in api.get("/list", params={"n": 100, "offset": offset, "sort": "oldest"}).json()]
            # each occurrence of each event once: none lost, none twice
            got = sorted((row["content"].split("\n")[0], row["when_at"]) for row in rows)
            assert got == expected, (sorted(set(got) - set(expected)), sorted(set(expected) - set(got)), len(got))
            assert len({row["id"] for row in rows}) == len(expected)
            assert api.get("/count").json()["count"] == len(expected)
            [integration] = api.get("/integrations").json()["integrations"]
            assert (integration["mirrors"], integration["complete"]) == (len(expected), True)
    finally:
        again.stop()


def test_the_password_goes_only_to_the_configured_servers_origin():
    """A server's answer may name calendars on another host: iCloud's own are reached with the password, any other
    host, port or scheme without it (an answer is not a reason to hand credentials to whoever it names; issue 62:
    sharing the last two labels made any *.co.uk one site)."""
    auth = SameOrigin("https://caldav.icloud.com/", "me@icloud.com", "app-password")
    for url, sent in (("https://caldav.icloud.com/123/principal/", True), ("https://p42-caldav.icloud.com/x/", True),
                      ("https://CALDAV.icloud.com./x/", True), ("https://calendars.example.org/x/", False),
                      ("https://icloud.com.example.org/x/", False), ("https://evil.icloud.com/x/", False),
                      ("http://p42-caldav.icloud.com/x/", False), ("https://caldav.icloud.com:8443/x/", False)):
        request = next(auth.auth_flow(httpx.Request("PROPFIND", url)))
        assert ("authorization" in request.headers) == sent, url
    british = SameOrigin("https://dav.example.co.uk/", "me", "pw")
    assert "authorization" not in next(british.auth_flow(httpx.Request("GET", "https://dav.attacker.co.uk/"))).headers
    local = SameOrigin("http://127.0.0.1:5232/", "me", "pw")
    assert "authorization" not in next(local.auth_flow(httpx.Request("GET", "http://10.0.0.1/"))).headers


def test_a_host_the_user_named_gets_the_password_over_https_only():
    """Issue 62 item 7: besides the configured origin, the hosts the user named in `settings.hosts` (a server that
    keeps calendars on another host), over https on its default port, and no host an answer names."""
    hosts = named_hosts({"hosts": " Cal2.Example.org., p3.example.net"})
    named = SameOrigin("https://dav.example.org/", "me", "pw", hosts)
    for url, sent in (("https://cal2.example.org/c/", True), ("https://p3.example.net/c/", True),
                      ("http://cal2.example.org/c/", False), ("https://cal2.example.org:8443/c/", False),
                      ("https://cal3.example.org/c/", False), ("https://x.p3.example.net/c/", False)):
        assert ("authorization" in next(named.auth_flow(httpx.Request("PROPFIND", url))).headers) == sent, url
    for bad in ("https://cal2.example.org", "cal2.example.org/path", "user@host.org", "*.example.org",
                ",".join(f"h{n}.example.org" for n in range(11))):
        with pytest.raises(InvalidInput):
            named_hosts({"hosts": bad})
    assert named_hosts({}) == frozenset()
