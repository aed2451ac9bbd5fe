"""The brain-wide audit feed: the log newest first, each event named and described without anyone's text, and
only the events of streams the caller can read now.

Scope is decided at the time of asking: a memory's events show while the caller can read the memory (shared
later, its earlier events show to the team; taken back, they go); an edge's while both its ends are readable; a
project's in a readable workspace; the team, config, maintenance, OAuth and push streams to admins only. A
forgotten memory's events are erased and never show; its tombstone shows as `deleted` (id, time, who, nothing
else) to whoever reads the workspace it was forgotten from. The capture bookkeeping streams (idempotency keys,
content claims) and the mirrors kept for other feeds (team-shares, patterns-*) never show.

Bounded work: a request reads about SCAN_CAP events of the log at most, WINDOW at a time, whatever the log's size
or the filters, and says where it stopped (`next_cursor`) and how many it read (`scanned`).
"""

import re
from collections.abc import Iterable
from typing import Any

from ...domain import shown
from ...domain.errors import InvalidInput, NotFound
from ...domain.events import MEMORY_STREAM, REGISTRY, Envelope, Erased, MemoryForgotten, memory_of, memory_stream
from ...domain.text import shorten
from ...ports.event_store import EventMatch, EventStore
from ...ports.read_model import EntryReads, EntryRow
from ..handling import Context
from ..memories.views import TIMELINE_NAMES, actor_name, shown_to

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
SCAN_CAP = 5_000  # events one request reads at most
WINDOW = 1_000  # events per store read
ADMIN_KINDS = frozenset({"team", "config", "maintenance", "oauth", "push"})
NEVER_SHOWN = frozenset({"content", "idempotency", "team_shares", "patterns", "other"})
KINDS = ((MEMORY_STREAM, "memory"), ("link-", "edge"), ("project-", "project"), ("maintenance-", "maintenance"),
         ("oauth-", "oauth"), ("team-shares", "team_shares"), ("team", "team"), ("config", "config"),
         ("push", "push"), ("patterns-", "patterns"), ("content-", "content"), ("idempotency-", "idempotency"),
         ("integration", "integration"))


def event_name(stored_type: str) -> str:
    """What the feed calls an event: the /entry timeline's name where it has one, else the type in snake_case."""
    return TIMELINE_NAMES.get(stored_type) or re.sub(r"(?<!^)(?=[A-Z])", "_", stored_type).lower()


NAMES: dict[str, tuple[str, ...]] = {}
for _stored in REGISTRY:
    NAMES[event_name(_stored)] = (*NAMES.get(event_name(_stored), ()), _stored)


def stored_types(names: Iterable[str]) -> tuple[str, ...]:
    """The stored type names for the feed's names (a stored name is taken as it is); an unknown one is refused."""
    found: list[str] = []
    for name in (n.strip() for n in names if n.strip()):
        if name not in NAMES and name not in REGISTRY:
            raise InvalidInput(f"type: unknown event type {shorten(name)}")
        found += NAMES.get(name, (name,))
    return tuple(dict.fromkeys(found))


def stream_kind(stream_id: str) -> str:
    return next((kind for prefix, kind in KINDS if stream_id.startswith(prefix)), "other")


class Timeline:
    """One caller's view of the log, with the readability of each memory looked up once per request."""

    def __init__(self, store: EventStore, read_model: EntryReads, ctx: Context) -> None:
        self.store = store
        self.read_model = read_model
        self.identity = ctx.identity
        self.admin = ctx.identity.role == "admin"
        self._rows: dict[str, EntryRow | None] = {}

    def page(self, cursor: int | None, limit: int, match: EventMatch, memory_id: str | None = None
             ) -> dict[str, Any]:
        """Up to `limit` visible events below position `cursor` (None: the head), newest first."""
        floor = 0
        if memory_id is not None:
            if self.readable(memory_id) is None:
                raise NotFound(f"No entry found with ID: {shorten(memory_id)}")
            first = self.store.read_stream(memory_stream(memory_id))
            floor = first[0].position - 1 if first else 0  # nothing about it comes before its first event
        if match.since is not None:  # nothing up to the cut was stored at or after `since`: seek past it
            floor = max(floor, self.store.cut(match.since - 1))
        top = self.store.head() + 1 if match.until is None else self.store.last_by(match.until) + 1
        high = top if cursor is None else max(0, min(cursor, top))
        items: list[dict[str, Any]] = []
        scanned = 0
        while high - 1 > floor and scanned < SCAN_CAP:
            stretch = self.store.scan_back(high, floor, min(WINDOW, SCAN_CAP - scanned), match)
            scanned += stretch.examined
            for envelope in stretch.events:
                if not self.visible(envelope, memory_id):
                    continue
                items.append(self.item(envelope))
                if len(items) == limit:
                    return self._answer(items, envelope.position if envelope.position - 1 > floor else None,
                                        limit, scanned)
            if stretch.reached >= high:  # nothing below to read
                break
            high = stretch.reached
        return self._answer(items, high if high - 1 > floor else None, limit, scanned)

    @staticmethod
    def _answer(items: list[dict[str, Any]], cursor: int | None, limit: int, scanned: int) -> dict[str, Any]:
        return {"ok": True, "timeline": items, "order": "newest_first", "next_cursor": cursor, "limit": limit,
                "scanned": scanned}

    def readable(self, memory_id: str) -> EntryRow | None:
        if memory_id not in self._rows:
            self._rows[memory_id] = self.read_model.get(memory_id, self.identity.readable)
        return self._rows[memory_id]

    def visible(self, envelope: Envelope, memory_id: str | None = None) -> bool:
        event, kind = envelope.event, stream_kind(envelope.stream_id)
        if isinstance(event, Erased) or kind in NEVER_SHOWN:
            return False
        if memory_id is not None and kind not in ("memory", "edge"):
            return False
        if kind in ADMIN_KINDS:
            return self.admin
        if kind == "memory":
            if memory_id is not None and envelope.stream_id != memory_stream(memory_id):
                return False
            if isinstance(event, MemoryForgotten):
                return envelope.workspace in self.identity.readable
            if not shown_to(envelope, self.identity):
                return False
            shown = memory_of(envelope.stream_id)
            return shown is not None and self.readable(shown) is not None
        if kind == "edge":
            source, target = getattr(event, "source_id", None), getattr(event, "target_id", None)
            if source is None or target is None:
                return False
            return ((memory_id is None or memory_id in (source, target))
                    and all(self.readable(end) is not None for end in (source, target)))
        return kind in ("project", "integration") and envelope.workspace in self.identity.readable

    def item(self, envelope: Envelope) -> dict[str, Any]:
        kind = stream_kind(envelope.stream_id)
        return {"position": envelope.position, "at": envelope.at, "type": event_name(envelope.type),
                "stream": {"kind": kind, "id": self._stream_id(envelope, kind)},
                "actor_name": actor_name(self.identity, envelope.actor),
                "description": self._describe(envelope.event, kind, envelope.workspace)}

    def _stream_id(self, envelope: Envelope, kind: str) -> str | None:
        stream = envelope.stream_id
        if kind == "memory":
            return memory_of(stream)
        if kind == "project":
            return stream.removeprefix(f"project-{envelope.workspace}-")
        if kind == "maintenance":
            return stream.removeprefix("maintenance-")
        if kind == "integration":
            return stream.removeprefix("integration-")  # the registry stream: "integrations"
        return None if kind == "oauth" else stream  # an OAuth stream's id is a token's or a code's digest

    def _other(self, memory_id: str) -> str:
        return memory_id if self.readable(memory_id) is not None else "another memory"

    def _describe(self, event: object, kind: str, workspace: str = "") -> str:
        """A few words on what happened, as the event's row says them (never a memory's text, a token, a key or a
        setting's value); tags only of events written where the caller can read (not a member's while the memory
        was still their own)."""
        if kind == "memory" and workspace not in self.identity.readable:  # the rule /entry's timeline follows
            return f"{event_name(type(event).__name__).replace('_', ' ')} (before it was shared)"
        line = shown.line(event, self._other)
        if line is not None:
            return line
        member = getattr(event, "member_id", None)
        if kind == "team" and member:
            return f"member {actor_name(self.identity, member)}"
        return event_name(type(event).__name__).replace("_", " ")
