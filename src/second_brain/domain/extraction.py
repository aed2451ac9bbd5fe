"""Time anchors and commitments found in a note's own words ("dentist on Friday at 3", "send the deck by the 15th").

Pure rules, read relative to when the note was written, in the brain's time zone. Precision matters more than
recall: a sentence that is a question, a condition, a habit, cancelled or in the past tense gives nothing, and
neither do code, URLs and version numbers. The rules, in order of reading:

- A date phrase: an ISO date (2026-12-04, optionally with THH:MM), a month and day ("March 3", "Dec 4, 2026",
  "4 December", "the 4th of December"), "the 15th" after on/by/before/until (the next 15th), a weekday after
  on/by/before/until/this/next/coming or followed by a time ("on Friday", "next Tuesday 10am", "Friday at 3pm"),
  "today"/"tonight"/"tomorrow" (with morning, afternoon, evening, night), "the day after tomorrow",
  "in 3 days" / "in two weeks" / "in 2 hours" / "in 40 minutes", "the end of the month" (its last day), "the end
  of the week" (Friday), "deadline: the 15th", "Friday is the last day to ...". A weekday followed by its date
  ("Sunday 13 December") is read as the date; a date in "(was 23 December)" or moved from ("from March 9 to March
  11") is not the one meant.
- A weekday names its next occurrence after the day of writing: said on a Friday, "on Friday" is a week later;
  "next Tuesday" is the coming Tuesday too (the nearest reading of an ambiguous phrase).
- A month and day without a year is the next one on or after the day of writing, unless it passed less than 90
  days before (then it is about the past: none); "the 15th" is the next 15th.
- A time next to the date phrase ("at 3", "3pm", "14:30", "at 9:30am", "noon"). A bare hour without am/pm reads
  1-7 as afternoon (at 3 -> 15:00: nobody books the dentist at 3 in the night), 8-11 as morning, 12 as noon,
  13-23 as written; after "tonight" or "evening", or for an evening event (a party, dinner, concert, the
  theatre), every hour up to 11 is pm. A range ("from 15:00 to 17:00") begins at its start. With no time beside
  the date, the one unmistakable time elsewhere in the sentence ("curtain at 19:30"). Without a time: 09:00, or
  the part of the day named (tomorrow afternoon 15:00, evening 19:00, tonight 20:00). "today" needs a time.
- The kind: `due` after by/before/until or with "due"/"deadline" in the sentence; else `event` for appointments
  and meetings (dentist, meeting, call with, flight, ...); else `due` for a commitment; else `event`.
- A commitment ("I need to", "I'll", "I will", "must", "remember to", "don't forget to", "todo", or an imperative
  such as "send"/"call"/"pay" opening the sentence) with a `due` anchor makes the memory an open loop.
- An anchor at or before the time of writing is none: the phrase was about the past, or was already late.
- Someone else's commitment ("Lena will send the proposal by Friday": a named person or he/she/they promising,
  without "I" or "we") is no reminder of mine.
- Days under a label naming a routine ("Running plan: intervals on Tuesday", "Cleaning rota: ...", "My gym
  schedule: ...") recur: none is one day to be reminded of. A plan for one stretch ("Weekend plan:", "This
  week's schedule:", "Lisbon trip plan:") names days that come once and is read as usual.
"""

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from .text import PROTECTED_SPANS

MAX_CHARS = 4000  # a note's opening: what a long document commits to is not in its 40th page
DEFAULT_TIME = time(9, 0)
RECENT_PAST_DAYS = 90  # a month and day this far behind the writing is past; further back, it is next year's
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "fourteen": 14}
PARTS_OF_DAY = {"morning": time(9), "afternoon": time(15), "evening": time(19), "night": time(20)}

MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
         r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
ORD = r"(?:st|nd|rd|th)"
DATE = re.compile(
    r"\b(?:"
    r"(?P<iso>(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})(?:[T ](?P<ih>\d{2}):(?P<imin>\d{2}))?)(?![\w-])"
    rf"|(?P<md>(?P<mdm>{MONTH})\s+(?P<mdd>\d{{1,2}}){ORD}?(?:,?\s+(?P<mdy>\d{{4}}))?)(?![\w:]|\.\d)"
    rf"|(?P<dm>(?:the\s+)?(?P<dmd>\d{{1,2}}){ORD}?\s+(?:of\s+)?(?P<dmm>{MONTH})(?:,?\s+(?P<dmy>\d{{4}}))?)\b"
    rf"|(?P<nth>the\s+(?P<nd>\d{{1,2}}){ORD})\b(?!\s+(?:century|floor|anniversary|time|place|row|street|st\b"
    r"|avenue|edition|round|day|week|hole|percent|birthday|minute|hour|page|chapter|version))"
    r"|(?P<wd>(?:(?P<wmod>this|next|coming)\s+)?(?P<wday>monday|tuesday|wednesday|thursday|friday|saturday|sunday))"
    r"(?!['’]s\b|s\b)"
    r"|(?P<rel>(?:the\s+)?day\s+after\s+tomorrow|tomorrow(?:\s+(?P<tpart>morning|afternoon|evening|night))?"
    r"|tonight|today|this\s+(?P<tdpart>morning|afternoon|evening))"
    r"|(?P<later>in\s+(?P<n>\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fourteen)"
    r"\s+(?P<unit>days?|weeks?|hours?|minutes?|mins?))"
    r"|(?P<eo>(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?(?P<eonext>next\s+)?(?P<eou>month|week))"
    r")\b",
    re.IGNORECASE,
)
LEADING = re.compile(r"\b(?P<lead>on|by|before|until|till|due|for|no\s+later\s+than)\s+$", re.IGNORECASE)
HOUR = r"(?P<h>\d{1,2})(?::(?P<m>[0-5]\d))?(?:\s*(?P<ap>a\.?m\.?|p\.?m\.?)(?!\w))?"
TIME_AFTER = re.compile(
    rf"^\s*,?\s*(?:(?:at|@|from|around|by)\s+{HOUR}(?!\s*(?:%|percent|people|of|times|x\b|min|days?|weeks?)|[\d.,]\d)"
    r"|(?P<h2>\d{1,2})(?::(?P<m2>[0-5]\d))?\s*(?P<ap2>a\.?m\.?|p\.?m\.?)(?!\w)|(?P<h3>\d{1,2}):(?P<m3>[0-5]\d)(?!\d)"
    r"|(?:at\s+)?(?P<noon>noon|midday))",
    re.IGNORECASE,
)
TIME_BEFORE = re.compile(
    r"(?:\b(?:at|@)\s+)?(?:(?P<h>\d{1,2})(?::(?P<m>[0-5]\d))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)|(?P<noon>noon|midday)"
    r"|(?P<h3>\d{1,2}):(?P<m3>[0-5]\d)|\bat\s+(?P<h4>\d{1,2}))\s*(?:on\s+|,\s*)?$",
    re.IGNORECASE,
)
# A sentence with one of these says nothing about a time still to come.
PAST = re.compile(
    r"\b(?:was|were|went|had|did|met|happened|ago|yesterday|last\s+(?:week|month|year|night|" + "|".join(WEEKDAYS)
    + r")|used\s+to|born|died|(?:i|we|he|she|they|you)(?:\s+(?:already|just))?\s+(?:(?!need|feed|speed|seed|proceed"
    r"|exceed|succeed)\w+ed|said|told|thought|knew|wrote|sent|paid|bought|made|took|came|gave|saw|left|found|felt"
    r"|kept|heard|brought|began|ran|spoke|forgot|got)|(?:have|has|'ve|’ve)\s+(?:already\s+)?(?:been|\w+ed|done|sent|paid|got|gotten)"
    r"|went\s+well)\b",
    re.IGNORECASE,
)
HEDGED = re.compile(
    r"\b(?:if|unless|(?<!check\s)(?<!see\s)(?<!ask\s)(?<!find\sout\s)whether|maybe|perhaps|might|could|would|every|each|usually|always|often|sometimes|never"
    r"|typically|\w+['’]d|cancell?ed|called\s+off|no\s+longer|not\s+(?:on|by|until))\b",
    re.IGNORECASE,
)
# A label naming a routine ("Running plan:", "Cleaning rota:", "My gym schedule:"): the weekdays under it recur, so
# none of them is one day to be reminded of. A plan for one stretch of time ("Weekend plan:", "This week's
# schedule:") names days that come once.
ROUTINE_LABEL = re.compile(
    r"^\s*(?P<label>[^:\n]{0,40}?)\b(?:plan|schedule|routine|rota|timetable|regimen|programme|program)\s*:",
    re.IGNORECASE,
)
ONE_STRETCH = re.compile(
    r"\b(?:today|tonight|tomorrow|this|next|weekend|trip|holiday|vacation|day|(?:mon|tues|wednes|thurs|fri|satur|sun)"
    r"day|january|february|march|april|may|june|july|august|september|october|november|december)\b",
    re.IGNORECASE,
)
DUE_WORDS = re.compile(r"\b(?:due|deadline|no\s+later\s+than|last\s+day\s+to)\b", re.IGNORECASE)
# An event in the evening: its bare hour from 8 to 11 is in the evening too ("the party starts at 8").
EVENING_EVENTS = re.compile(
    r"\b(?:party|dinner|drinks|concert|gig|show|movie|cinema|theatre|theater|opera|karaoke|bar|pub|club|"
    r"date\s+night|gala|premiere)\b", re.IGNORECASE)
# A day and month right after a weekday: "Sunday 13 December", "Thursday, March 5": the date says it, not the day.
DATE_AFTER_WEEKDAY = re.compile(
    rf"^\s*,?\s*(?:the\s+)?(?:\d{{1,2}}{ORD}?\s+(?:of\s+)?{MONTH}|{MONTH}\s+\d{{1,2}})\b", re.IGNORECASE)
WEEKDAY_BEFORE = re.compile(r"\b(?:" + "|".join(WEEKDAYS) + r")\s*,?\s*$", re.IGNORECASE)
# What a date is not: the one it was, or the one it moved from ("(was 23 December)", "from March 9 to March 11").
FORMER = re.compile(r"\((?:was|previously|originally|formerly|not)\b[^)]*\)", re.IGNORECASE)
MOVED_FROM = re.compile(r"\b(?:from|instead\s+of)\s+$", re.IGNORECASE)
# The start of a range is when it begins: "from 15:00 to 17:00 on Saturday" begins at 15:00.
RANGE_START = re.compile(
    r"\bfrom\s+(?P<h>\d{1,2})(?::(?P<m>[0-5]\d))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)?\s*(?:to|until|till|-|–)\s*$",
    re.IGNORECASE)
# An unmistakable time anywhere in the sentence ("curtain at 19:30", "doors 7:15pm"), when none stands by the date.
CLOCK_TIME = re.compile(r"\b(?P<h3>\d{1,2}):(?P<m3>[0-5]\d)(?!\d)|\b(?P<h2>\d{1,2})(?::(?P<m2>[0-5]\d))?\s*"
                        r"(?P<ap2>a\.?m\.?|p\.?m\.?)(?!\w)", re.IGNORECASE)
# Someone else's commitment ("Lena will send the proposal by Friday", "Hana ... will circulate it on Thursday"): a
# sentence whose subject is a named person or he/she/they, promising something, with no "I" or "we" in it, is not a
# reminder of mine. "The rental car has to go back" (a thing) and "Remind me ..." (my request) are.
THIRD_PARTY = re.compile(
    r"^\W*(?:(?!(?:I|We|The|A|An|This|That|These|Those|My|Our|Your|Their|His|Her|Its|Please|Remind|Don|Do|Note"
    + "".join("|" + day.capitalize() for day in WEEKDAYS) + r"|Today|Tomorrow|Tonight)\b)[A-Z][a-z]+"
    r"(?:['’]s\s+\w+)?|He|She|They)\b")
THEIR_PROMISE = re.compile(r"\b(?:will|is\s+going\s+to|are\s+going\s+to|promised\s+to|has\s+to|needs\s+to"
                           r"|is\s+supposed\s+to)\b|[a-z]['’]ll\b", re.IGNORECASE)
FIRST_PERSON = re.compile(r"\b(?:I|[Ww]e|us)\b")
DEADLINE_LABEL = re.compile(r"\b(?:deadline|due)\s*:\s*$", re.IGNORECASE)
LAST_DAY = re.compile(r"^\s+is\s+the\s+(?:last\s+day|deadline)\b", re.IGNORECASE)
EVENT_WORDS = re.compile(
    r"\b(?:appointment|appt|meeting|meet(?:up)?|call\s+with|dentist|doctor|dr\.?|physio|vet|lunch|dinner|breakfast"
    r"|brunch|coffee\s+with|drinks|flight|train|interview|party|wedding|birthday|concert|class|lesson|session"
    r"|standup|stand-up|demo|webinar|conference|visit|check-?up|haircut|game|match|show|gig|trip|date\s+with"
    r"|ceremony|recital|exam|talk|presentation|workshop|kickoff|kick-off|1:1|one-on-one|sync|retro|offsite)\b",
    re.IGNORECASE,
)
COMMITMENT = re.compile(
    r"\b(?:(?:i|we)\s+(?:really\s+|still\s+|definitely\s+)?(?:need|have\s+to|have\s+got\s+to|got\s+to|must|will|shall|promised|ought)\b"
    r"|(?:i|we)(?:'ll|’ll|'ve\s+got\s+to|’ve\s+got\s+to)|remember\s+to|don'?t\s+forget\s+to|do\s+not\s+forget\s+to"
    r"|remind\s+me\s+to|must|need\s+to|have\s+to|has\s+to|to-?do\b|todo\b|task:)",
    re.IGNORECASE,
)
IMPERATIVE = re.compile(
    r"^\W*(?:please\s+)?(?:send|call|email|e-mail|mail|pay|submit|finish|buy|book|renew|file|write|review|prepare"
    r"|reply|respond|schedule|order|return|sign|ship|deliver|complete|fix|follow\s+up|ping|text|draft|update"
    r"|cancel|check|get|pick\s+up|drop\s+off|bring|register|apply|confirm|invoice|post|publish|clean|hand\s+in"
    r"|print|backup|back\s+up|upload|share|read|finalize|finalise|deploy|release|transfer|move)\b",
    re.IGNORECASE,
)
# Version numbers and dotted numbers (1.2.3, v2.0, 3.12) are not dates or times.
VERSION = re.compile(r"\bv?\d+(?:\.\d+)+\b", re.IGNORECASE)
SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|\n+|;")
ABBREVIATED = re.compile(r"\b(?:(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.(?=\s*\d)|(?:dr|mr|mrs|ms)\.(?=\s)"
                         r"|[ap]\.m\.)", re.IGNORECASE)
DUE_LEADS = ("by", "before", "until", "till", "due", "no later than")
WEEKDAY_LEADS = ("on", "by", "before", "due", "for", "no later than")  # "away until Friday" is no anchor


@dataclass(frozen=True)
class Anchor:
    """A time a note names: when (unix ms), which kind, the words that said it, and whether it is a commitment."""

    when_at: int
    when_kind: str  # "event" or "due"
    evidence: str
    commitment: bool = False


def find_anchor(content: str, captured_at: int, tz: ZoneInfo) -> Anchor | None:
    """The first time a sentence of the note points to after it was written, or None."""
    original = content[:MAX_CHARS]
    masked = _mask(original)
    written = datetime.fromtimestamp(captured_at / 1000, tz)
    start = 0
    for end_match in [*SENTENCE_END.finditer(masked), None]:
        end = end_match.end() if end_match else len(masked)
        sentence = masked[start:end]
        question = end_match is not None and "?" in end_match.group(0)
        if not question:
            anchor = _sentence_anchor(original, masked, start, sentence, written, tz)
            if anchor is not None and anchor.when_at > captured_at:
                return anchor
        start = end
    return None


def _mask(text: str) -> str:
    """The text with code, URLs and version numbers blanked, and the dots of abbreviations taken out, at the same
    offsets (so the evidence is cut from the original)."""
    def blank(match: re.Match[str]) -> str:
        return " " * len(match.group(0))

    text = PROTECTED_SPANS.sub(blank, text)
    text = VERSION.sub(blank, text)
    text = FORMER.sub(blank, text)
    return ABBREVIATED.sub(lambda m: m.group(0)[:-1] + " ", text)


def _sentence_anchor(original: str, masked: str, offset: int, sentence: str, written: datetime,
                     tz: ZoneInfo) -> Anchor | None:
    if PAST.search(sentence) or HEDGED.search(sentence):
        return None
    if (routine := ROUTINE_LABEL.match(sentence)) and not ONE_STRETCH.search(routine.group("label")):
        return None  # "Running plan: intervals on Tuesday": every Tuesday, not the next one
    if (THIRD_PARTY.match(sentence) and THEIR_PROMISE.search(sentence) and not FIRST_PERSON.search(sentence)
            and not IMPERATIVE.search(sentence)):
        return None  # their commitment, not mine
    for match in DATE.finditer(sentence):
        if MOVED_FROM.search(sentence[: match.start()]) and DATE.search(sentence, match.end()):
            continue  # "moved from March 9 to March 11": the date it moved to
        found = _resolve(match, sentence, written, tz)
        if found is None:
            continue
        moment, span = found
        lead = _leading(sentence[: match.start()])
        due_cue = lead in DUE_LEADS or bool(DUE_WORDS.search(sentence))
        committed = bool(COMMITMENT.search(sentence) or IMPERATIVE.search(sentence)
                         or IMPERATIVE.search(sentence.partition(":")[2]))  # "In 2 hours: check the backup"
        if due_cue:
            kind = "due"
        elif EVENT_WORDS.search(sentence):
            kind = "event"
        else:
            kind = "due" if committed else "event"
        start, end = span
        evidence = " ".join(original[offset + start: offset + end].split())
        return Anchor(int(moment.timestamp() * 1000), kind, evidence, committed and kind == "due")
    return None


def _leading(before: str) -> str | None:
    match = LEADING.search(before)
    return " ".join(match.group("lead").lower().split()) if match else None


def _resolve(match: re.Match[str], sentence: str, written: datetime, tz: ZoneInfo
             ) -> tuple[datetime, tuple[int, int]] | None:
    """The moment a date phrase (and the time beside it) names, and the span of the words that named it."""
    start, end = match.start(), match.end()
    if match.group("wd") and DATE_AFTER_WEEKDAY.match(sentence[end:]):
        return None  # "on Sunday 13 December": the date that follows is read instead
    if (match.group("md") or match.group("dm")) and (named := WEEKDAY_BEFORE.search(sentence[:start])):
        start = named.start()  # with the weekday it follows: what stands before that is beside the date
    lead = LEADING.search(sentence[:start])
    if lead:
        start = lead.start()
    after = TIME_AFTER.match(sentence[end:])
    before = None if after else TIME_BEFORE.search(sentence[:start])
    evening = ((bool(match.group("rel"))
                and re.search(r"tonight|evening|night", match.group("rel"), re.IGNORECASE) is not None)
               or EVENING_EVENTS.search(sentence) is not None)
    if before and (began := RANGE_START.search(sentence[: before.start()])):
        before = began  # the range's start
    beside = after or before
    clock = _clock(beside, evening) if beside else None
    if beside and clock is None:
        return None  # "at 27", "at 0": not a time, so not this phrase either
    if after:
        end += after.end()
    elif before:
        start = before.start()
    day, default = _day(match, written, clock is not None)
    if day is None:
        return None
    if match.group("later") and (unit := match.group("unit").lower()).startswith(("hour", "min")):
        n = _number(match.group("n"))
        moment = written + (timedelta(hours=n) if unit.startswith("hour") else timedelta(minutes=n))
        return moment.replace(second=0, microsecond=0), (start, end)
    if match.group("iso") and match.group("ih"):
        if clock is not None:
            return None
        hour, minute = int(match.group("ih")), int(match.group("imin"))
        if hour > 23:
            return None
        clock = time(hour, minute)
    led = " ".join(lead.group("lead").lower().split()) if lead else None
    if (match.group("wd") and clock is None and match.group("wmod") is None and led not in WEEKDAY_LEADS
            and not LAST_DAY.match(sentence[match.end():])):
        return None  # a bare weekday ("Friday is my favourite day") anchors nothing; "Friday is the last day" does
    if match.group("nth") and led is None and not DEADLINE_LABEL.search(sentence[: match.start()]):
        return None  # "the 3rd attempt": only "on/by/before the 15th" (or "deadline: the 15th") is a date
    if clock is None and not beside and (match.group("md") or match.group("dm")):
        if len(times := list(CLOCK_TIME.finditer(sentence))) == 1:
            clock = _clock(times[0], evening)  # "opera on 21 January, curtain at 19:30"
    if clock is None and default is None:
        return None  # "today" without a time
    moment = datetime.combine(day, clock or default or DEFAULT_TIME, tz)
    return moment, (start, end)


def _clock(found: re.Match[str], evening: bool) -> time | None:
    groups = found.groupdict()
    if groups.get("noon"):
        return time(12)
    hour = groups.get("h") or groups.get("h2") or groups.get("h3") or groups.get("h4")
    minute = groups.get("m") or groups.get("m2") or groups.get("m3") or "0"
    meridiem = (groups.get("ap") or groups.get("ap2") or "").replace(".", "").lower()
    assert hour is not None, "every alternative of TIME_AFTER and TIME_BEFORE but noon captures an hour"
    h, m = int(hour), int(minute)
    if meridiem:
        if not 1 <= h <= 12:
            return None
        h = h % 12 + (12 if meridiem == "pm" else 0)
    elif (h == 0 and not (groups.get("h3") or groups.get("m"))) or h > 23:
        return None
    elif hour.startswith("0"):
        pass  # "07:15" is written on a 24-hour clock
    elif 1 <= h <= 7 or (evening and h < 12):
        h += 12  # a bare hour from 1 to 7 is in the afternoon or evening
    return time(h, m)


def _day(match: re.Match[str], written: datetime, timed: bool) -> tuple[date | None, time | None]:
    """The day a phrase names (None if it names none) and the time of day it implies when no time is given."""
    today = written.date()
    try:
        if match.group("iso"):
            return date(int(match.group("iy")), int(match.group("im")), int(match.group("id"))), DEFAULT_TIME
        if match.group("md") or match.group("dm"):
            month = MONTHS[(match.group("mdm") or match.group("dmm")).lower()[:3]]
            day = int(match.group("mdd") or match.group("dmd"))
            year = match.group("mdy") or match.group("dmy")
            if year:
                return date(int(year), month, day), DEFAULT_TIME
            found = date(today.year, month, day) if _valid(today.year, month, day) else None
            if found is not None and today - timedelta(days=RECENT_PAST_DAYS) <= found < today:
                return None, None  # "March 3" written on March 4 is about the past, not next year
            if found is None or found < today:
                found = date(today.year + 1, month, day)
            return found, DEFAULT_TIME
    except ValueError:  # 31 February, month 13
        return None, None
    if match.group("nth"):
        return _next_nth(today, int(match.group("nd"))), DEFAULT_TIME
    if match.group("wd"):
        ahead = (WEEKDAYS.index(match.group("wday").lower()) - today.weekday()) % 7 or 7
        return today + timedelta(days=ahead), DEFAULT_TIME
    if match.group("eo"):
        if match.group("eou").lower() == "week":  # the working week's end: Friday (next week's if it is past)
            ahead = (4 - today.weekday()) % 7 + (7 if match.group("eonext") else 0)
            return today + timedelta(days=ahead), DEFAULT_TIME
        year, month = today.year, today.month + (1 if match.group("eonext") else 0)
        year, month = (year + 1, 1) if month == 13 else (year, month)
        following = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
        return following - timedelta(days=1), DEFAULT_TIME
    if match.group("later"):
        unit, n = match.group("unit").lower(), _number(match.group("n"))
        return today + timedelta(days=n * (7 if unit.startswith("week") else 1)), DEFAULT_TIME
    phrase = " ".join(match.group("rel").lower().split())
    if phrase.endswith("after tomorrow"):
        return today + timedelta(days=2), DEFAULT_TIME
    if phrase.startswith("tomorrow"):
        part = match.group("tpart")
        return today + timedelta(days=1), PARTS_OF_DAY[part.lower()] if part else DEFAULT_TIME
    if phrase == "tonight":
        return today, PARTS_OF_DAY["night"]
    if phrase.startswith("this"):
        return today, PARTS_OF_DAY[match.group("tdpart").lower()]
    return today, None  # "today": only with a time


def _next_nth(today: date, day: int) -> date | None:
    """The next `day`th of a month, on or after today (a month without that day is skipped)."""
    if not 1 <= day <= 31:
        return None
    year, month = today.year, today.month
    for _ in range(13):
        if _valid(year, month, day) and date(year, month, day) >= today:
            return date(year, month, day)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def _valid(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS[word.lower()]
