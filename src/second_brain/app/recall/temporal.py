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


# Dates a query names outright ("on October 13, 2023", "in May 2022", "in June", "in 2023"): not a filter, since
# the date may be when something happened rather than when it was written down, but memories written then rank
# higher. A bare month name counts only after "in", "during", "of", "since", "until" or "by" ("may" is a verb too).
MONTH = (r"(?P<{g}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
         r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
ORDINAL = r"(?:st|nd|rd|th)?"
NAMED_DATE = re.compile(
    r"\b(?:"
    rf"(?P<d1>\d{{1,2}}){ORDINAL}\s+(?:of\s+)?{MONTH.format(g='m1')},?\s*(?P<y1>\d{{4}})"  # 13 October 2023
    rf"|{MONTH.format(g='m2')}\s+(?P<d2>\d{{1,2}}){ORDINAL},?\s*(?P<y2>\d{{4}})"  # October 13, 2023
    r"|(?P<y3>\d{4})-(?P<m3>\d{2})-(?P<d3>\d{2})"  # 2023-10-13
    rf"|{MONTH.format(g='m4')},?\s+(?P<y4>\d{{4}})"  # May 2022
    rf"|(?:in|during|of|since|until|by)\s+{MONTH.format(g='m5')}(?![\w-]|,?\s*\d)"  # in June
    r"|(?:in|during|of|since|until|by)\s+(?P<y6>(?:19|20)\d{2})(?![\w-])"  # in 2023
    r")",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class NamedDates:
    query: str  # the query without the dates
    zone: ZoneInfo  # the brain's, which the dates are read in
    windows: tuple[tuple[int, int], ...] = ()  # days, months and years named with their year: unix ms, inclusive
    months: frozenset[int] = frozenset()  # months named without a year: that month of any year
    named_months: frozenset[int] = frozenset()  # every month the query names, with a year or without

    def contain(self, moment: int) -> bool:
        if any(start <= moment <= end for start, end in self.windows):
            return True
        return bool(self.months) and datetime.fromtimestamp(moment / 1000, self.zone).month in self.months

    def said_in(self, content: str) -> bool:
        """Whether a memory names a month the query names ("AWS bill October: …" for "costs in October"): about
        then, whenever it was written."""
        return bool(self.named_months) and any(
            MONTHS[word.lower()[:3]] in self.named_months for word in MONTH_WORD.findall(content))

    def match(self, content: str, moment: int) -> bool:
        """Written in a period the query names, or naming its month."""
        return self.contain(moment) or self.said_in(content)


# Month names in a memory, any case but May, which must be written as a name ("I may go" is no month).
MONTH_WORD = re.compile(r"\b((?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?"
                        r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)|May)\b")


def named_dates(query: str, tz: ZoneInfo) -> NamedDates | None:
    """The days, months and years a query names, in the brain's zone; None if it names none."""
    windows: list[tuple[int, int]] = []
    months: set[int] = set()
    named: set[int] = set()
    for match in NAMED_DATE.finditer(query):
        groups = match.groupdict()
        year = next((int(groups[g]) for g in ("y1", "y2", "y3", "y4", "y6") if groups[g]), None)
        name = next((groups[g] for g in ("m1", "m2", "m4", "m5") if groups[g]), None)
        month = MONTHS[name.lower()[:3]] if name else (int(groups["m3"]) if groups["m3"] else None)
        day = next((int(groups[g]) for g in ("d1", "d2", "d3") if groups[g]), None)
        if month is not None and 1 <= month <= 12:
            named.add(month)
        try:
            if year is None:  # a match without a year names a month ("in June")
                if month is not None:
                    months.add(month)
            elif month is None:
                windows.append((_ms(datetime(year, 1, 1, tzinfo=tz)), _ms(datetime(year + 1, 1, 1, tzinfo=tz)) - 1))
            elif day is None:
                first = datetime(year, month, 1, tzinfo=tz)
                following = first.replace(year=year + 1, month=1) if month == 12 else first.replace(month=month + 1)
                windows.append((_ms(first), _ms(following) - 1))
            else:
                start = datetime(year, month, day, tzinfo=tz)
                windows.append((_ms(start), _ms(start + timedelta(days=1)) - 1))
        except ValueError:  # 31 February, month 13
            continue
    if not windows and not months:
        return None
    rest = " ".join(NAMED_DATE.sub(" ", query).split())
    return NamedDates(rest or query, tz, tuple(windows), frozenset(months), frozenset(named))
