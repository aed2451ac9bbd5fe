"""Extraction's rules: which sentences name a time still to come, which time, which kind, and whether it is a
commitment; and the checks a model's answer must pass before it is believed."""

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from second_brain.app.reminders.extraction import Extractor
from second_brain.domain.errors import LanguageModelUnavailable
from second_brain.domain.extraction import Anchor, find_anchor
from tests.conftest import FixedClock

BERLIN = ZoneInfo("Europe/Berlin")
WRITTEN = datetime(2026, 3, 4, 10, 15, tzinfo=BERLIN)  # a Wednesday morning
WRITTEN_MS = int(WRITTEN.timestamp() * 1000)


def at(text: str) -> int:
    """Unix ms of a local time in Berlin: "2026-03-06 15:00"."""
    return int(datetime.fromisoformat(text).replace(tzinfo=BERLIN).timestamp() * 1000)


# (note, local time, kind, evidence, commitment)
POSITIVE = [
    ("Dentist on Friday at 3", "2026-03-06 15:00", "event", "on Friday at 3", False),
    ("Send the deck by the 15th", "2026-03-15 09:00", "due", "by the 15th", True),
    ("I need to send the deck to Anna by the 15th.", "2026-03-15 09:00", "due", "by the 15th", True),
    ("I'll call the bank tomorrow at 10am", "2026-03-05 10:00", "due", "tomorrow at 10am", True),
    ("I’ll call the bank tomorrow at 10am", "2026-03-05 10:00", "due", "tomorrow at 10am", True),
    ("Remember to renew the passport by March 31", "2026-03-31 09:00", "due", "by March 31", True),
    ("Team meeting next Tuesday 10am", "2026-03-10 10:00", "event", "next Tuesday 10am", False),
    ("Friday at 3pm: haircut", "2026-03-06 15:00", "event", "Friday at 3pm", False),
    ("Flight to Lisbon on 2026-04-02 at 07:15", "2026-04-02 07:15", "event", "on 2026-04-02 at 07:15", False),
    ("Release party 2026-12-04T18:30", "2026-12-04 18:30", "event", "2026-12-04T18:30", False),
    ("Dec 4 at 14:30 review with legal", "2026-12-04 14:30", "event", "Dec 4 at 14:30", False),
    ("Dec. 4 at 2 p.m. call with legal", "2026-12-04 14:00", "event", "Dec. 4 at 2 p.m", False),
    ("Pay the invoice in 3 days", "2026-03-07 09:00", "due", "in 3 days", True),
    ("Sync with Ola in two weeks", "2026-03-18 09:00", "event", "in two weeks", False),
    ("Dinner with Sam tonight at 8", "2026-03-04 20:00", "event", "tonight at 8", False),
    ("Lunch with Bea today at 1", "2026-03-04 13:00", "event", "today at 1", False),
    ("Tax return due April 30", "2026-04-30 09:00", "due", "due April 30", False),
    ("Deadline for the grant is the 20th of March", "2026-03-20 09:00", "due", "the 20th of March", False),
    ("Call mom on Sunday", "2026-03-08 09:00", "due", "on Sunday", True),
    ("Interview at 9:30 am on Thursday", "2026-03-05 09:30", "event", "at 9:30 am on Thursday", False),
    ("Meeting at 3:30 on Friday", "2026-03-06 15:30", "event", "at 3:30 on Friday", False),
    ("Submit the report no later than Friday", "2026-03-06 09:00", "due", "no later than Friday", True),
    ("Don't forget to water the plants tomorrow morning", "2026-03-05 09:00", "due", "tomorrow morning", True),
    ("Standup moved to 11:00 tomorrow", "2026-03-05 11:00", "event", "11:00 tomorrow", False),
    ("Book the venue before the 10th", "2026-03-10 09:00", "due", "before the 10th", True),
    ("The conference starts on May 12", "2026-05-12 09:00", "event", "on May 12", False),
    ("Doctor appointment Monday at 4:30pm", "2026-03-09 16:30", "event", "Monday at 4:30pm", False),
    ("I will finish the draft by next Monday", "2026-03-09 09:00", "due", "by next Monday", True),
    ("We must ship the release by 2026-06-01", "2026-06-01 09:00", "due", "by 2026-06-01", True),
    ("Parent-teacher meeting on Thursday at 6", "2026-03-05 18:00", "event", "on Thursday at 6", False),
    ("Board meeting on Wednesday at 2", "2026-03-11 14:00", "event", "on Wednesday at 2", False),  # said on one
    ("Renew the lease by the 4th of July", "2026-07-04 09:00", "due", "by the 4th of July", True),
    ("Vet check-up tomorrow afternoon", "2026-03-05 15:00", "event", "tomorrow afternoon", False),
    ("Old notes first. Then: dentist on Friday at noon", "2026-03-06 12:00", "event", "on Friday at noon", False),
    ("Was a long day. Remind me to email Jo on Monday at 8", "2026-03-09 08:00", "due", "on Monday at 8", True),
]

NEGATIVE = [
    "I was born on Friday",
    "Friday's meeting went well",
    "We met on Tuesday at 3",
    "Yesterday at 5 I went running",
    "The meeting last Friday was long",
    "I called the dentist on Friday at 3",
    "I have sent the deck by the 15th",
    "She said she'd come by March 3",
    "Can we meet on Friday at 3?",
    "If it rains on Saturday we stay in",
    "Not sure whether the demo is on Friday at 3",  # whether it is, not a check to make
    "Lena will send a proposal by Friday",  # someone else's commitment
    "Hana is revising the budget and will circulate it on Thursday",
    "She promised to call back tomorrow at 10",
    "Maybe dinner on Saturday",
    "I'd love to meet on Friday at 3",
    "I usually swim on Fridays",
    "Running plan: intervals on Tuesday, long run on Sunday",  # a week's routine, not one Tuesday
    "Cleaning rota: bathroom on Saturday",
    "My gym schedule: legs on Monday at 7, arms on Thursday",
    "Every Monday at 9 we have standup",
    "The dentist appointment on Friday at 3 was cancelled",
    "Run `cron 0 3 * * friday` on the server",
    "```\nschedule('on Friday at 3')\n```",
    "See https://example.com/events/2026-12-04/friday for details",
    "Upgraded to Python 3.12 and numpy 1.26.4",
    "Version 2.0.15 released",
    "Friday is my favourite day",
    "Chapter 15 covers the 15th century",
    "The 3rd attempt worked",
    "I'm on the 15th floor at 3 desks",
    "I'm in Berlin until Friday",
    "Meeting on 2025-01-10",  # a date that has passed
    "Lunch with Bea today at 9",  # earlier the same morning
    "Reading group today",  # "today" without a time
    "Pay by Feb 10",  # a month and day just behind the writing
    "It costs 3 euros at 5 shops",
    "The recipe needs 3 eggs at 200 degrees",
    "Born on 4 December 1990",
    "Release 31 February",
    "Pricing floor is $6k per project",
    "",
]


# Issue 60: times as a careful person reads them (worded here afresh). (note, local time, kind)
READ_CAREFULLY = [
    ("Brunch with Kai on Saturday 7 March at 11", "2026-03-07 11:00", "event"),  # the date, not only the weekday
    ("Karaoke party Friday at 9", "2026-03-06 21:00", "event"),  # an evening event's bare hour is in the evening
    ("Weekend plan: hike the Harz loop on Saturday at 8", "2026-03-07 08:00", "event"),  # a plan for one weekend
    ("This week's schedule: dentist on Friday at 10", "2026-03-06 10:00", "event"),
    ("Yoga workshop from 10:00 to 12:00 on Saturday 7 March", "2026-03-07 10:00", "event"),  # a range's start
    ("Got theatre tickets for Friday 13 March, doors at 19:15", "2026-03-13 19:15", "event"),  # the time elsewhere
    ("Budget review rescheduled to 12 March at 14:00 (was 10 March)", "2026-03-12 14:00", "event"),
    ("The kickoff moved from March 9 to March 11", "2026-03-11 09:00", "event"),  # the date it moved to
    ("Expense reports are due at the end of the month", "2026-03-31 09:00", "due"),
    ("Check the oven in 25 minutes", "2026-03-04 10:40", "due"),
    ("Insurance payment deadline: the 20th", "2026-03-20 09:00", "due"),
    ("Thursday is the last day to register for the course", "2026-03-05 09:00", "due"),
    ("In 2 hours: check whether the backup job finished", "2026-03-04 12:15", "due"),  # checking is no hedge
    ("Lena and I will present the roadmap on Friday at 10", "2026-03-06 10:00", "due"),  # mine too
    ("The rental van has to go back by Saturday", "2026-03-07 09:00", "due"),  # a thing's, so mine to see to
    ("Remind me: Lena will send the proposal by Friday", "2026-03-06 09:00", "due"),  # I asked for it
]


@pytest.mark.parametrize(("note", "local", "kind"), READ_CAREFULLY)
def test_times_are_read_as_a_careful_person_reads_them(note, local, kind):
    found = find_anchor(note, WRITTEN_MS, BERLIN)
    assert found is not None and (found.when_at, found.when_kind) == (at(local), kind), found


@pytest.mark.parametrize(("note", "local", "kind", "evidence", "commitment"), POSITIVE)
def test_a_time_still_to_come_is_found(note, local, kind, evidence, commitment):
    assert find_anchor(note, WRITTEN_MS, BERLIN) == Anchor(at(local), kind, evidence, commitment)


@pytest.mark.parametrize("note", NEGATIVE)
def test_no_anchor_where_the_words_do_not_name_one(note):
    assert find_anchor(note, WRITTEN_MS, BERLIN) is None


def test_the_evidence_is_in_the_note():
    for note, *_ in POSITIVE:
        anchor = find_anchor(note, WRITTEN_MS, BERLIN)
        assert anchor is not None and anchor.evidence in note


def test_times_are_read_in_the_brains_zone_relative_to_the_capture():
    tokyo = ZoneInfo("Asia/Tokyo")
    late = int(datetime(2026, 3, 4, 23, 30, tzinfo=tokyo).timestamp() * 1000)  # still Wednesday there
    anchor = find_anchor("Dentist tomorrow at 3", late, tokyo)
    assert anchor is not None and anchor.when_at == int(datetime(2026, 3, 5, 15, tzinfo=tokyo).timestamp() * 1000)
    # The same instant is already Thursday in Auckland: "tomorrow" is Friday there.
    auckland = ZoneInfo("Pacific/Auckland")
    anchor = find_anchor("Dentist tomorrow at 3", late, auckland)
    assert datetime.fromtimestamp(anchor.when_at / 1000, auckland).date().isoformat() == "2026-03-06"


def test_a_friday_said_on_a_friday_is_the_next_one():
    friday = int(datetime(2026, 3, 6, 8, tzinfo=BERLIN).timestamp() * 1000)
    assert find_anchor("Dentist on Friday at 3", friday, BERLIN).when_at == at("2026-03-13 15:00")


def test_a_month_and_day_long_behind_the_writing_is_next_years():
    december = int(datetime(2026, 12, 20, 10, tzinfo=BERLIN).timestamp() * 1000)
    assert find_anchor("Dentist on Jan 5 at 3", december, BERLIN).when_at == at("2027-01-05 15:00")


def test_a_long_note_is_read_from_its_opening():
    note = "x " * 3000 + "Dentist on Friday at 3"
    assert find_anchor(note, WRITTEN_MS, BERLIN) is None


class Model:
    model_id = "fake"

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.asked = 0

    def complete(self, messages, max_tokens=512):
        self.asked += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer if isinstance(self.answer, str) else json.dumps(self.answer)


def judge(note: str, answer: object) -> Anchor | None:
    from second_brain.domain.memory import Memory

    extractor = Extractor(None, FixedClock(WRITTEN_MS), lambda: BERLIN, Model(answer))  # type: ignore[arg-type]  # no store: judging reads none
    return extractor.judge(Memory("m", exists=True, content=note), WRITTEN_MS).anchor


def test_a_checked_model_answer_is_believed():
    answer = {"anchor": True, "when": "2026-03-06T16:00", "when_kind": "event", "evidence": "friday  afternoon",
              "commitment": False}
    assert judge("Dentist Friday afternoon", answer) == Anchor(at("2026-03-06 16:00"), "event", "friday afternoon")
    assert judge("Dentist on Friday at 3", {"anchor": False}) is None  # the model may say none


def test_a_commitment_is_only_a_due_one():
    answer = {"anchor": True, "when": "2026-03-06T16:00", "when_kind": "event", "evidence": "Friday",
              "commitment": True}
    assert judge("Dentist Friday", answer).commitment is False


RULES = Anchor(at("2026-03-06 15:00"), "event", "on Friday at 3")


@pytest.mark.parametrize("answer", [
    LanguageModelUnavailable("down"),
    "not json at all",
    {"verdict": "anchor"},  # no anchor field
    {"anchor": True, "when": "2026-03-06T15:00", "when_kind": "event", "evidence": "on Saturday"},  # not in the text
    {"anchor": True, "when": "Friday 3pm", "when_kind": "event", "evidence": "on Friday at 3"},  # does not parse
    {"anchor": True, "when": "2026-03-06T15:00", "when_kind": "deadline", "evidence": "on Friday at 3"},
    {"anchor": True, "when": "2026-03-01T15:00", "when_kind": "event", "evidence": "on Friday at 3"},  # before
    {"anchor": True, "when": "2026-03-06T15:00", "when_kind": "event", "evidence": "on Friday at 3",
     "commitment": "yes"},
    {"anchor": True, "when": "2026-03-06T15:00", "when_kind": "event", "evidence": ""},
])
def test_a_bad_model_answer_falls_back_to_the_rules(answer):
    assert judge("Dentist on Friday at 3", answer) == RULES
