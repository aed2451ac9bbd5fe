"""Reading `when` values: a plain date or a datetime; without an offset they mean the brain's time zone."""

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from ..domain.errors import InvalidInput


def parse_when(value: str, tz: ZoneInfo, name: str = "when") -> int:
    """Unix milliseconds for an ISO date (midnight, local) or datetime (local unless it has an offset)."""
    text = value.strip()
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
