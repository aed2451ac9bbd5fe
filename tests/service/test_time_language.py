"""One time language for every time parameter (issue 63 item 2): ISO 8601, Unix ms, or words read in the brain's
time zone; a bare amount counts ahead for a time to come and back for a bound on the past. The published pattern
and the parser read the same words."""

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from second_brain.app.reminders.time_anchors import PHRASE, parse_moment
from second_brain.domain.errors import InvalidInput

BERLIN = ZoneInfo("Europe/Berlin")
NOW = int(datetime(2026, 12, 7, 14, 0, tzinfo=BERLIN).timestamp() * 1000)  # a Monday afternoon


def read(text: str, ahead: bool) -> str:
    return datetime.fromtimestamp(parse_moment(text, BERLIN, NOW, "x", ahead) / 1000, BERLIN).isoformat()


@pytest.mark.parametrize(("text", "ahead", "meant"), [
    ("tomorrow at 10", True, "2026-12-08T10:00:00+01:00"),
    ("Friday at 9", True, "2026-12-11T09:00:00+01:00"),
    ("friday", False, "2026-12-04T00:00:00+01:00"),  # a bound on the past: the Friday gone
    ("next monday", True, "2026-12-14T09:00:00+01:00"),
    ("monday at 7pm", True, "2026-12-07T19:00:00+01:00"),  # said on a Monday afternoon: this evening
    ("this monday", False, "2026-12-07T00:00:00+01:00"),
    ("tonight at 9", True, "2026-12-07T21:00:00+01:00"),
    ("7d", True, "2026-12-14T14:00:00+01:00"),
    ("7d", False, "2026-11-30T14:00:00+01:00"),
    ("3 days ago", True, "2026-12-04T14:00:00+01:00"),
    ("in 2 hours", False, "2026-12-07T16:00:00+01:00"),
    ("in 2 months", True, "2027-02-07T14:00:00+01:00"),
    ("last week", False, "2026-11-30T14:00:00+01:00"),  # as recall reads it: the seven days before now
    ("this week", False, "2026-12-07T00:00:00+01:00"),
    ("next month", True, "2027-01-01T00:00:00+01:00"),
    ("yesterday", False, "2026-12-06T00:00:00+01:00"),
    ("now", False, "2026-12-07T14:00:00+01:00"),
    ("2026-12-24", True, "2026-12-24T00:00:00+01:00"),
    ("2026-12-24T08:30", True, "2026-12-24T08:30:00+01:00"),
    ("1796720400000", False, "2026-12-08T10:00:00+01:00"),
    ("end of month", True, "2026-12-31T09:00:00+01:00"),  # what capture reads in a note, for a time to come
    ("Dec 24 at noon", True, "2026-12-24T12:00:00+01:00"),
])
def test_each_way_of_saying_a_moment_is_read_in_the_brains_zone(text, ahead, meant):
    assert read(text, ahead) == meant


@pytest.mark.parametrize("text", ["someday", "friday at 25", "7 parsecs", "end of month tomorrow", ""])
def test_what_the_language_does_not_hold_is_refused_saying_what_it_takes(text):
    with pytest.raises(InvalidInput, match=r'^x (must be|is empty).*"7d"'):
        parse_moment(text, BERLIN, NOW, "x", True)
    with pytest.raises(InvalidInput, match="looks like Unix seconds"):  # ten digits: refused, not read as 1970
        parse_moment("1796720400", BERLIN, NOW, "x", True)


@pytest.mark.parametrize("text", ["tomorrow", "friday at 9:30 pm", "3 days ago", "in 2 weeks", "next month", "12h",
                                  "last friday at 17:45", "tonight"])
def test_the_published_pattern_admits_only_what_the_parser_reads(text):
    assert re.fullmatch(PHRASE, text)
    assert parse_moment(text, BERLIN, NOW, "x", False) and parse_moment(text, BERLIN, NOW, "x", True)
