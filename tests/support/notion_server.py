"""A stand-in for Notion's public API, version 2025-09-03, for the Notion connector's tests: a real HTTP server on
127.0.0.1 answering the endpoints the connector calls. No Notion server is reachable here, so it is written from
Notion's public API reference (developers.notion.com/reference: the database, data source, page, block and rich text
objects, pagination, status codes and error codes, request limits), not from recordings; where the reference leaves a
detail open the choice is said below.

Endpoints:
  GET  /v1/databases/{id}              the database object of 2025-09-03: `data_sources` [{id, name}], no properties
  POST /v1/data_sources/{id}/query     the data source's pages (not the trashed ones, unless `in_trash`), oldest first
  GET  /v1/pages/{id}                  a page object (a trashed one too, `in_trash: true`)
  GET  /v1/blocks/{id}/children        a page's or block's child blocks (a trashed child page's block is left out)
A list answers {object: "list", results, next_cursor, has_more, type, <type>: {}}; `page_size` is 1 to 100 (100 by
default) and `start_cursor` is the `next_cursor` given, which (as Notion's) is the id of the next result. An error
answers {object: "error", status, code, message}: 401 `unauthorized` (no or another Bearer token), 400
`missing_version` (no Notion-Version header), 400 `validation_error` (a malformed id, a page_size out of range, an
unknown cursor, a page's id asked for as a database's or the other way), 404 `object_not_found` (an id it does not hold:
Notion says the same of one not shared with the integration), 400 `invalid_request_url` (any other path). A
Notion-Version other than 2025-09-03 is refused with 400 `validation_error`: this stand-in answers only that version's
shapes. Filters and sorts are not implemented (refused, 400), nor anything that writes.

The tests build the workspace in memory and change it between syncs (`page`, `set_body`, `rename`, `trash`), and make
it misbehave: `rate_limit` answers the next requests 429 `rate_limited` with a Retry-After, `fail` answers them with a
5xx, `block_delay` holds each blocks answer back. `requests` records each request's method, path and status.
"""

import json
import re
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

VERSION = "2025-09-03"
BOT = {"object": "user", "id": "9a3f2d1e-0000-4000-8000-000000000b07"}
ID = re.compile(r"[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ANNOTATIONS = {"bold": False, "italic": False, "strikethrough": False, "underline": False, "code": False,
               "color": "default"}
Content = str | dict[str, Any]


# --- what tests write bodies with: rich text and blocks as the reference shows them ---

def text(content: str, link: str | None = None) -> dict[str, Any]:
    return {"type": "text", "text": {"content": content, "link": {"url": link} if link else None},
            "annotations": dict(ANNOTATIONS), "plain_text": content, "href": link}


def mention(page_id: str, title: str) -> dict[str, Any]:
    """An @-mention of a page, as Notion answers it: its plain text is the page's title."""
    return {"type": "mention", "mention": {"type": "page", "page": {"id": page_id}},
            "annotations": dict(ANNOTATIONS), "plain_text": title,
            "href": f"https://www.notion.so/{page_id.replace('-', '')}"}


def rich(parts: Iterable[Content]) -> list[dict[str, Any]]:
    return [text(p) if isinstance(p, str) else p for p in parts]


def block(kind: str, data: dict[str, Any], children: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    return {"type": kind, kind: data, "children": list(children)}


def paragraph(*parts: Content, children: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    return block("paragraph", {"rich_text": rich(parts), "color": "default"}, children)


def heading(level: int, *parts: Content) -> dict[str, Any]:
    return block(f"heading_{level}", {"rich_text": rich(parts), "color": "default", "is_toggleable": False})


def bullet(*parts: Content, children: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    return block("bulleted_list_item", {"rich_text": rich(parts), "color": "default"}, children)


def numbered(*parts: Content, children: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    return block("numbered_list_item", {"rich_text": rich(parts), "color": "default"}, children)


def to_do(*parts: Content, checked: bool = False) -> dict[str, Any]:
    return block("to_do", {"rich_text": rich(parts), "checked": checked, "color": "default"})


def toggle(*parts: Content, children: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    return block("toggle", {"rich_text": rich(parts), "color": "default"}, children)


def quote(*parts: Content) -> dict[str, Any]:
    return block("quote", {"rich_text": rich(parts), "color": "default"})


def callout(emoji: str, *parts: Content) -> dict[str, Any]:
    return block("callout", {"rich_text": rich(parts), "icon": {"type": "emoji", "emoji": emoji},
                             "color": "gray_background"})


def code(source: str, language: str = "plain text") -> dict[str, Any]:
    return block("code", {"rich_text": rich([source]), "caption": [], "language": language})


def divider() -> dict[str, Any]:
    return block("divider", {})


def bookmark(url: str, caption: str = "") -> dict[str, Any]:
    return block("bookmark", {"url": url, "caption": rich([caption] if caption else [])})


def image(url: str) -> dict[str, Any]:
    return block("image", {"type": "external", "external": {"url": url}, "caption": []})


def link_to_page(page_id: str) -> dict[str, Any]:
    return block("link_to_page", {"type": "page_id", "page_id": page_id})


def table(*rows: Sequence[str], header: bool = True) -> dict[str, Any]:
    width = max(len(r) for r in rows)
    return block("table", {"table_width": width, "has_column_header": header, "has_row_header": False},
                 [block("table_row", {"cells": [rich([cell]) for cell in row]}) for row in rows])


def column_list(*columns: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return block("column_list", {}, [block("column", {}, list(c)) for c in columns])


# --- the server ---

class NotionError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


def now() -> str:
    # Notion's created_time and last_edited_time are to the minute
    return datetime.now(UTC).replace(second=0, microsecond=0).strftime("%Y-%m-%dT%H:%M:00.000Z")


def new_id() -> str:
    return str(uuid.uuid4())


class NotionServer:
    def __init__(self, token: str = "ntn_test_0123456789abcdef") -> None:
        self.token = token
        self.lock = threading.RLock()
        self.databases: dict[str, dict[str, Any]] = {}
        self.sources: dict[str, str] = {}  # data source id → its database's id
        self.pages: dict[str, dict[str, Any]] = {}
        self.blocks: dict[str, dict[str, Any]] = {}  # every block, child_page blocks too (their id the page's)
        self.children: dict[str, list[str]] = {}  # a page's or block's child blocks, in order
        self.requests: list[tuple[str, str, int]] = []
        self.block_delay = 0.0
        self._faults: list[NotionError] = []
        self._faults_after = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the client's pool expects
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall between

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def do_PATCH(self) -> None:
                self._answer("PATCH")

            def _answer(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, payload, headers = fake.answer(method, self.path, dict(self.headers.items()), raw)
                body = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client went (a brain killed mid-sync)
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- what tests do upstream ---

    def database(self, title: str) -> str:
        """A database with one data source (a new database's shape since 2025-09-03)."""
        database_id, source_id = new_id(), new_id()
        with self.lock:
            self.databases[database_id] = {
                "object": "database", "id": database_id, "title": rich([title]), "description": [],
                "parent": {"type": "workspace", "workspace": True}, "is_inline": False, "in_trash": False,
                "is_locked": False, "created_time": now(), "last_edited_time": now(), "created_by": BOT,
                "last_edited_by": BOT, "data_sources": [{"id": source_id, "name": title}], "icon": None,
                "cover": None, "url": f"https://www.notion.so/{database_id.replace('-', '')}", "public_url": None}
            self.sources[source_id] = database_id
        return database_id

    def page(self, title: str, body: Sequence[dict[str, Any]] = (), *, database: str | None = None,
             parent: str | None = None, within: str | None = None, tags: Sequence[str] | None = None) -> str:
        """A page in a database (its title property `Name`, its `Tags` a multi-select) or under a page (a
        `child_page` block added at the end of the parent's body, or of the block `within` it: a toggle's), or at
        the workspace's top."""
        page_id = new_id()
        with self.lock:
            if database is not None:
                source = self.databases[database]["data_sources"][0]["id"]
                where = {"type": "data_source_id", "data_source_id": source, "database_id": database}
                properties: dict[str, Any] = {"Name": {"id": "title", "type": "title", "title": rich([title])}}
                if tags is not None:
                    properties["Tags"] = {"id": "%3Ftgs", "type": "multi_select", "multi_select": [
                        {"id": new_id(), "name": t, "color": "default"} for t in tags]}
            else:
                where = ({"type": "block_id", "block_id": within} if within else
                         {"type": "page_id", "page_id": parent} if parent else {"type": "workspace", "workspace": True})
                properties = {"title": {"id": "title", "type": "title", "title": rich([title])}}
            self.pages[page_id] = {
                "object": "page", "id": page_id, "created_time": now(), "last_edited_time": now(),
                "created_by": BOT, "last_edited_by": BOT, "cover": None, "icon": None, "parent": where,
                "archived": False, "in_trash": False, "is_locked": False, "properties": properties,
                "url": page_url(title, page_id), "public_url": None}
            self.children[page_id] = []
            if parent is not None:
                self._add(within or parent, {"type": "child_page", "child_page": {"title": title}, "children": []},
                          page_id)
            for spec in body:
                self._add(page_id, spec)
        return page_id

    def block_of(self, parent: str, kind: str) -> str:
        """The id of the first block of `kind` in a page's (or block's) body."""
        with self.lock:
            return next(b for b in self.children[parent] if self.blocks[b]["type"] == kind)

    def set_body(self, page_id: str, body: Sequence[dict[str, Any]]) -> None:
        """The page's body replaced (its child pages' blocks kept first)."""
        with self.lock:
            kept = [b for b in self.children[page_id] if self.blocks[b]["type"] == "child_page"]
            self.children[page_id] = kept
            for spec in body:
                self._add(page_id, spec)
            self._edited(page_id)

    def rename(self, page_id: str, title: str) -> None:
        with self.lock:
            page = self.pages[page_id]
            for prop in page["properties"].values():
                if prop["type"] == "title":
                    prop["title"] = rich([title])
            page["url"] = page_url(title, page_id)
            if page_id in self.blocks:
                self.blocks[page_id]["child_page"]["title"] = title
            self._edited(page_id)

    def trash(self, page_id: str) -> None:
        """The page moved to the trash: `in_trash` (and the older `archived`) true, out of queries and of its
        parent's children."""
        with self.lock:
            self.pages[page_id].update(in_trash=True, archived=True)
            if page_id in self.blocks:
                self.blocks[page_id].update(in_trash=True, archived=True)
            self._edited(page_id)

    def rate_limit(self, times: int, retry_after: str = "1", after: int = 0) -> None:
        """The `times` requests after the next `after` answered 429, as Notion does past its request limit."""
        with self.lock:
            self._faults_after = after
            self._faults = [NotionError(429, "rate_limited", "You have been rate limited. Please try again in a few "
                                        "minutes.", {"Retry-After": retry_after}) for _ in range(times)]

    def fail(self, times: int, status: int = 503, after: int = 0) -> None:
        code = {500: "internal_server_error", 502: "bad_gateway", 503: "service_unavailable",
                504: "gateway_timeout"}.get(status, "internal_server_error")
        with self.lock:
            self._faults_after = after
            self._faults = [NotionError(status, code, "Notion is unavailable, please try again later.")
                            for _ in range(times)]

    def count(self, method: str, path_start: str, status: int | None = None) -> int:
        with self.lock:
            return sum(1 for m, p, s in self.requests
                       if m == method and p.startswith(path_start) and (status is None or s == status))

    def _add(self, parent: str, spec: dict[str, Any], block_id: str | None = None) -> str:
        block_id = block_id or new_id()
        kind = spec["type"]
        where = ({"type": "page_id", "page_id": parent} if parent in self.pages
                 else {"type": "block_id", "block_id": parent})
        self.blocks[block_id] = {
            "object": "block", "id": block_id, "parent": where, "created_time": now(), "last_edited_time": now(),
            "created_by": BOT, "last_edited_by": BOT, "has_children": False, "archived": False, "in_trash": False,
            "type": kind, kind: json.loads(json.dumps(spec[kind]))}
        self.children.setdefault(parent, []).append(block_id)
        if kind != "child_page":  # a child page's own body is its page's
            self.children.setdefault(block_id, [])
            for child in spec.get("children", []):
                self._add(block_id, child)
        return block_id

    def _edited(self, page_id: str) -> None:
        self.pages[page_id]["last_edited_time"] = now()

    # --- answering ---

    def answer(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any, dict]:
        parts = urlsplit(target)
        try:
            status, payload, extra = 200, self._route(method, parts.path, parse_qs(parts.query), headers, raw), {}
        except NotionError as e:
            status, extra = e.status, e.headers
            payload = {"object": "error", "status": e.status, "code": e.code, "message": e.message,
                       "request_id": new_id()}
        with self.lock:
            self.requests.append((method, parts.path, status))
        return status, payload, extra

    def _route(self, method: str, path: str, query: dict[str, list[str]], headers: dict[str, str],
               raw: bytes) -> Any:
        with self.lock:
            if self._faults_after > 0:
                self._faults_after -= 1
            elif self._faults:
                raise self._faults.pop(0)
        auth = {k.lower(): v for k, v in headers.items()}
        if auth.get("authorization") != f"Bearer {self.token}":
            raise NotionError(401, "unauthorized", "API token is invalid.")
        version = auth.get("notion-version")
        if not version:
            raise NotionError(400, "missing_version", "Notion-Version header failed validation: Notion-Version "
                              "header should be defined, instead was `undefined`.")
        if version != VERSION:
            raise NotionError(400, "validation_error", f"This stand-in answers Notion-Version {VERSION} only, "
                              f"not {version}.")
        try:
            body = json.loads(raw) if raw else {}
        except ValueError as e:
            raise NotionError(400, "invalid_json", "Error parsing JSON body.") from e
        if (m := re.fullmatch(r"/v1/databases/([^/]+)", path)) and method == "GET":
            return self._database(m.group(1))
        if (m := re.fullmatch(r"/v1/data_sources/([^/]+)/query", path)) and method == "POST":
            return self._query(m.group(1), body)
        if (m := re.fullmatch(r"/v1/pages/([^/]+)", path)) and method == "GET":
            return self._page(m.group(1))
        if (m := re.fullmatch(r"/v1/blocks/([^/]+)/children", path)) and method == "GET":
            if self.block_delay:
                time.sleep(self.block_delay)
            return self._children(m.group(1), query)
        raise NotionError(400, "invalid_request_url", "Invalid request URL.")

    def _database(self, raw_id: str) -> dict[str, Any]:
        database_id = checked_id(raw_id, "database_id")
        with self.lock:
            if database_id in self.pages:
                raise NotionError(400, "validation_error", f"Provided ID {database_id} is a page, not a database. "
                                  f"Use the retrieve page API instead, `/v1/pages/{database_id}`.")
            if database_id not in self.databases:
                raise not_found("database", database_id)
            return {**json.loads(json.dumps(self.databases[database_id])), "request_id": new_id()}

    def _page(self, raw_id: str) -> dict[str, Any]:
        page_id = checked_id(raw_id, "page_id")
        with self.lock:
            if page_id in self.databases:
                raise NotionError(400, "validation_error", f"Provided ID {page_id} is a database, not a page. Use "
                                  f"the retrieve database API instead, `/v1/databases/{page_id}`.")
            if page_id not in self.pages:
                raise not_found("page", page_id)
            return {**json.loads(json.dumps(self.pages[page_id])), "request_id": new_id()}

    def _query(self, raw_id: str, body: Any) -> dict[str, Any]:
        source_id = checked_id(raw_id, "data_source_id")
        if not isinstance(body, dict):
            raise NotionError(400, "validation_error", "body failed validation: body should be an object.")
        unknown = set(body) - {"start_cursor", "page_size", "result_type", "in_trash"}
        if unknown:
            raise NotionError(400, "validation_error", f"This stand-in implements no {', '.join(sorted(unknown))}.")
        with self.lock:
            if source_id not in self.sources:
                raise not_found("data_source", source_id)
            trashed = body.get("in_trash") is True  # only the trashed pages, if asked; else only the others
            pages = [p for p in self.pages.values() if p["parent"].get("data_source_id") == source_id
                     and p["in_trash"] == trashed and body.get("result_type") in (None, "page")]
            results = [json.loads(json.dumps(p)) for p in pages]
        return paginated(results, body.get("page_size"), body.get("start_cursor"), "page_or_data_source", "body")

    def _children(self, raw_id: str, query: dict[str, list[str]]) -> dict[str, Any]:
        block_id = checked_id(raw_id, "block_id")
        size = query.get("page_size", [None])[0]
        with self.lock:
            if block_id not in self.children:
                raise not_found("block", block_id)
            found = [self.blocks[b] for b in self.children[block_id] if not self.blocks[b]["in_trash"]]
            results = []
            for b in found:
                shown = json.loads(json.dumps(b))
                shown["has_children"] = any(not self.blocks[c]["in_trash"] for c in self.children.get(b["id"], []))
                results.append(shown)
        return paginated(results, size, query.get("start_cursor", [None])[0], "block", "query")


def paginated(results: list[dict[str, Any]], size: Any, cursor: Any, kind: str, where: str) -> dict[str, Any]:
    """One page of a list, as Notion paginates: `page_size` 1-100 (100), `start_cursor` the next result's id."""
    if size is None:
        size = 100
    try:
        size = int(size)
    except (TypeError, ValueError) as e:
        raise NotionError(400, "validation_error", f"{where}.page_size should be a number, instead was "
                          f"`{size!r}`.") from e
    if not 1 <= size <= 100:
        raise NotionError(400, "validation_error", f"{where}.page_size should be ≤ `100` and ≥ `1`, instead was "
                          f"`{size}`.")
    start = 0
    if cursor is not None:
        ids = [r["id"] for r in results]
        if cursor not in ids:
            raise NotionError(400, "validation_error", f"The start_cursor provided is invalid: {cursor}")
        start = ids.index(cursor)
    page = results[start:start + size]
    more = start + size < len(results)
    return {"object": "list", "results": page, "next_cursor": results[start + size]["id"] if more else None,
            "has_more": more, "type": kind, kind: {}, "request_id": new_id()}


def checked_id(raw: str, name: str) -> str:
    value = raw.lower()
    if not ID.fullmatch(value):
        raise NotionError(400, "validation_error", f"path failed validation: path.{name} should be a valid uuid, "
                          f"instead was `\"{raw}\"`.")
    compact = value.replace("-", "")
    return f"{compact[:8]}-{compact[8:12]}-{compact[12:16]}-{compact[16:20]}-{compact[20:]}"


def not_found(kind: str, object_id: str) -> NotionError:
    return NotionError(404, "object_not_found", f"Could not find {kind} with ID: {object_id}. Make sure the relevant "
                       "pages and databases are shared with your integration.")


def page_url(title: str, page_id: str) -> str:
    slug = "-".join(re.findall(r"[A-Za-z0-9]+", title))
    return f"https://www.notion.so/{slug + '-' if slug else ''}{page_id.replace('-', '')}"
