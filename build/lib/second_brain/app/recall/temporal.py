"""Time phrases in a query ("last week", "yesterday", "around Mar 3") become a time window."""

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
PHRASE = re.compile(
    r"\b(?:(?P<n>last \d{1,3}) (?P<unit>days?|weeks?)|last week|this week|last month|this month|yesterday|today"
    r"|around (?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* (?P<day>\d{1,2}))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TimeWindow:
    query: str  # the query without the phrase
    after: int  # unix ms, inclusive
    before: int  # unix ms, inclusive


def time_window(query: str, now_ms: int, tz: ZoneInfo) -> TimeWindow | None:
    """The window named by the first time phrase in the query, or None."""
    match = PHRASE.search(query)
    if match is None:
        return None
    now = datetime.fromtimestamp(now_ms / 1000, tz)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    phrase = match.group(0).lower()
    start, end = _window(phrase, match, now, today)
    if start is None:
        return None
    rest = " ".join((query[: match.start()] + " " + query[match.end():]).split())
    return TimeWindow(rest or query, _ms(start), _ms(end))


def _window(phrase: str, match: re.Match[str], now: datetime, today: datetime
            ) -> tuple[datetime | None, datetime]:
    if match.group("n"):
        count = int(match.group("n").split()[1])
        days = count * (7 if match.group("unit").lower().startswith("week") else 1)
        return now - timedelta(days=days), now
    if phrase == "last week":
        return now - timedelta(days=7), now
    if phrase == "this week":
        return today - timedelta(days=today.weekday()), now
    if phrase == "this month":
        return today.replace(day=1), now
    if phrase == "last month":
        first = today.replace(day=1)
        return (first - timedelta(days=1)).replace(day=1), first - timedelta(milliseconds=1)
    if phrase == "yesterday":
        return today - timedelta(days=1), today - timedelta(milliseconds=1)
    if phrase == "today":
        return today, now
    month, day = MONTHS[match.group("mon").lower()[:3]], int(match.group("day"))
    try:
        centre = today.replace(month=month, day=day)
    except ValueError:
        return None, now
    if centre > now:
        centre = centre.replace(year=centre.year - 1)
    return centre - timedelta(days=3), centre + timedelta(days=4) - timedelta(milliseconds=1)


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
