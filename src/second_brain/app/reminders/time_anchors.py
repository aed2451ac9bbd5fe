"""Reading a moment: Unix ms, a plain date or a datetime (without an offset: the brain's time zone), or words
("tomorrow at 10", "Friday at 9", "7d", "last week", "in 3 days") resolved in the brain's time zone. One grammar
(`PHRASE`) is what the parser reads and what the published schemas state."""

import calendar
import re
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from ...domain.errors import InvalidInput
from ...domain.extraction import find_anchor

# Eleven to thirteen digits are Unix ms from 1970-04-26 to 2286. Eight digits are a date (20261203), and ten
# would be Unix seconds, which read as ms would land in January 1970: refused rather than guessed at.
UNIX_MS = re.compile(r"[0-9]{11,13}")
UNIX_SECONDS = re.compile(r"[0-9]{10}")

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
UNITS = {"m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
         "h": 3_600_000, "hr": 3_600_000, "hrs": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
         "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
         "w": 7 * 86_400_000, "week": 7 * 86_400_000, "weeks": 7 * 86_400_000}
CLOCK = r"(?:(?:0?[1-9]|1[0-2])(?::[0-5][0-9])? ?[ap]m|(?:[01]?[0-9]|2[0-3])(?::[0-5][0-9])?)"
# The words every time parameter takes (case aside), as a pattern the schemas publish too: an amount of time ago or
# ahead, a day (a weekday, today, tomorrow, ...) with an optional clock time, or a week or month.
PHRASE = (
    r"(?:in )?[0-9]{1,4} ?(?:minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|months?|mo)(?: ago)?"
    r"|(?:now|today|tonight|tomorrow|yesterday|(?:(?:next|last|this) )?(?:" + "|".join(WEEKDAYS) + r"))"
    r"(?: at " + CLOCK + r")?"
    r"|(?:last|this|next) (?:week|month)"
)
PHRASE_RE = re.compile(PHRASE, re.IGNORECASE)
HINT = ('an ISO date (2026-12-03) or date-time (2026-12-03T09:30), Unix ms, or words such as "tomorrow at 10", '
        '"Friday at 9", "in 3 days", "7d" or "last week"')


def parse_moment(value: str, tz: ZoneInfo, now_ms: int, name: str = "when", ahead: bool = True) -> int:
    """Unix ms for any way of saying a moment: what parse_when reads, the words of `PHRASE`, or (`ahead`: a time
    to come, such as a reminder's) any phrase capture reads in a note ("end of month", "Dec 24 at noon"). A bare
    amount ("7d") counts ahead for a time to come and back for a bound on the past (`after`, `before`, `as_of`)."""
    text = " ".join(value.split())
    if not text:
        raise InvalidInput(f"{name} is empty: give {HINT}")
    if PHRASE_RE.fullmatch(text):
        return _phrase(text.lower(), tz, now_ms, ahead)
    if UNIX_MS.fullmatch(text) or UNIX_SECONDS.fullmatch(text) or text[:1].isdigit() and "-" in text[:8]:
        return parse_when(text, tz, name)
    if ahead and (anchor := find_anchor(text, now_ms, tz)) is not None \
            and " ".join(anchor.evidence.lower().split()) == text.lower().rstrip("."):
        return anchor.when_at
    raise InvalidInput(f"{name} must be {HINT} (got {text[:40]!r})")


def _phrase(text: str, tz: ZoneInfo, now_ms: int, ahead: bool) -> int:
    now = datetime.fromtimestamp(now_ms / 1000, tz)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    amount = re.fullmatch(r"(in )?([0-9]+) ?([a-z]+)( ago)?", text)
    if amount:
        forward = bool(amount.group(1)) or (ahead and not amount.group(4))
        count, unit = int(amount.group(2)), amount.group(3)
        if unit in ("month", "months", "mo"):
            return _ms(_months(now, count if forward else -count))
        return now_ms + (1 if forward else -1) * count * UNITS[unit]
    span = re.fullmatch(r"(last|this|next) (week|month)", text)
    if span:
        which, unit = span.groups()
        if unit == "week":
            monday = today - timedelta(days=today.weekday())
            if which == "last":
                return _ms(now - timedelta(days=7))  # as recall's "last week" reads it: the seven days before now
            return _ms(monday if which == "this" else monday + timedelta(days=7))
        first = today.replace(day=1)
        return _ms(first if which == "this" else _months(first, -1 if which == "last" else 1))
    day_part, _, clock = text.partition(" at ")
    if day_part == "now":
        return now_ms
    if day_part in ("today", "tonight", "tomorrow", "yesterday"):
        day = today.date() + timedelta(days={"tomorrow": 1, "yesterday": -1}.get(day_part, 0))
        default = time(20) if day_part == "tonight" else time(9) if ahead else time()
    else:
        which, _, weekday = day_part.rpartition(" ")
        wanted = WEEKDAYS.index(weekday)
        back = (which == "last") or (not which and not ahead)
        if which == "this":
            day = today.date() + timedelta(days=wanted - today.weekday())
        elif back:
            day = today.date() - timedelta(days=(today.weekday() - wanted) % 7 or 7)
        else:
            day = today.date() + timedelta(days=(wanted - today.weekday()) % 7 or 7)
            later_today = today.date() + timedelta(days=(wanted - today.weekday()) % 7)
            if not which and clock and datetime.combine(later_today, _clock(clock, False), tz) > now:
                day = later_today  # "Monday at 7pm", said on a Monday afternoon: this evening
        default = time(9) if ahead else time()
    moment = datetime.combine(day, _clock(clock, day_part == "tonight") if clock else default, tz)
    return _ms(moment)


def _clock(text: str, evening: bool) -> time:
    found = re.fullmatch(r"([0-9]{1,2})(?::([0-9]{2}))? ?([ap]m)?", text)
    assert found is not None, "PHRASE admits only clock times"
    hour, minute, half = int(found.group(1)), int(found.group(2) or 0), found.group(3)
    if half:
        hour = hour % 12 + (12 if half == "pm" else 0)
    elif evening and hour < 12:
        hour += 12
    return time(hour, minute)


def _months(moment: datetime, count: int) -> datetime:
    month = moment.month - 1 + count
    year, month = moment.year + month // 12, month % 12 + 1
    return moment.replace(year=year, month=month, day=min(moment.day, calendar.monthrange(year, month)[1]))


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def parse_when(value: str, tz: ZoneInfo, name: str = "when") -> int:
    """Unix milliseconds for Unix ms, an ISO date (midnight, local) or datetime (local unless it has an offset)."""
    text = value.strip()
    if UNIX_MS.fullmatch(text):
        return int(text)
    if UNIX_SECONDS.fullmatch(text):
        raise InvalidInput(f"{name} looks like Unix seconds; give Unix milliseconds ({text}000)")
    try:
        if len(text) == 10:
            moment = datetime.combine(date.fromisoformat(text), time(), tz)
        else:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=tz)
    except ValueError:
        raise InvalidInput(f"{name} must be an ISO date (2026-12-03) or datetime (2026-12-03T09:30)") from None
    return int(moment.timestamp() * 1000)
