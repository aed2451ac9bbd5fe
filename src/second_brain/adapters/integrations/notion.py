"""Notion: the pages of chosen databases, or a page and the pages under it, each page one mirror.

Settings: `token`, an internal integration's secret (a secret: kept sealed, never shown back), and either
`database` (a database's id or link, or several separated by commas: every page in them) or `page` (a page's id
or link: that page and its child pages, and theirs, found through the `child_page` blocks of each body, nested ones
included). An id is taken with or without dashes, or out of a Notion link (the 32 hex digits at the end of its path;
a link to a page opened in a database's side peek names the page by its `?p=`, which `page` follows). A database
inside a page is not followed: name it in `database`.

A page's mirror reads as its title, a blank line and its body in plain text with Markdown's marks: paragraphs,
headings (`#`), bulleted, numbered and to-do items (`- [ ]`, `- [x]`), toggles, quotes and callouts (`>`), code
(fenced, with its language), dividers (`---`), tables (`| a | b |`), bookmarks and embeds (their address), equations,
the titles of child pages and databases; nested blocks are read and indented under their parent (columns and synced
blocks in place). Other blocks (images, files, unsupported ones) are left out. Past the brain's longest content
the rest of the body is neither read nor kept. Its tags are `notion` and the values of a database's `Tags` property
(multi-select or select, lowercased); its address is the page's Notion URL; it links to the pages it mentions
(an @-mention of a page, a link to a Notion page, a link-to-page block) and to its child pages: edges between the
mirrors. A page in the trash (archived) is no item, so its mirror goes at the next sync.

Notion's public API is called through the official client (notion-client), with `Notion-Version: 2025-09-03` (the
version where a database holds one or more data sources), over the guarded client (adapters/http/guarded.py: no
private, loopback or metadata address, unless a test allows loopback). A database's page whose `last_edited_time`
(settled: two minutes old) is the one its mirror was synced at is listed, not read again; a sync reads at most its
budget of bodies, the rest at the next. A page under a parent page is read at every sync (its body is where its
child pages are found).
These endpoints, and no other:
  GET  /v1/databases/{id}              a database and its data sources (the check, and each sync)
  POST /v1/data_sources/{id}/query     a data source's pages, 100 a call, following `next_cursor`
  GET  /v1/pages/{id}                  the parent page (the check, and each sync) and each child page under it
  GET  /v1/blocks/{id}/children        a page's blocks and their nested blocks, 100 a call, following `next_cursor`
A 429 is waited out as its Retry-After says (at most a minute a time, 5 tries a call); a 5xx or a dropped
connection is tried 3 times; then the sync stops, in words, and removes nothing. A 401 or 403 says the token is
refused or lacks access, a 404 that the database or page is not shared with the integration: at connect, before
anything is connected (and at a sync, which stops and removes nothing), in words. A page whose body cannot be read
now (it went meanwhile) keeps its mirror.
"""

import json
import logging
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import httpx

from ...domain import text
from ...domain.errors import InvalidInput, StoreUnavailable
from ...domain.integrations import ConnectForm, ConnectorSpec, Field
from ...ports.integrations import Item, Synced
from ...settings import Settings
from ..http.guarded import pinned_client, resolve

if TYPE_CHECKING:  # notion-client is imported where a check or a sync first calls Notion (see NotionPages._session)
    from notion_client import Client
    from notion_client.errors import HTTPResponseError

NOTION_VERSION = "2025-09-03"  # the API version implemented here (and by tests/support/notion_server.py)
PAGE_SIZE = 100  # Notion's most per list call
RATE_LIMIT_TRIES = 5  # tries of one call Notion answers 429 to
SERVER_TRIES = 3  # tries of one call Notion answers 5xx to, or whose connection drops
LONGEST_WAIT = 60.0  # seconds: a Retry-After past this is waited only this long
TIMEOUT_MS = 30_000
MOST_DEPTH = 20  # nested blocks deeper than this are not read (Notion's own editor nests far less)
MOST_DATABASES = 20
SETTLED = timedelta(minutes=2)  # a page's edit time is trusted as its version once this old (see settled)
HEX_ID = re.compile(r"(?<![0-9a-f])([0-9a-f]{32})(?![0-9a-f])", re.IGNORECASE)
DASHED_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
TOKEN = re.compile(r"[\x21-\x7e]{1,500}")  # printable, no spaces: what may go in an Authorization header

# The client's own log: its warnings repeat each 429 and 404 this module handles and says in words. Given, or the
# client adds a console handler to its logger at each construction (one per sync).
CLIENT_LOG = logging.getLogger("second_brain.integrations.notion.client")

PREFIXES = {"heading_1": "# ", "heading_2": "## ", "heading_3": "### ", "bulleted_list_item": "- ",
            "toggle": "- ", "quote": "> ", "paragraph": ""}
LIST_ITEMS = frozenset({"bulleted_list_item", "numbered_list_item", "to_do", "toggle"})  # their text's next lines
CONTAINERS = frozenset({"column_list", "column", "synced_block"})  # their children read in place, not indented
NOT_DESCENDED = frozenset({"child_page", "child_database"})  # their children are another page's, or rows

SPEC = ConnectorSpec(
    kind="notion", title="Notion", source="notion",
    fields=(
        # secret: whoever holds an integration's secret reads what is shared with it
        Field("token", "Integration secret", "the internal integration's secret", required=True, secret=True,
              format="password"),
        Field("database", "Databases (links or ids, separated by commas)",
              "databases' ids or links, separated by commas"),
        Field("page", "Or a page (its link): it and the pages under it",
              "a page's id or link: it and the pages under it"),
    ),
    one_of=("database", "page"),
    form=ConnectForm("Connect Notion", "Connect Notion",
                     "An internal integration's secret (notion.so/my-integrations), and the databases or the page to "
                     "mirror, shared with that integration in Notion. Each page becomes a memory.",
                     name="Notion", name_placeholder="Team wiki"))


@dataclass(frozen=True)
class Scope:
    """What an integration mirrors: the pages of these databases, or this page and those under it."""

    databases: tuple[str, ...] = ()
    page: str = ""


class NotionPages:
    spec = SPEC  # Notion's API on the internet only (the pinned client): anyone may connect one

    def __init__(self, base_url: str = "https://api.notion.com", allow_loopback: bool = False,
                 resolver: Callable[[str], Sequence[str]] = resolve,
                 sleep: Callable[[float], None] = time.sleep,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.base_url = base_url.rstrip("/")
        self.allow_loopback = allow_loopback
        self.resolver = resolver
        self.sleep = sleep  # how a 429's Retry-After, or the pause before another try, is waited (tests: quicker)
        self.now = now

    def check(self, settings: Mapping[str, str]) -> None:
        token, scope = read_settings(settings)
        with self._session(token, InvalidInput) as notion:  # a wrong token or an unshared page says so now
            for database in scope.databases:
                notion.data_sources(database)
            if scope.page:
                notion.root(scope.page)

    def items(self, settings: Mapping[str, str], synced: Synced) -> Iterator[Item]:
        try:
            token, scope = read_settings(settings)
        except InvalidInput as e:  # settings checked at connect; stored ones that no longer read are said so
            raise StoreUnavailable(e.message) from e
        with self._session(token, StoreUnavailable) as notion:
            if scope.databases:
                yield from self._database_pages(notion, scope.databases, synced)
            else:
                yield from self._page_tree(notion, scope.page, synced)

    @contextmanager
    def _session(self, token: str, error: type[InvalidInput] | type[StoreUnavailable]) -> Iterator["Session"]:
        from notion_client import Client  # here, not at the top: a brain that never calls Notion never loads it

        http = pinned_client(self.resolver, self.allow_loopback)
        try:
            # retry=False: the client's own retries sleep with time.sleep, unbounded by our caps; ours are in Session
            client = Client(client=http, auth=token, base_url=self.base_url, notion_version=NOTION_VERSION,
                            retry=False, timeout_ms=TIMEOUT_MS, logger=CLIENT_LOG, log_level=logging.ERROR)
            yield Session(client, error, self.sleep, self.base_url)
        finally:
            http.close()

    def _database_pages(self, notion: "Session", databases: Sequence[str], synced: Synced) -> Iterator[Item]:
        found: dict[str, dict[str, Any]] = {}
        for database in databases:
            for source in notion.data_sources(database):
                for page in notion.listing(f"the pages of the database {database}", notion.client.data_sources.query,
                                           source):
                    if page.get("object") == "page" and not trashed(page):  # a wiki's data source rows are skipped
                        found.setdefault(dashed(str(page.get("id", ""))), page)
        # oldest first (Notion's created_time is to the minute; the id breaks ties): a new page comes last, so a
        # sync stopped by its limit is taken up in the same order
        now, read = self.now(), 0
        for page in sorted(found.values(), key=lambda p: (str(p.get("created_time", "")), str(p.get("id", "")))):
            page_id, version = dashed(str(page.get("id", ""))), settled(page, now)
            if version and synced.version(page_id) == version:  # not edited since its mirror was synced
                yield Item(page_id, "", unreadable=True, version=version)
            elif read >= synced.budget or (read and synced.out_of_time()):  # its share read: the next reads on
                yield Item(page_id, "", later=True)
            else:
                read += 1
                item, body = self._item(notion, page)
                yield replace(item, version=version)

    def _page_tree(self, notion: "Session", root_id: str, synced: Synced) -> Iterator[Item]:
        """The page, then each child page and its own, depth first in the order of the bodies. Every body is read
        (it is where the child pages are found), at most the run's budget of them: then, or where a body could not
        be read whole, the listing says it is not whole (`Synced.gap`), so no page under it loses its mirror."""
        root = notion.root(root_id)
        pending = [root]
        seen = {root_id}
        read = 0
        while pending:
            if read >= synced.budget or (read and synced.out_of_time()):
                synced.gap()  # the rest at the next run
                return
            page = pending.pop()
            item, body = self._item(notion, page)
            read += 1
            yield item
            if body.incomplete:
                synced.gap(f"{page_title(page)}: {body.incomplete}; nothing under it was removed")
            found: list[dict[str, Any]] = []
            for child_id in body.child_pages:
                if child_id in seen:
                    continue
                seen.add(child_id)
                child = notion.call(f"the page {child_id}", notion.client.pages.retrieve, child_id, missing_ok=True)
                if child is None:  # listed in its parent's body, gone before it was read: its mirror stays
                    yield Item(child_id, "", unreadable=True)
                    synced.gap(f"a page under {page_title(page)} went missing while it was read; nothing under it "
                               "was removed")
                elif not trashed(child):
                    found.append(child)
            pending.extend(reversed(found))

    def _item(self, notion: "Session", page: Mapping[str, Any]) -> tuple[Item, "Body"]:
        """A page's item, and its body as read (its child pages, what could not be read)."""
        page_id = dashed(str(page.get("id", "")))
        body = Body()
        try:
            self._blocks(notion, page_id, body, 0, top=True)
        except Missing:  # gone (or unshared) between the listing and the reading of its body: its mirror stays
            body.incomplete = "it went missing while it was read"
            return Item(page_id, "", unreadable=True), body
        title = page_title(page)
        content = f"{title}\n\n{body.text}" if body.lines else title
        links = tuple(dict.fromkeys(link for link in body.links if link != page_id))
        return Item(page_id, content[:text.MAX_CONTENT_CHARS], page_tags(page), str(page.get("url") or ""),
                    links, said_at=edited_at(page)), body

    def _blocks(self, notion: "Session", block_id: str, body: "Body", depth: int, top: bool = False) -> None:
        """The blocks under `block_id` into `body`, their nested blocks under them (past the mirror's length, only
        for the child pages among them). Nested blocks that cannot be found now are left out, and the body says so
        (child pages there may exist still); a page's own body that cannot (`top`) raises Missing."""
        if depth > MOST_DEPTH:
            body.incomplete = f"blocks nested deeper than {MOST_DEPTH} levels are not read"
            return
        number = 0  # a numbered list counts from 1 again after any other block
        try:
            for block in notion.listing(f"the blocks of {block_id}", notion.client.blocks.children.list, block_id,
                                        missing_ok=True):
                kind = str(block.get("type", ""))
                value = block.get(kind)
                data: Mapping[str, Any] = value if isinstance(value, dict) else {}
                number = number + 1 if kind == "numbered_list_item" else 0
                self._block(notion, block, kind, data, number, body, depth)
        except Missing:
            if top:
                raise
            body.incomplete = "some of its nested blocks went missing while it was read"

    def _block(self, notion: "Session", block: Mapping[str, Any], kind: str, data: Mapping[str, Any], number: int,
               body: "Body", depth: int) -> None:
        block_id = dashed(str(block.get("id", "")))
        if kind == "child_page":
            body.child_pages.append(block_id)  # a child page's block id is the page's id
            body.links.append(block_id)
        elif kind == "link_to_page" and data.get("type") == "page_id":
            body.links.append(dashed(str(data.get("page_id", ""))))
        elif kind == "table":
            self._table(notion, block_id, bool(data.get("has_column_header")), body, depth)
            return
        line = block_line(kind, data, number, body.links)
        if line is not None:
            body.add(line, depth, kind)
        if block.get("has_children") and kind not in NOT_DESCENDED:
            self._blocks(notion, block_id, body, depth if kind in CONTAINERS else depth + 1)

    def _table(self, notion: "Session", table_id: str, header: bool, body: "Body", depth: int) -> None:
        try:
            rows = [row for row in notion.listing(f"the rows of the table {table_id}",
                                                  notion.client.blocks.children.list, table_id, missing_ok=True)
                    if row.get("type") == "table_row"]
        except Missing:
            return
        for n, row in enumerate(rows):
            cells = (row.get("table_row") or {}).get("cells") or []
            shown = [rich_text(cell, body.links).replace("|", "\\|").replace("\n", " ") for cell in cells]
            body.add("| " + " | ".join(shown) + " |", depth, "table_row")
            if n == 0 and header:
                body.add("|" + "---|" * len(shown), depth, "table_row")


def connector(settings: Settings) -> NotionPages:
    # Notion's API by default; the tests' stand-in (tests/support/notion_server.py) on loopback
    return NotionPages(settings.notion_api_url, allow_loopback=settings.push_allow_loopback)


class Missing(Exception):
    """A 404 where the caller takes one as "gone meanwhile"."""


class Session:
    """One check's or sync's calls to Notion: each retried as Notion asks, and any failure raised as `error` (the
    check's InvalidInput, the sync's StoreUnavailable) in words."""

    def __init__(self, client: "Client", error: type[InvalidInput] | type[StoreUnavailable],
                 sleep: Callable[[float], None], base_url: str) -> None:
        self.client = client
        self.error = error
        self.sleep = sleep
        self.base_url = base_url

    def data_sources(self, database_id: str) -> list[str]:
        """A database's data sources (API 2025-09-03: a database holds one or more, each with its pages)."""
        what = f"the database {database_id}"
        database = self.call(what, self.client.databases.retrieve, database_id)
        if trashed(database):
            raise self.error(f"The Notion database {database_id} is in the trash: restore it, or connect another")
        sources = database.get("data_sources")
        if not isinstance(sources, list):
            raise self.error(f"Notion's answer for {what} names no data sources (is the API older than "
                             f"{NOTION_VERSION}?)")
        return [dashed(str(s["id"])) for s in sources if isinstance(s, dict) and s.get("id")]

    def root(self, page_id: str) -> dict[str, Any]:
        page = self.call(f"the page {page_id}", self.client.pages.retrieve, page_id)
        if trashed(page):
            raise self.error(f"The Notion page {page_id} is in the trash: restore it, or connect another")
        return page

    def listing(self, what: str, request: Callable[..., Any], *args: Any, missing_ok: bool = False,
                **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every result of a paginated list call, following `next_cursor` while `has_more`."""
        cursor: str | None = None
        cursors: set[str] = set()
        while True:
            paging = {"start_cursor": cursor} if cursor else {}
            answer = self.call(what, request, *args, missing_ok=missing_ok, page_size=PAGE_SIZE, **paging, **kwargs)
            if answer is None:
                raise Missing(what)
            results = answer.get("results")
            if not isinstance(results, list):
                raise self.error(f"Notion's answer for {what} is not a list")
            yield from (r for r in results if isinstance(r, dict))
            if not answer.get("has_more"):
                return
            cursor = answer.get("next_cursor")
            if not isinstance(cursor, str) or not cursor or cursor in cursors:
                raise self.error(f"Notion's pages of {what} do not go on (has_more without a new next_cursor)")
            cursors.add(cursor)

    def call(self, what: str, request: Callable[..., Any], *args: Any, missing_ok: bool = False,
             **kwargs: Any) -> Any:
        """One call's answer (None for a 404 when `missing_ok`): a 429 waited out, a 5xx or a dropped connection
        tried again."""
        from notion_client.errors import HTTPResponseError, RequestTimeoutError

        limited = failed = 0
        while True:
            try:
                answer = request(*args, **kwargs)
            except HTTPResponseError as e:
                if e.status == 429 and limited + 1 < RATE_LIMIT_TRIES:
                    limited += 1
                    self.sleep(retry_after(e.headers, limited))
                    continue
                if e.status >= 500 and failed + 1 < SERVER_TRIES:
                    failed += 1
                    self.sleep(0.5 * 2 ** failed)
                    continue
                if e.status == 404 and missing_ok:
                    return None
                raise self.error(refusal(e, what, limited or failed)) from e
            except (RequestTimeoutError, httpx.TransportError) as e:  # the pinned client's refusal is a ConnectError
                if failed + 1 < SERVER_TRIES:
                    failed += 1
                    self.sleep(0.5 * 2 ** failed)
                    continue
                reason = "did not answer in time" if isinstance(e, RequestTimeoutError | httpx.TimeoutException) \
                    else f"cannot be reached ({str(e) or type(e).__name__})"
                raise self.error(f"Notion at {self.base_url} {reason}, {failed + 1} tries") from e
            except ValueError as e:  # a 200 whose body is not JSON: a proxy's page, not Notion's answer
                raise self.error(f"Notion's answer for {what} is not JSON: is {self.base_url} Notion's API?") from e
            if not isinstance(answer, dict):
                raise self.error(f"Notion's answer for {what} is not an object")
            return answer


def refusal(e: "HTTPResponseError", what: str, retried: int) -> str:
    """What a Notion error means for whoever connects, in words."""
    code = error_code(e)
    if e.status == 401:
        return ("Notion refused the token (401 unauthorized): settings.token must be the secret of an internal "
                "integration (notion.so/profile/integrations), still installed in the workspace")
    if e.status == 403:
        return (f"Notion refused the integration access to {what} (403 {code}): give it the capability to read "
                "content, and share the page or database with the integration")
    if e.status == 404:
        return (f"Notion cannot find {what} (404 {code}): share the page or database with the integration (in "
                "Notion, its ••• menu → Connections), and check the id")
    if e.status == 429:
        return f"Notion kept asking to slow down (429 {code}) after {retried + 1} tries: try again in a minute"
    if e.status >= 500:
        return f"Notion answered HTTP {e.status} ({code}) to {retried + 1} tries: try again later"
    return f"Notion refused the request for {what} (HTTP {e.status} {code}: {text.shorten(str(e), 300)})"


def error_code(e: "HTTPResponseError") -> str:
    """Notion's error code: the client's, or the body's where the client does not know it (`bad_gateway`)."""
    code = str(getattr(e.code, "value", e.code))
    if code == "notionhq_client_response_error":
        try:
            said = json.loads(e.body).get("code")
        except (ValueError, AttributeError):
            said = None
        return str(said) if isinstance(said, str) and said.isidentifier() else f"HTTP {e.status}"
    return code


def retry_after(headers: httpx.Headers, attempt: int) -> float:
    """Seconds to wait before the next try: Retry-After (seconds, or an HTTP date), else 1, 2, 4… capped."""
    value = headers.get("retry-after", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError):
            seconds = float(2 ** (attempt - 1))
    return max(0.0, min(seconds, LONGEST_WAIT)) if math.isfinite(seconds) else LONGEST_WAIT


# --- settings ---

def read_settings(settings: Mapping[str, str]) -> tuple[str, Scope]:
    token = str(settings.get("token") or "").strip()
    if not token:
        raise InvalidInput("A Notion integration needs settings.token: the secret of an internal integration "
                           "(notion.so/profile/integrations), with the pages or databases shared with it")
    if not TOKEN.fullmatch(token):
        raise InvalidInput("settings.token is not a Notion token (printable characters, no spaces)")
    database = str(settings.get("database") or "").strip()
    page = str(settings.get("page") or "").strip()
    if bool(database) == bool(page):
        raise InvalidInput("A Notion integration needs either settings.database (a database's id or link, or "
                           "several separated by commas) or settings.page (a page's id or link: it and the pages "
                           "under it), not both")
    if page:
        return token, Scope(page=notion_id(page, "page"))
    databases = tuple(dict.fromkeys(notion_id(d, "database") for d in database.split(",") if d.strip()))
    if not databases or len(databases) > MOST_DATABASES:
        raise InvalidInput(f"settings.database names 1 to {MOST_DATABASES} databases, separated by commas")
    return token, Scope(databases=databases)


def notion_id(value: str, what: str) -> str:
    """An id in Notion's form (dashed, lowercase) from an id with or without dashes, or from a Notion link."""
    value = value.strip()
    if DASHED_ID.fullmatch(value) or HEX_ID.fullmatch(value):
        return dashed(value)
    if "/" in value:
        parts = urlsplit(value if "://" in value else "https://" + value)
        peek = parse_qs(parts.query).get("p", []) if what == "page" else []  # a page opened in a side peek
        for where in [*peek, parts.path.rstrip("/").rsplit("/", 1)[-1]]:
            found = HEX_ID.findall(where.replace("-", "")[-32:]) or DASHED_ID.findall(where)
            if found:
                return dashed(found[-1])
    raise InvalidInput(f"settings.{what} is not a Notion {what}'s id or link: {text.shorten(value)} (an id is 32 "
                       "hex digits, with or without dashes, as at the end of the page's link)")


def dashed(notion_id: str) -> str:
    compact = notion_id.replace("-", "").lower()
    if len(compact) != 32:
        return notion_id.lower()
    return f"{compact[:8]}-{compact[8:12]}-{compact[12:16]}-{compact[16:20]}-{compact[20:]}"


# --- a page as text ---

@dataclass
class Body:
    """A page's body as it is read: its lines, the pages it links to, its child pages, and its length so far."""

    lines: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    child_pages: list[str] = field(default_factory=list)
    size: int = 0
    incomplete: str = ""  # why part of it could not be read (its child pages there are unknown)

    def add(self, line: str, depth: int, kind: str) -> None:
        if self.size > text.MAX_CONTENT_CHARS:  # cut off the mirror anyway (its child pages are still found)
            return
        indent = "  " * depth
        first, *rest = line.split("\n")
        more = "> " if kind in ("quote", "callout") else "  " if kind in LIST_ITEMS else ""
        shown = "\n".join([indent + first, *(indent + more + r for r in rest)])
        self.lines.append(shown)
        self.size += len(shown) + 1

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip("\n")


def block_line(kind: str, data: Mapping[str, Any], number: int, links: list[str]) -> str | None:
    """A block's own line (its nested blocks come after it), or None for a block shown as nothing."""
    if kind in PREFIXES:
        return PREFIXES[kind] + rich_text(data.get("rich_text"), links)
    if kind == "numbered_list_item":
        return f"{number}. " + rich_text(data.get("rich_text"), links)
    if kind == "to_do":
        return ("- [x] " if data.get("checked") else "- [ ] ") + rich_text(data.get("rich_text"), links)
    if kind == "callout":
        icon = data.get("icon") or {}
        emoji = f"{icon['emoji']} " if isinstance(icon, dict) and icon.get("type") == "emoji" and icon.get("emoji") \
            else ""
        return f"> {emoji}" + rich_text(data.get("rich_text"), links)
    if kind == "code":
        language = str(data.get("language") or "")
        language = "" if language == "plain text" else language
        return f"```{language}\n{rich_text(data.get('rich_text'), links)}\n```"
    if kind == "divider":
        return "---"
    if kind == "equation":
        return f"$$ {data.get('expression', '')} $$"
    if kind in ("bookmark", "embed", "link_preview"):
        url = str(data.get("url") or "")
        caption = rich_text(data.get("caption"), links)
        if not url:
            return caption or None
        return f"[{caption}]({url})" if caption else url
    if kind in ("child_page", "child_database"):
        return str(data.get("title") or "Untitled")
    return None  # an image, a file, a breadcrumb, a table of contents, an unsupported block: nothing to read


def rich_text(parts: Any, links: list[str]) -> str:
    """Rich text as plain text (a link to the web as Markdown), the pages it mentions or links to added to
    `links`."""
    shown: list[str] = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        plain = str(part.get("plain_text") or "")
        if part.get("type") == "mention":
            mention = part.get("mention") or {}
            if mention.get("type") == "page" and isinstance(mention.get("page"), dict):
                links.append(dashed(str(mention["page"].get("id", ""))))
        elif part.get("type") == "text":
            url = str(((part.get("text") or {}).get("link") or {}).get("url") or "")
            target = page_link(url)
            if target:
                links.append(target)
            elif url.startswith(("http://", "https://")) and url != plain:
                plain = f"[{plain}]({url})"
        shown.append(plain)
    return "".join(shown)


def page_link(url: str) -> str | None:
    """The page a link names, where it is a link to a Notion page (`/<id>`, notion.so, notion.site)."""
    if not url:
        return None
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if url.startswith("/") or host in ("notion.so", "www.notion.so") or host.endswith(".notion.site"):
        found = HEX_ID.findall(parts.path.rsplit("/", 1)[-1].replace("-", "")[-32:])
        return dashed(found[-1]) if found else None
    return None


def page_title(page: Mapping[str, Any]) -> str:
    for prop in (page.get("properties") or {}).values():
        if isinstance(prop, dict) and prop.get("type") == "title":
            title = rich_text(prop.get("title"), []).strip()
            return title.replace("\n", " ") or "Untitled"
    return "Untitled"


def page_tags(page: Mapping[str, Any]) -> tuple[str, ...]:
    """`notion`, and the values of a `Tags` property (multi-select or select), lowercased."""
    found: list[str] = []
    for name, prop in (page.get("properties") or {}).items():
        if str(name).strip().lower() != "tags" or not isinstance(prop, dict):
            continue
        if prop.get("type") == "multi_select":
            options = prop.get("multi_select") or []
        elif prop.get("type") == "select":
            options = [prop.get("select") or {}]
        else:
            continue
        found += [str(o.get("name") or "").strip().lower() for o in options if isinstance(o, dict)]
    kept = [t for t in text.dedupe(["notion", *found]) if t and len(t) <= text.MAX_TAG_CHARS]
    return tuple(kept[:text.MAX_TAGS])


def _edited(page: Mapping[str, Any]) -> datetime | None:
    """The page's `last_edited_time`, aware; None when it has none that parses."""
    try:
        moment = datetime.fromisoformat(str(page.get("last_edited_time") or "").replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else None


def edited_at(page: Mapping[str, Any]) -> int | None:
    """When the page was last edited (what its "tomorrow" means), unix ms."""
    moment = _edited(page)
    return int(moment.timestamp() * 1000) if moment else None


def settled(page: Mapping[str, Any], now: datetime) -> str:
    """A database page's version: its `last_edited_time` once that is past SETTLED (Notion gives it to the minute,
    so an edit within the minute a sync read the page leaves it as it was); "" before (the page is read again)."""
    moment = _edited(page)
    return str(page.get("last_edited_time")) if moment and now - moment > SETTLED else ""


def trashed(found: Mapping[str, Any]) -> bool:
    return bool(found.get("in_trash") or found.get("archived"))
