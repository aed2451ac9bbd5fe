"""Reading `when` values: Unix ms, a plain date or a datetime; without an offset they mean the brain's time zone."""

import re
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from ...domain.errors import InvalidInput

# Eleven to thirteen digits are Unix ms from 1970-04-26 to 2286. Eight digits are a date (20261203), and ten
# would be Unix seconds, which read as ms would land in January 1970: refused rather than guessed at.
UNIX_MS = re.compile(r"[0-9]{11,13}")
UNIX_SECONDS = re.compile(r"[0-9]{10}")


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
