"""Time phrases in queries: which window each names, in the brain's time zone."""

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from second_brain.app.recall.temporal import named_dates, time_window

UTC = ZoneInfo("UTC")
NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)  # a Monday


def ms(*parts: int) -> int:
    return int(datetime(*parts, tzinfo=UTC).timestamp() * 1000)


def window(query: str, tz: ZoneInfo = UTC):
    found = time_window(query, int(NOW.timestamp() * 1000), tz)
    return found and (found.query, found.after, found.before)


NOW_MS = int(NOW.timestamp() * 1000)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what did I decide yesterday", ("what did I decide", ms(2026, 11, 29), ms(2026, 11, 30) - 1)),
        ("notes from today", ("notes from", ms(2026, 11, 30), NOW_MS)),
        ("deploys in the last 3 days", ("deploys in the", ms(2026, 11, 27, 15), NOW_MS)),
        ("bugs last 2 weeks", ("bugs", ms(2026, 11, 16, 15), NOW_MS)),
        ("pricing last week", ("pricing", ms(2026, 11, 23, 15), NOW_MS)),
        ("this week standups", ("standups", ms(2026, 11, 30), NOW_MS)),
        ("invoices last month", ("invoices", ms(2026, 10, 1), ms(2026, 11, 1) - 1)),
        ("this month", ("this month", ms(2026, 11, 1), NOW_MS)),
        ("the launch around Dec 3", ("the launch", ms(2025, 11, 30), ms(2025, 12, 7) - 1)),
        ("around March 10 offsite", ("offsite", ms(2026, 3, 7), ms(2026, 3, 14) - 1)),
    ],
)
def test_phrases(query, expected):
    assert window(query) == expected


def test_no_phrase_no_window():
    assert window("what did I decide about pricing") is None
    assert window("around feb 31") is None


def test_dates_follow_the_configured_time_zone():
    tokyo = ZoneInfo("Asia/Tokyo")  # 15:00 UTC is already Dec 1 in Tokyo
    _, after, _ = window("today", tokyo)
    assert after == int(datetime(2026, 12, 1, tzinfo=tokyo).timestamp() * 1000)


@pytest.mark.parametrize(
    ("query", "rest", "windows", "months"),
    [
        ("What painting did Mel show on October 13, 2023?", "What painting did Mel show on ?",
         [(ms(2023, 10, 13), ms(2023, 10, 14) - 1)], set()),
        ("the book on 8th December, 2023", "the book on", [(ms(2023, 12, 8), ms(2023, 12, 9) - 1)], set()),
        ("forest photo December 1,2023", "forest photo", [(ms(2023, 12, 1), ms(2023, 12, 2) - 1)], set()),
        ("notes 2023-02-01", "notes", [(ms(2023, 2, 1), ms(2023, 2, 2) - 1)], set()),
        ("workouts in December 2023", "workouts in", [(ms(2023, 12, 1), ms(2024, 1, 1) - 1)], set()),
        ("camping in June", "camping", [], {6}),
        ("trips in 2023 and in Sept", "trips and", [(ms(2023, 1, 1), ms(2024, 1, 1) - 1)], {9}),
    ],
)
def test_named_dates(query, rest, windows, months):
    found = named_dates(query, UTC)
    assert (found.query, list(found.windows), set(found.months)) == (rest, windows, months)


def test_a_named_month_without_a_year_is_that_month_of_any_year_and_may_is_also_a_verb():
    assert named_dates("may I see the pricing notes", UTC) is None
    assert named_dates("what happened on February 30, 2023", UTC) is None
    june = named_dates("camping in June", UTC)
    assert june.contain(ms(2019, 6, 30, 23)) and not june.contain(ms(2019, 7, 1))
    # a memory naming the month is about then, whenever it was written
    october = named_dates("why did our cloud costs jump in October", UTC)
    assert october.match("AWS bill October: $18,900", ms(2023, 11, 3)) and october.said_in("the Oct invoice")
    assert not october.match("AWS bill September: $14,200", ms(2023, 11, 3))
    assert named_dates("the trip in June 2023", UTC).said_in("June: Lisbon")
    # a day is the day in the brain's zone
    tokyo = ZoneInfo("Asia/Tokyo")
    day = named_dates("on 13 October 2023", tokyo)
    assert day.contain(ms(2023, 10, 12, 16)) and not day.contain(ms(2023, 10, 13, 16))
