"""Reading `when`: ISO 8601 dates and datetimes in the brain's time zone, or Unix milliseconds."""

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from second_brain.app.reminders.time_anchors import parse_when
from second_brain.domain.errors import InvalidInput

TOKYO = ZoneInfo("Asia/Tokyo")
UTC = ZoneInfo("UTC")
NEW_YEAR_UTC = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-12-03", ms(datetime(2026, 12, 3, tzinfo=TOKYO))),
    ("20261203", ms(datetime(2026, 12, 3, tzinfo=TOKYO))),  # eight digits are a date, not milliseconds
    ("2026-12-03T09:30", ms(datetime(2026, 12, 3, 9, 30, tzinfo=TOKYO))),
    ("2026-01-01T00:00:00Z", NEW_YEAR_UTC),
    ("2026-01-01T09:00:00+09:00", NEW_YEAR_UTC),
    ("1767225600000", NEW_YEAR_UTC),
    (" 1767225600000 ", NEW_YEAR_UTC),
    ("86400000000", 86_400_000_000),  # eleven digits: 1972-09-27
])
def test_iso_8601_and_unix_ms_are_read(value, expected):
    assert parse_when(value, TOKYO) == expected


def test_unix_ms_need_no_time_zone():
    assert parse_when("1767225600000", TOKYO) == parse_when("1767225600000", UTC)


def test_unix_seconds_are_refused_rather_than_read_as_1970():
    with pytest.raises(InvalidInput, match=r"when looks like Unix seconds; give Unix milliseconds \(1767225600000\)"):
        parse_when("1767225600", UTC)


@pytest.mark.parametrize("value", ["", "tomorrow", "2026-13-01", "12345", "17672256000000000", "-1767225600000",
                                   "1767225600000.5", "١٧٦٧٢٢٥٦٠٠٠٠٠"])
def test_anything_else_keeps_the_iso_message(value):
    with pytest.raises(InvalidInput) as raised:
        parse_when(value, UTC, "until")
    assert str(raised.value) == "until must be an ISO date (2026-12-03) or datetime (2026-12-03T09:30)"
