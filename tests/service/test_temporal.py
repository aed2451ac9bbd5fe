"""Time phrases in queries: which window each names, in the brain's time zone."""

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from second_brain.app.recall.temporal import time_window

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
