"""A CalDAV calendar (RFC 4791: Nextcloud, Fastmail, iCloud, Baikal, Radicale...): each event a mirror with its
time anchor, made exactly as an ICS feed's are (calendar.py: recurring events expanded within the window, an
occurrence named by its series and its original start, a moved one followed, a cancelled one removed), each linking
back to its event resource.

`settings.url` is a calendar collection, or the server's (or the user's principal) address: then the calendars are
found as a CalDAV client finds them (RFC 4791 6.2.1, RFC 5397, RFC 6764): PROPFIND the current-user-principal, its
calendar-home-set, and there the collections that are calendars of events; all of them, or the one whose name is
`settings.calendar`. Each calendar's events within the window are read with one REPORT calendar-query (a time-range
filter, getetag and calendar-data), the answer bounded as a feed is. HTTP Basic auth with `settings.username` and
`settings.password` (a secret), over https, through the guarded client (adapters/http/guarded.py) as push and the
ICS feed are (the address checked as it connects: no private, loopback or metadata address, unless a test allows
loopback). Not the `caldav` package: it talks through `requests`, where that check would not hold.
"""

import dataclasses
import re
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import NamedTuple
from urllib.parse import unquote, urljoin, urlsplit
from xml.etree import ElementTree

import httpx

from ...domain.errors import InvalidInput, StoreUnavailable
from ...domain.integrations import ConnectForm, ConnectorSpec, Field
from ...domain.text import shorten
from ...ports.integrations import Item, Synced
from ...settings import Settings
from ..http.guarded import pinned_client, resolve
from .calendar import AHEAD, MAX_FEED_BYTES, PAST, event_items

DAV, CALDAV = "{DAV:}", "{urn:ietf:params:xml:ns:caldav}"
TIMEOUT = httpx.Timeout(30.0, connect=4.0)  # a large calendar's REPORT takes a while to answer
REDIRECTS = 3  # followed on the same origin only (/.well-known/caldav → the server's DAV root)
Error = type[InvalidInput] | type[StoreUnavailable]

PROPFIND = """<?xml version="1.0" encoding="utf-8"?>
<D:propfind xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop>
<D:resourcetype/><D:displayname/><D:current-user-principal/><C:calendar-home-set/>
<C:supported-calendar-component-set/></D:prop></D:propfind>"""

QUERY = """<?xml version="1.0" encoding="utf-8"?>
<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
<D:prop><D:getetag/><C:calendar-data/></D:prop>
<C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">
<C:time-range start="{start}" end="{end}"/></C:comp-filter></C:comp-filter></C:filter></C:calendar-query>"""


class Calendar(NamedTuple):
    url: str
    name: str


class Answer(NamedTuple):
    url: str  # where it came from, after the redirects followed
    status: int
    dav: str  # the DAV header: what the server says it speaks
    body: bytes
    location: str = ""  # a redirect's


Found = list[tuple[str, dict[str, ElementTree.Element]]]  # a multistatus: each resource's URL and its properties

SPEC = ConnectorSpec(
    kind="caldav", title="Calendar (CalDAV)", source="calendar",
    fields=(
        Field("url", "Server or calendar address", "the server's, the principal's or one calendar's address",
              required=True, format="url", pattern="^https?://", placeholder="https://caldav.fastmail.com/"),
        Field("username", "User name", "the user name", required=True),
        Field("password", "Password (an app password)", "the password, or an app password", required=True,
              secret=True, format="password"),
        Field("calendar", "Only the calendar named", "only the calendar of this name (all if not given)",
              placeholder="all of them"),
        Field("hosts", "Other hosts of this server", "other host names the server keeps your calendars on, which "
              "get your user name and password too, over https (separated by commas)", placeholder="none"),
    ),
    form=ConnectForm("Connect a CalDAV calendar", "Connect CalDAV",
                     "A CalDAV server (Fastmail, iCloud, Nextcloud, Radicale): its address, or one calendar's. Each "
                     "event becomes a memory with its time; moves and cancellations follow.",
                     name="Calendar", name_placeholder="Family calendar"))


class CalDav:
    spec = SPEC  # reached over the internet only (the pinned client): anyone may connect one

    def __init__(self, allow_loopback: bool = False, resolver: Callable[[str], Sequence[str]] = resolve,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.allow_loopback = allow_loopback
        self.resolver = resolver
        self.now = now

    def check(self, settings: Mapping[str, str]) -> None:
        url = settings.get("url", "").strip()
        if not url:
            raise InvalidInput("A CalDAV calendar needs settings.url: the calendar's address, or its server's")
        parts = urlsplit(url)
        if not self._allowed(url):
            raise InvalidInput("settings.url must be an https:// address of the CalDAV server or calendar")
        if not parts.hostname or parts.username or parts.password:
            raise InvalidInput("settings.url must be an https:// address with a host name (the user name and "
                               "password go in settings.username and settings.password)")
        if not settings.get("username", "").strip() or not settings.get("password", ""):
            raise InvalidInput("A CalDAV calendar needs settings.username and settings.password")
        named_hosts(settings)
        with self._client(settings) as client:  # a wrong password or address says so now, before connecting
            self._calendars(client, settings, InvalidInput)

    def items(self, settings: Mapping[str, str], synced: Synced) -> Iterator[Item]:
        now = self.now()
        found: dict[str, Item] = {}
        with self._client(settings) as client:
            for calendar in self._calendars(client, settings, StoreUnavailable):
                for resource, text in self._events(client, calendar.url, now, synced):
                    try:
                        read = _items(resource, text, now)
                    except StoreUnavailable as e:  # that event's alone: the others are synced, nothing removed
                        synced.gap(f"{e.message}: nothing was removed")
                        continue
                    for item in read:
                        found.setdefault(item.external_id, item)  # an event in two calendars: mirrored once
        for external_id in sorted(found):
            yield found[external_id]

    # --- finding the calendars ---

    def _calendars(self, client: httpx.Client, settings: Mapping[str, str], error: Error) -> list[Calendar]:
        """The calendars of events at settings.url (itself, or those found from the server or principal there),
        those named settings.calendar if it is set."""
        url = settings.get("url", "").strip()
        here, props, dav = self._start(client, url, error)
        if _is_calendar(props):
            calendars = [Calendar(here, _name(here, props))]
        else:
            home = _href(props, CALDAV + "calendar-home-set")
            principal = _href(props, DAV + "current-user-principal")
            if home is None and principal is not None:
                principal = self._joined(here, principal, error)
                answer = self._propfind(client, principal, "0", error)
                home = _href(self._found(answer, error)[0][1], CALDAV + "calendar-home-set") if _ok(answer) else None
            home = self._joined(here, home, error) if home is not None else here
            answer = self._propfind(client, home, "1", error)
            if not _ok(answer):
                raise _refused(answer, error)
            calendars = [Calendar(self._joined(home, href, error), _name(href, found))
                         for href, found in self._found(answer, error) if _is_calendar(found) and _has_events(found)]
        if not calendars:
            if "calendar-access" not in dav:
                raise error(f"{url} is not a CalDAV server (it does not say it speaks calendar-access)")
            raise error(f"There is no calendar of events at {url}")
        if wanted := settings.get("calendar", "").strip():
            named = [c for c in calendars if c.name.casefold() == wanted.casefold()]
            if not named:
                there = ", ".join(sorted(c.name for c in calendars))
                raise error(f"There is no calendar named {wanted} at {url} (there are: {there})")
            calendars = named
        return sorted(set(calendars))

    def _start(self, client: httpx.Client, url: str, error: Error) -> tuple[str, dict[str, ElementTree.Element],
                                                                               str]:
        """Where to begin: settings.url's own properties, or (a server's bare address that names no principal)
        those of its /.well-known/caldav (RFC 6764)."""
        answer = self._propfind(client, url, "0", error)
        if answer.status in (401, 403):
            raise _refused(answer, error)
        usable = _ok(answer) and _leads_on(self._found(answer, error)[0][1])
        if not usable and urlsplit(url).path in ("", "/"):
            known = self._propfind(client, urljoin(url, "/.well-known/caldav"), "0", error)
            if _ok(known) and _leads_on(self._found(known, error)[0][1]):
                answer = known
        if not _ok(answer):
            raise _refused(answer, error)
        return answer.url, self._found(answer, error)[0][1], answer.dav

    def _propfind(self, client: httpx.Client, url: str, depth: str, error: Error) -> Answer:
        """A PROPFIND, following a redirect on the same origin (a server's /.well-known/caldav)."""
        for _ in range(REDIRECTS + 1):
            answer = self._send(client, "PROPFIND", url, PROPFIND, depth, error)
            if answer.status not in (301, 302, 303, 307, 308):
                return answer
            target = urljoin(url, answer.location)
            if _origin(target) != _origin(url):
                raise error(f"{url} sends to {target}: set settings.url to that address")
            url = target
        raise error(f"{url} redirects more than {REDIRECTS} times")

    def _found(self, answer: Answer, error: Error) -> Found:
        try:
            found = _multistatus(answer.body, answer.url)
        except (ElementTree.ParseError, ValueError) as e:
            raise error(f"{answer.url} is not a CalDAV server (its answer is not a WebDAV multistatus)") from e
        if not found:
            raise error(f"{answer.url} is not a CalDAV server (its answer names nothing)")
        return found

    # --- reading the events ---

    def _events(self, client: httpx.Client, url: str, now: datetime, synced: Synced) -> Iterator[tuple[str, str]]:
        """Each event resource of the calendar at `url` with an event within the window: its URL and its text."""
        query = QUERY.format(start=_stamp(now - PAST), end=_stamp(now + AHEAD))
        answer = self._send(client, "REPORT", url, query, "1", StoreUnavailable)
        if answer.status != 207:
            raise _refused(answer, StoreUnavailable, "does not answer a CalDAV calendar-query")
        for resource, props in sorted(_multistatus_or_fail(answer), key=lambda found: found[0]):
            if resource.rstrip("/") == url.rstrip("/"):
                continue  # the collection itself, as some servers list it
            data = props.get(CALDAV + "calendar-data")
            if data is None or not (data.text or "").strip():
                synced.gap(f"The CalDAV server did not send the event at {resource}: nothing was removed")
                continue
            yield self._joined(url, resource, StoreUnavailable), data.text or ""

    # --- HTTP ---

    def _client(self, settings: Mapping[str, str]) -> httpx.Client:
        client = pinned_client(self.resolver, self.allow_loopback)
        client.auth = SameOrigin(settings.get("url", ""), settings.get("username", "").strip(),
                                 settings.get("password", ""), named_hosts(settings))
        client.timeout = TIMEOUT
        return client

    def _send(self, client: httpx.Client, method: str, url: str, body: str, depth: str, error: Error) -> Answer:
        """One request, its answer (a multistatus) read up to MAX_FEED_BYTES."""
        headers = {"Depth": depth, "Content-Type": "application/xml; charset=utf-8"}
        try:
            with client.stream(method, url, content=body.encode(), headers=headers) as answer:
                if answer.status_code in (301, 302, 303, 307, 308):
                    return Answer(url, answer.status_code, "", b"", answer.headers.get("location", ""))
                read = b""
                if answer.status_code == 207:
                    for chunk in answer.iter_bytes():
                        read += chunk
                        if len(read) > MAX_FEED_BYTES:
                            raise error(f"The CalDAV server's answer for {url} is larger than "
                                        f"{MAX_FEED_BYTES // 1_000_000} MB")
                return Answer(url, answer.status_code, answer.headers.get("dav", ""), read)
        except httpx.HTTPError as e:
            said = f": {e}" if str(e) else ""
            raise error(f"The CalDAV server at {_origin(url)} cannot be reached ({type(e).__name__}{said})") from e
        except OSError as e:  # the pinned client refuses an address on this machine or a private network
            raise error(f"The CalDAV server at {_origin(url)} cannot be reached: {e}") from e

    def _allowed(self, url: str) -> bool:
        """https, or http to this machine where a test allows loopback."""
        parts = urlsplit(url)
        local = parts.hostname in ("localhost", "127.0.0.1") and self.allow_loopback
        return parts.scheme == "https" or (parts.scheme == "http" and local)

    def _joined(self, base: str, href: str, error: Error) -> str:
        """An href the server named, as an absolute URL: on the same origin, or elsewhere over https (iCloud keeps
        a user's calendars on another host than the one asked)."""
        url = urljoin(base, href.strip())
        if _origin(url) != _origin(base) and not self._allowed(url):
            raise error(f"The CalDAV server at {_origin(base)} names {url}, which is not an https:// address")
        return url


class SameOrigin(httpx.Auth):
    """Basic credentials sent only to the configured server's origin (scheme, host and port), or over https to a
    host the user named (`hosts`), never to another host an answer names; the one exception is iCloud's own:
    caldav.icloud.com keeps a user's calendars on pNN-caldav.icloud.com, reached over https. (Two hosts sharing
    their last labels are not one site: any *.co.uk would have got the password.)"""

    def __init__(self, url: str, username: str, password: str, hosts: frozenset[str] = frozenset()) -> None:
        self.origin = _origin_of(url)
        self.hosts = hosts
        self.basic = httpx.BasicAuth(username, password)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._trusted(str(request.url)):
            yield from self.basic.auth_flow(request)
        else:
            yield request

    def _trusted(self, url: str) -> bool:
        origin = _origin_of(url)
        if origin == self.origin:
            return True
        scheme, host, port = origin
        if scheme == "https" and port == 443 and host in self.hosts:
            return True
        return (self.origin[1] == ICLOUD and scheme == "https" and ICLOUD_HOSTS.fullmatch(host) is not None)


ICLOUD = "caldav.icloud.com"
ICLOUD_HOSTS = re.compile(r"p\d{1,3}-caldav\.icloud\.com")
HOST_NAME = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+")
MAX_HOSTS = 10


def named_hosts(settings: Mapping[str, str]) -> frozenset[str]:
    """The other hosts the user named (`settings.hosts`): host names only, each to get the credentials over https."""
    names = [h.strip().lower().rstrip(".") for h in settings.get("hosts", "").split(",") if h.strip()]
    if len(names) > MAX_HOSTS:
        raise InvalidInput(f"settings.hosts names at most {MAX_HOSTS} hosts")
    for name in names:
        if not HOST_NAME.fullmatch(name):
            raise InvalidInput(f"settings.hosts takes host names separated by commas (such as "
                               f"p01-caldav.example.com), not {shorten(name)!r}")
    return frozenset(names)


def _origin_of(url: str) -> tuple[str, str, int | None]:
    """Scheme, host (lowercased, without a trailing dot) and port, the default one said."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").rstrip("."), parts.port or {"https": 443, "http": 80}.get(scheme)


def connector(settings: Settings) -> CalDav:
    return CalDav(allow_loopback=settings.push_allow_loopback)  # the tests' Radicale is on loopback


def _items(resource: str, text: str, now: datetime) -> list[Item]:
    """One event resource's events within the window, as the ICS feed makes them, each linking to the resource."""
    import icalendar  # here, not at the top: 30 ms that a brain which syncs no calendar never pays
    import recurring_ical_events  # type: ignore[import-untyped]

    try:
        calendar = icalendar.Calendar.from_ical(text)
        events = recurring_ical_events.of(calendar).between(now - PAST, now + AHEAD)
        return [dataclasses.replace(item, url=resource) for item in event_items(calendar, events, resource)]
    except Exception as e:
        raise StoreUnavailable(f"The event at {resource} is not readable iCalendar ({type(e).__name__})") from e


def _multistatus(body: bytes, base: str) -> Found:
    """A WebDAV multistatus (RFC 4918 13): each response's URL and the properties it found (status 200); a
    response that says its resource is gone (404) left out."""
    root = ElementTree.fromstring(body)  # expat: no external entities, and a bound on entity expansion
    if root.tag != DAV + "multistatus":
        raise ValueError(f"a {root.tag} answer")
    found: Found = []
    for response in root.findall(DAV + "response"):
        href = (response.findtext(DAV + "href") or "").strip()
        if not href or _code(response.findtext(DAV + "status")) == "404":
            continue
        props: dict[str, ElementTree.Element] = {}
        for propstat in response.findall(DAV + "propstat"):
            prop = propstat.find(DAV + "prop")
            if _code(propstat.findtext(DAV + "status")) == "200" and prop is not None:
                props.update((child.tag, child) for child in prop)
        found.append((urljoin(base, href), props))
    return found


def _code(status: str | None) -> str:
    """The code of a status line (`HTTP/1.1 200 OK`)."""
    parts = (status or "").split()
    return parts[1] if len(parts) > 1 else ""


def _multistatus_or_fail(answer: Answer) -> Found:
    try:
        return _multistatus(answer.body, answer.url)
    except (ElementTree.ParseError, ValueError) as e:
        raise StoreUnavailable(f"The calendar at {answer.url} answered no WebDAV multistatus") from e


def _refused(answer: Answer, error: Error,
             not_dav: str = "does not answer PROPFIND") -> InvalidInput | StoreUnavailable:
    """An answer that is not a multistatus, in words."""
    url, status = answer.url, answer.status
    if status == 401:
        return error(f"The CalDAV server refused the user name or password (HTTP 401 at {url})")
    if status == 403:
        return error(f"The CalDAV server does not let this user read {url} (HTTP 403)")
    if status == 404:
        return error(f"There is no calendar at {url} (HTTP 404)")
    if status in (400, 405, 501) or 200 <= status < 300:
        return error(f"{url} is not a CalDAV server: it {not_dav} (HTTP {status})")
    return error(f"The CalDAV server answered HTTP {status} at {url}")


def _ok(answer: Answer) -> bool:
    return answer.status == 207


def _is_calendar(props: Mapping[str, ElementTree.Element]) -> bool:
    kind = props.get(DAV + "resourcetype")
    return kind is not None and kind.find(CALDAV + "calendar") is not None


def _has_events(props: Mapping[str, ElementTree.Element]) -> bool:
    """Whether a calendar holds events (a task list or a journal does not); all kinds where it does not say."""
    kinds = props.get(CALDAV + "supported-calendar-component-set")
    if kinds is None or len(kinds) == 0:
        return True
    return any(kind.get("name", "").upper() == "VEVENT" for kind in kinds.iter(CALDAV + "comp"))


def _leads_on(props: Mapping[str, ElementTree.Element]) -> bool:
    """Whether a resource is a calendar or names where the calendars are."""
    return _is_calendar(props) or any(_href(props, key) is not None
                                      for key in (DAV + "current-user-principal", CALDAV + "calendar-home-set"))


def _href(props: Mapping[str, ElementTree.Element], key: str) -> str | None:
    prop = props.get(key)
    href = prop.findtext(DAV + "href") if prop is not None else None
    return href.strip() if href and href.strip() else None


def _name(url: str, props: Mapping[str, ElementTree.Element]) -> str:
    """A calendar's display name, or the last part of its path."""
    shown = props.get(DAV + "displayname")
    if shown is not None and (shown.text or "").strip():
        return (shown.text or "").strip()
    return unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1])


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
