"""A time said in words becomes a reminder at capture, and the answer says so in words, over HTTP and MCP."""

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import anyio

from .test_mcp import call, over_http


def test_the_capture_answer_says_which_reminder_the_words_set_and_how_to_undo_it(api):
    assert api.patch("/config", json={"TIMEZONE": "Europe/Lisbon"}).status_code == 200
    before = datetime.now(ZoneInfo("Europe/Lisbon")).date().toordinal()
    body = api.post("/capture", json={"content": "Remind me tomorrow at 10 to call the plumber"}).json()
    after = datetime.now(ZoneInfo("Europe/Lisbon")).date().toordinal()  # the same day but at midnight
    reminder = body["reminder"]
    moment = datetime.fromisoformat(reminder["when"])
    assert moment.date().toordinal() in {before + 1, after + 1} and (moment.hour, moment.minute) == (10, 0)
    assert reminder["when_at"] == int(moment.timestamp() * 1000) and reminder["when_kind"] == "due"
    assert reminder["from_words"] == "tomorrow at 10" and reminder["commitment"] is True
    assert reminder["message"].startswith(f"Reminder set for {moment:%a} {moment.day} {moment:%b}, 10:00")
    assert body["id"] in reminder["message"]
    due = api.get("/due").json()
    assert [(e["id"], e["when_at"]) for e in due["upcoming"]] == [(body["id"], reminder["when_at"])]

    assert api.post("/due/clear", json={"id": body["id"]}).json()["cleared"] is True  # the undo it names
    assert api.get("/due").json()["counts"] == {"overdue": 0, "upcoming": 0}


def test_a_note_without_a_time_or_with_its_own_when_gets_no_reminder_from_words(api):
    assert "reminder" not in api.post("/capture", json={"content": "The plumber's name is Rui"}).json()
    given = api.post("/capture", json={"content": "Call Rui tomorrow at 10", "when": "2031-01-02T08:00"}).json()
    assert "reminder" not in given


def test_remember_over_mcp_says_it_too(server):
    async def session():
        async with over_http(server) as client:
            saved = json.loads(await call(client, "remember", content="Dentist on Friday at 3pm"))
            assert saved["reminder"]["when_kind"] == "event"
            assert saved["reminder"]["message"].startswith("Reminder set for Fri ")

    anyio.run(session)
