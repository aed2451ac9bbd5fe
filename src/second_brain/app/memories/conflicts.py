"""The review list: what capture decided about pairs of memories in the last 30 days (retired, kept as a draft,
flagged as similar or as a possible update, merged, replaced), read from the log, and a person's answer to each,
appended as events (domain/conflicts.py decides them). "Keep both" of an automatic outcome is its undo.

Items are read from the log by event type (the store's pages, newest first), not from a read model, so a pair
shows the moment its capture is stored, on every backend. The memories are folded from their streams: an answer
is decided on their current state, and refused (409) when a memory changed in a way the answer would overwrite.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import reduce
from typing import Any

from ...domain import conflicts as k
from ...domain.errors import Forbidden, NotFound, Outdated
from ...domain.events import (
    ContradictionLost,
    DuplicateSuspected,
    Envelope,
    MemoryRevised,
    memory_of,
    memory_stream,
)
from ...domain.memory import Memory, evolve, fold
from ...domain.text import shorten
from ...ports.clock import Clock
from ...ports.event_store import EventMatch, EventStore
from ..handling import Context, envelopes, retrying

DAY_MS = 24 * 3600 * 1000
PAGE = 200
LAST = 2**62  # a position past any the log will hold: a page from the newest event, without asking for the head
MADE_BY = ("ContradictionLost", "DuplicateSuspected", "ConflictSuspected", "MemoryRevised")
# What a capture's change may be followed by without the answer overwriting anything a person did since.
QUIET = ("MemoryRecalled", "MemoryOpened", "MemoryClassified", "StalenessJudged", "ReminderPushed",
         "DuplicateSuspected", "ContradictionWon", "ContradictionLost", "ConflictSuspected", "MemoryDrawnInto",
         "WordsErased")


@dataclass(frozen=True)
class Item:
    """One pair waiting for an answer."""

    name: str  # `<memory id>@<version>` of the event that made it
    kind: str
    at: int
    older: Memory
    newer: Memory | None  # None for a merge or replacement: the note lives in the older memory
    reason: str
    before: Memory | None  # the older memory just before the capture changed it
    folded: str  # the note a merge or replacement took in


class ConflictReview:
    def __init__(self, store: EventStore, clock: Clock,
                 store_note: Callable[[Context, str, Memory, str], str]) -> None:
        self.store = store
        self.clock = clock
        self.store_note = store_note  # stores a note that was folded in as its own memory (once per key); its id

    def pending(self, ctx: Context, limit: int) -> tuple[list[dict[str, Any]], int]:
        """The items of the last 30 days the caller can read both sides of, newest first, not yet answered."""
        since = self.clock.now_ms() - k.REVIEW_DAYS * DAY_MS
        answered = self._answered(since)
        found: list[dict[str, Any]] = []
        total = 0
        for envelope in self._pages(EventMatch(types=MADE_BY, since=since)):
            name = k.item_name(memory_of(envelope.stream_id) or "", envelope.version)
            if name in answered:
                continue
            item = self._item(envelope)
            if item is None or not self._readable(ctx, item):
                continue
            total += 1
            if len(found) < limit:
                found.append(view(item))
        return found, total

    def count(self, ctx: Context) -> int:
        """How many items wait, from one page of the log (the brief's fixed number of reads: no stream is folded,
        and at most the newest PAGE events of the kinds that make or answer an item are read, so a count past
        that is a floor): the items' events in the caller's readable workspaces, not erased, not answered.
        Newest first, an answer comes before the item it answers."""
        since = self.clock.now_ms() - k.REVIEW_DAYS * DAY_MS
        answered: set[str] = set()
        waiting = 0
        for e in self.store.read_page(LAST, 0, PAGE, EventMatch(types=(*MADE_BY, "ConflictAnswered"), since=since)):
            if isinstance(e.event, k.ConflictAnswered):
                answered.add(e.event.item)
            elif (e.workspace in ctx.identity.readable and _makes_item(e.event)
                  and k.item_name(memory_of(e.stream_id) or "", e.version) not in answered):
                waiting += 1
        return waiting

    def answer(self, ctx: Context, name: str, keep: str) -> dict[str, Any]:
        """Keep both, the newer or the older memory of an item; one atomic append across the pair."""
        memory_id, version = k.parse_item(name)
        keep = k.check_keep(keep)

        def attempt() -> dict[str, Any]:
            events = self.store.read_stream(memory_stream(memory_id))
            made = next((e for e in events if e.version == version), None)
            item = self._item(made, events) if made is not None else None
            if made is None or item is None or not self._readable(ctx, item):
                raise NotFound(f"No conflict found: {shorten(name)}")
            if self._answered(item.at - 1).get(item.name):
                raise Outdated(f"{name} was answered already")
            pair = [item.older] + ([item.newer] if item.newer else [])
            if not all(ctx.identity.can_edit(m.workspace, m.actor) for m in pair):
                raise Forbidden("Only who may edit both memories may answer for them")
            self._unchanged_since(item, keep, events, made)
            decided = k.answer(item.kind, keep, item.name, item.older, item.newer, item.before, item.folded)
            # The note a merge took in is stored first, under a key the item names: a retry after a lost race (or
            # a crash before the answer's append) finds it stored and gets the same memory, never a second one.
            stored = self.store_note(ctx, decided.note, item.older, f"conflict-{item.name}") if decided.note else None
            by_id = {m.id: m for m in pair}
            if stored and (note := self._memory(stored)) is not None:
                decided = k.split_out(decided, item.name, item.kind, item.older.id, stored)
                by_id[stored] = note
            now = self.clock.now_ms()
            batch = [e for memory_id_, evs in decided.events.items()
                     for e in envelopes(ctx, memory_stream(memory_id_), by_id[memory_id_].version, evs,
                                        by_id[memory_id_].workspace, now)]
            self.store.append(batch)
            return {"ok": True, "conflict": item.name, "kind": item.kind, "keep": keep,
                    "kept": [m.id for m in pair if not _deprecated_after(m, decided.events.get(m.id, []))]
                    + ([stored] if stored else []),
                    **({"stored": stored} if stored else {})}

        return retrying(attempt)

    def _pages(self, match: EventMatch) -> Iterator[Envelope]:
        before = self.store.head() + 1
        while True:
            page = self.store.read_page(before, 0, PAGE, match)
            yield from page
            if len(page) < PAGE:
                return
            before = page[-1].position

    def _answered(self, since: int) -> dict[str, str]:
        return {e.event.item: e.event.keep for e in self._pages(EventMatch(types=("ConflictAnswered",), since=since))
                if isinstance(e.event, k.ConflictAnswered)}

    def _item(self, made: Envelope, events: list[Envelope] | None = None) -> Item | None:
        """The item an event makes, folded from the streams as they are now (`events`: its own stream, when the
        caller read it already); None if it makes none (an update, a memory since forgotten)."""
        memory_id = memory_of(made.stream_id)
        if memory_id is None or not _makes_item(made.event):
            return None  # decided from the event alone: an ordinary update reads no stream
        if events is None:
            events = self.store.read_stream(made.stream_id)
        here = fold(events, Memory(memory_id))
        if not here.exists:
            return None
        event = made.event
        name = k.item_name(memory_id, made.version)
        if isinstance(event, MemoryRevised):
            before = fold(_before_request(events, made), Memory(memory_id))
            folded = event.note if event.reason == "merged" else event.content
            return Item(name, event.reason, made.at, here, None, "", before, folded)
        if isinstance(event, ContradictionLost):
            other = self._memory(event.other_id)
            if other is None:
                return None
            if here.position > other.position:  # the loser came later: the new note, kept as a draft
                return Item(name, "kept_canonical", made.at, other, here, event.reason, None, "")
            before = fold(_before_request(events, made), Memory(memory_id))
            return Item(name, "retired", made.at, here, other, event.reason, before, "")
        if isinstance(event, DuplicateSuspected):
            other = self._memory(event.match_id)
            reason = f"{round(event.score * 100)}% similar"
            return Item(name, "similar", made.at, other, here, reason, None, "") if other else None
        if isinstance(event, k.ConflictSuspected):
            other = self._memory(event.other_id)
            return Item(name, "possible_update", made.at, other, here, event.reason, None, "") if other else None
        return None

    def _memory(self, memory_id: str) -> Memory | None:
        state = fold(self.store.read_stream(memory_stream(memory_id)), Memory(memory_id))
        return state if state.exists else None

    @staticmethod
    def _readable(ctx: Context, item: Item) -> bool:
        return all(m.workspace in ctx.identity.readable for m in (item.older, item.newer) if m is not None)

    @staticmethod
    def _unchanged_since(item: Item, keep: str, events: list[Envelope], made: Envelope) -> None:
        """Refuse an answer that would overwrite what someone changed after the capture: a restore of the older
        memory's text or tags (`events`: its stream, where `made` made the item) once it was edited, retagged or
        re-statused since."""
        if item.kind not in ("merged", "replaced", "retired") or keep == "newer":
            return  # nothing of the older memory is restored
        later = [e for e in events[batch_of(events, made)[1]:] if e.type not in QUIET]
        if later:
            raise Outdated(f"Memory {item.older.id} was changed after the capture: edit it directly instead")


def _makes_item(event: object) -> bool:
    """Whether an event of MADE_BY makes an item (an update or an erased event does not)."""
    if isinstance(event, MemoryRevised):
        return event.reason in ("merged", "replaced")
    return isinstance(event, (ContradictionLost, DuplicateSuspected, k.ConflictSuspected))


def batch_of(events: list[Envelope], made: Envelope) -> tuple[int, int]:
    """Where the append that wrote `made` begins and ends in its stream (indexes, end exclusive): the events around
    it with its request id and its time (one append stamps all of its events with one time)."""
    index = next(i for i, e in enumerate(events) if e.version == made.version)
    start, end = index, index + 1
    while start > 0 and (events[start - 1].request_id, events[start - 1].at) == (made.request_id, made.at):
        start -= 1
    while end < len(events) and (events[end].request_id, events[end].at) == (made.request_id, made.at):
        end += 1
    return start, end


def _before_request(events: list[Envelope], made: Envelope) -> list[Envelope]:
    """The stream's events before the append that wrote `made`."""
    return events[:batch_of(events, made)[0]]


def _deprecated_after(memory: Memory, events: list[object]) -> bool:
    return reduce(evolve, events, memory).deprecated


def view(item: Item) -> dict[str, Any]:
    """An item as the list shows it: what happened, when, both sides shortened, and the answers it takes."""
    def side(memory: Memory | None) -> dict[str, Any] | None:
        if memory is None:
            return None
        return {"id": memory.id, "content": shorten(memory.content, 300), "tags": list(memory.tags),
                "created_at": memory.created_at}

    return {"conflict": item.name, "kind": item.kind, "at": item.at, "reason": item.reason,
            "older": side(item.older), "newer": side(item.newer),
            **({"note": shorten(item.folded, 300)} if item.folded else {}),
            "answers": list(k.KEEPS)}
