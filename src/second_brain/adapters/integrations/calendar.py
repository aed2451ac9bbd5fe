"""A calendar's ICS feed (a published or secret iCal URL: Google, Outlook, Fastmail, Nextcloud): each event a mirror
with its time anchor (`when_kind: event`).

Recurring events are expanded within a window (30 days back, a year ahead), one mirror per occurrence; an occurrence
is named by its series and its original start, so a moved occurrence (a RECURRENCE-ID override) or a moved single
event updates its mirror, and a cancelled one (STATUS:CANCELLED, an EXDATE, gone from the feed) is removed. The feed
is fetched over https from a host on the internet, through the guarded client as push is (adapters/http/guarded.py:
the address checked as it connects, no private, loopback or metadata address, unless a test allows loopback).
"""

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx

from ...domain.errors import InvalidInput, StoreUnavailable
from ...domain.integrations import ConnectForm, ConnectorSpec, Field
from ...domain.text import MAX_CONTENT_CHARS
from ...ports.integrations import Item, Synced
from ...settings import Settings
from ..http.guarded import SECRET_URL, pinned_client, redact_push_requests, resolve

MAX_FEED_BYTES = 10_000_000
PAST, AHEAD = timedelta(days=30), timedelta(days=365)

SPEC = ConnectorSpec(
    kind="calendar", title="Calendar (ICS feed)", source="calendar",
    # secret: whoever holds a secret iCal address reads the calendar
    fields=(Field("url", "Feed address", "the ICS feed's https:// address", required=True, secret=True, format="url",
                  pattern="^https?://", placeholder="https://calendar.example.com/me/basic.ics"),),
    form=ConnectForm("Connect a calendar feed", "Connect calendar",
                     "Its ICS feed's address (the secret iCal address your calendar offers). Each event becomes a "
                     "memory with its time, repeating ones within the coming year; moves and cancellations follow.",
                     name="Calendar", name_placeholder="Work calendar"))


class IcsFeed:
    spec = SPEC  # fetched from the internet only (the pinned client): anyone may connect one

    def __init__(self, allow_loopback: bool = False, resolver: Callable[[str], Sequence[str]] = resolve,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.allow_loopback = allow_loopback
        self.resolver = resolver
        self.now = now
        redact_push_requests()  # httpx's log line for a feed's request names its host only

    def check(self, settings: Mapping[str, str]) -> None:
        url = settings.get("url", "").strip()
        if not url:
            raise InvalidInput("A calendar needs settings.url: its ICS feed's address")
        parts = urlsplit(url)
        local = parts.hostname in ("localhost", "127.0.0.1") and self.allow_loopback
        if parts.scheme != "https" and not (parts.scheme == "http" and local):
            raise InvalidInput("settings.url must be an https:// address of the calendar's ICS feed")
        if not parts.hostname or parts.username or parts.password:
            raise InvalidInput("settings.url must be an https:// address with a host name (no user or password)")
        self._fetch(url, InvalidInput)  # a wrong address says so now, before anything is connected

    def items(self, settings: Mapping[str, str], synced: Synced) -> Iterator[Item]:
        url = settings.get("url", "").strip()
        feed = self._fetch(url, StoreUnavailable)
        now = self.now()
        import icalendar  # here, not at the top: 30 ms that a brain which syncs no calendar never pays
        import recurring_ical_events  # type: ignore[import-untyped]

        try:
            calendar = icalendar.Calendar.from_ical(feed)
            events = recurring_ical_events.of(calendar).between(now - PAST, now + AHEAD)
        except Exception as e:
            raise StoreUnavailable(f"The calendar at {shown(url)} is not a readable ICS feed ({type(e).__name__})") \
                from e
        yield from event_items(calendar, events, "")  # the feed's address is a secret: no mirror links to it

    def _fetch(self, url: str, error: type[InvalidInput] | type[StoreUnavailable]) -> bytes:
        """The feed, its address never in a message or a log line (whoever holds it reads the calendar)."""
        hiding = SECRET_URL.set(True)
        try:
            return self._fetched(url, error)
        finally:
            SECRET_URL.reset(hiding)

    def _fetched(self, url: str, error: type[InvalidInput] | type[StoreUnavailable]) -> bytes:
        try:
            with pinned_client(self.resolver, self.allow_loopback) as client, client.stream("GET", url) as answer:
                if answer.status_code != 200:
                    raise error(f"The calendar at {shown(url)} answered HTTP {answer.status_code}")
                body = b""
                for chunk in answer.iter_bytes():
                    body += chunk
                    if len(body) > MAX_FEED_BYTES:
                        raise error(f"The calendar at {shown(url)} is larger than {MAX_FEED_BYTES // 1_000_000} MB")
                return body
        except httpx.HTTPError as e:
            raise error(f"The calendar at {shown(url)} cannot be reached ({type(e).__name__})") from e
        except OSError as e:  # the pinned client refuses an address on this machine or a private network
            raise error(f"The calendar at {shown(url)} cannot be fetched: {e}") from e


def connector(settings: Settings) -> IcsFeed:
    return IcsFeed(allow_loopback=settings.push_allow_loopback)  # the tests' feeds are served on loopback


def shown(url: str) -> str:
    """A secret address as a message may name it: its host."""
    try:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.hostname or ''}/…"
    except ValueError:
        return "that address"


def event_items(calendar: Any, events: Sequence[Any], url: str) -> Iterator[Item]:
    """The items of `events`, a parsed calendar's events expanded within the window, each once, by UID: the
    cancelled left out (also what the CalDAV connector gives for each event resource)."""
    # The series in the calendar itself (the expansion marks every event it returns with a RECURRENCE-ID): a single
    # event is named by its UID alone, so moving it keeps its mirror.
    series = {str(c.get("UID", "")) for c in calendar.walk("VEVENT")
              if any(c.get(key) is not None for key in ("RRULE", "RDATE", "RECURRENCE-ID"))}
    seen: set[str] = set()
    for event in sorted(events, key=lambda e: str(e.get("UID", ""))):
        if str(event.get("STATUS", "")).upper() == "CANCELLED" or event.name != "VEVENT":
            continue
        item = _item(event, url, str(event.get("UID", "")) in series)
        if item.external_id not in seen:
            seen.add(item.external_id)
            yield item


def _item(event: Any, url: str, recurring: bool) -> Item:
    uid = str(event.get("UID", "")) or f"no-uid-{event.get('SUMMARY', '')}"
    start, end = _moment(event.get("DTSTART")), _moment(event.get("DTEND"))
    series = event.get("RECURRENCE-ID")  # an occurrence's original start: its name however it moves
    original = _moment(series) if series is not None else start
    external_id = f"{uid}@{original.isoformat()}" if recurring and original else uid
    summary = str(event.get("SUMMARY", "")).strip() or "(no title)"
    lines = [summary, ""]
    if start:
        lines.append(f"When: {_shown(start)}" + (f" to {_shown(end)}" if end else ""))
    if location := str(event.get("LOCATION", "")).strip():
        lines.append(f"Where: {location}")
    if description := str(event.get("DESCRIPTION", "")).strip():
        lines += ["", description]
    when_at = int(start.timestamp() * 1000) if start else None
    return Item(external_id, "\n".join(lines).strip()[:MAX_CONTENT_CHARS], ("calendar",),
                str(event.get("URL", "")) or url, when_at=when_at, when_kind="event" if when_at else None)


def _moment(value: Any) -> datetime | None:
    """An iCalendar time as an aware datetime (a whole day: its midnight in UTC; a floating time: as UTC)."""
    if value is None:
        return None
    moment = value.dt if hasattr(value, "dt") else value
    if isinstance(moment, datetime):
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    if isinstance(moment, date):
        return datetime(moment.year, moment.month, moment.day, tzinfo=UTC)
    return None


def _shown(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M %Z").strip()
