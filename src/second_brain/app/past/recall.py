"""Recall as of a past moment: the live indexes, corrected by what changed since.

Every event up to the store's cut (`EventStore.cut`) was stored by the moment, so a memory whose events all lie
before the cut is now what it was then: the live indexes answer for it, limited to memories that began before the
cut (`Filters.born_by`). Only the streams touched after the cut need a second look (`EventStore.touches`, which
reads no event data):

- begun after the moment: left out, by their log position (`Filters.born_by` in the searches, `begun` elsewhere);
- since then only recalled or opened: the live row, with those counts taken back;
- anything else (edited, retagged, shared, deprecated, forgotten): folded from its stream to the moment, scored
  here on its text as it was: with its live vectors if the text is still the same, else with the vectors the
  brain computed for that text (the embedding cache is keyed by the text, so no passage is embedded again; a
  text never embedded is matched by its words only, as the brain matched it while it waited for its vectors);
- edges changed after the cut are folded to the moment the same way, and the live ones stand for the rest.

The recall pipeline itself is unchanged: it reads through `PastReads` and `PastVectors` with the moment as its
clock. The cost grows with what changed after the moment, not with the size of the brain. Term statistics (the
idf of each word) are today's: a word's weight can differ slightly from what it was.
"""

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ...domain import links, text
from ...domain.events import MEMORY_STREAM, Envelope, memory_of, memory_stream
from ...domain.memory import Memory, fold
from ...ports.event_store import EventStore, Touch
from ...ports.read_model import Connection, EntryRow, Filters, KeywordHit, TermStats
from ...ports.vector_index import VectorHit, VectorIndex
from ..memories.chunking import chunk_memory
from ..memories.indexing import text_hash
from ..recall.pipeline import RecallReads, RecallService, VectorSearch

SIGNALS = ("MemoryRecalled", "MemoryOpened")  # events that change a memory's counts, never what it says


def until(history: Iterable[Envelope], at: int) -> list[Envelope]:
    """A stream as it stood at `at`: its events up to the first one stored later."""
    kept = []
    for envelope in history:
        if envelope.at > at:
            break
        kept.append(envelope)
    return kept


def visible(then: Memory, now: Memory, readable: tuple[str, ...]) -> bool:
    """Whether a memory as it was may be shown: it existed, and both then and now it is in a workspace the caller
    can read today (see app/past/as_of.py)."""
    return then.exists and now.exists and then.workspace in readable and now.workspace in readable


@dataclass(frozen=True)
class PastClock:
    at: int

    def now_ms(self) -> int:
        return self.at


@dataclass
class Past:
    """What differs at `at` from the live indexes, for one caller's readable workspaces."""

    at: int
    cut: int
    hidden: set[str] = field(default_factory=set)  # memories begun by the cut that did not show then
    rows: dict[str, EntryRow] = field(default_factory=dict)  # memories changed since, as they were (readable)
    taken_back: dict[str, tuple[int, int]] = field(default_factory=dict)  # recalls and opens counted since
    edges: dict[tuple[str, str, str], links.Edge] = field(default_factory=dict)  # edges changed since, as they were
    later_edges: set[str] = field(default_factory=set)  # the streams of edges made after the moment
    positions: dict[str, int] = field(default_factory=dict)  # where each of `rows` began in the log
    same_text: set[str] = field(default_factory=set)  # rows whose text is still what it was: live vectors hold
    passages: dict[str, list[tuple[np.ndarray, bool]]] = field(default_factory=dict)  # cached vectors of `rows`

    changed: set[str] = field(default_factory=set)  # `hidden` and `rows`: what the live answers must leave out

    @property
    def begun_changed(self) -> int:
        """At most how many memories begun by the cut the live indexes show otherwise than they were."""
        return len(self.rows) + len(self.hidden)

    def begun(self, reads: "RecallReads", ids: Sequence[str]) -> set[str]:
        """Those of these ids the live indexes may answer for: memories begun by the cut, or changed since."""
        return {key for key, (_, position) in reads.written(ids).items() if position <= self.cut} | (
            self.rows.keys() & set(ids))

    @classmethod
    def of(cls, store: EventStore, vectors: VectorIndex | None, model_id: str, readable: tuple[str, ...],
           at: int) -> "Past":
        past = cls(at, store.cut(at))
        # Memories begun after the moment are left to the searches (`Filters.born_by`) and to `begun`: a look far
        # back would otherwise name most of the brain.
        for stream_id, events in _by_stream(store.touches(MEMORY_STREAM, past.cut, at)).items():
            memory_id = memory_of(stream_id)
            assert memory_id is not None, "touches(MEMORY_STREAM, ...) names memory streams only"
            later = next((n for n, t in enumerate(events) if t.at > at), len(events))
            since, begun_after = events[later:], events[0].version == 1
            if not since and not begun_after:
                continue  # every later event was stored by the moment: the live row is then's
            if not begun_after and all(t.type in SIGNALS for t in since):
                past.taken_back[memory_id] = (sum(t.type == "MemoryRecalled" for t in since),
                                              sum(t.type == "MemoryOpened" for t in since))
            else:  # changed since, or begun after the cut though by the moment: as it was
                past._fold(store, memory_id, readable)
        past.later_edges = set(store.begun_after("link-", past.cut, at))
        for stream_id in _by_stream(store.touches("link-", past.cut, at)):
            history = store.read_stream(stream_id)
            first = history[0].event
            if isinstance(first, links.LinkCreated):
                edge = links.fold_edge(until(history, at), links.Edge(first.source_id, first.target_id, first.type))
                past.edges[(edge.source_id, edge.target_id, edge.type)] = edge
        if vectors is not None:
            past._load_passages(vectors, model_id)
        past.changed = past.hidden | past.rows.keys()
        return past

    def _fold(self, store: EventStore, memory_id: str, readable: tuple[str, ...]) -> None:
        history = store.read_stream(memory_stream(memory_id))
        events = until(history, self.at)
        then = fold(events, Memory(memory_id))
        now = fold(history[len(events):], then)
        if visible(then, now, readable):
            self.rows[memory_id] = EntryRow.of(then)
            self.positions[memory_id] = then.position
            if now.content == then.content:
                self.same_text.add(memory_id)
        else:
            self.hidden.add(memory_id)

    def _load_passages(self, vectors: VectorIndex, model_id: str) -> None:
        chunks = {key: [(text_hash(c.text), c.is_update) for c in chunk_memory(row.content)]
                  for key, row in self.rows.items()}
        cached = vectors.cached(model_id, [h for found in chunks.values() for h, _ in found])
        for key, found in chunks.items():
            if all(h in cached for h, _ in found):  # a text partly embedded counts as not embedded yet
                self.passages[key] = [(cached[h], is_update) for h, is_update in found]

    # -- what the readers below share -------------------------------------------------------------------------

    def row(self, live: EntryRow) -> EntryRow:
        """A live row as it was: its recall and open counts without those counted since."""
        recalled, opened = self.taken_back.get(live.id, (0, 0))
        if not (recalled or opened):
            return live
        return replace(live, recall_count=max(0, live.recall_count - recalled),
                       use_count=max(0, live.use_count - opened))

    def admits(self, row: EntryRow, filters: Filters, recall: bool = True) -> bool:
        """A changed memory's row against a read's filters, as the live scope would test it (for `recall`, with
        the exclusions recall adds: deprecated memories and the brain's own insights)."""
        tags = set(row.tags)
        return (row.workspace in filters.workspaces
                and not (recall and tags.intersection(text.NEVER_RECALLED))
                and (filters.tag is None or filters.tag in tags)
                and (filters.kind is None or f"kind:{filters.kind}" in tags)
                and (not filters.any_tags or bool(tags.intersection(filters.any_tags)))
                and (filters.after is None or row.created_at >= filters.after)
                and (filters.before is None or row.created_at <= filters.before)
                and (filters.actor is None or row.actor == filters.actor))

    def edge_changed(self, one: str, other: str, link_type: str) -> bool:
        """Whether the edge between these memories (stored in either direction) is not as live shows it."""
        return any((source, target, link_type) in self.edges
                   or links.edge_stream(source, target, link_type) in self.later_edges
                   for source, target in ((one, other), (other, one)))

    def scope(self, filters: Filters) -> Filters:
        return replace(filters, born_by=self.cut)


class PastReads:
    """RecallReads at the moment: the live reads without what changed since, plus those memories as they were."""

    def __init__(self, live: RecallReads, past: Past) -> None:
        self.live = live
        self.past = past

    def term_stats(self, terms: Sequence[str], workspaces: Sequence[str]) -> TermStats:
        return self.live.term_stats(terms, workspaces)

    def spellings(self, words: Sequence[str], workspaces: Sequence[str]) -> dict[str, dict[str, int]]:
        """The words memories hold now: a slip is corrected to a word the brain knows today (a word only the
        past held goes uncorrected, and one only today holds finds nothing then: the answer says what it searched)."""
        return self.live.spellings(words, workspaces)

    def keyword_search(self, terms: Sequence[str], filters: Filters, limit: int, require_all: bool = False,
                       newest_first: bool = False) -> list[KeywordHit]:
        hits = self.live.keyword_search(terms, self.past.scope(filters), limit, require_all, newest_first)
        return self._kept(hits) + self._containing(terms, filters, require_all)

    def scan_search(self, terms: Sequence[str], filters: Filters, limit: int) -> list[KeywordHit]:
        return self._kept(self.live.scan_search(terms, self.past.scope(filters), limit)) + self._containing(
            terms, filters, False)

    def hydrate(self, ids: Sequence[str], filters: Filters) -> dict[str, EntryRow]:
        changed = self.past.changed
        live = self.live.hydrate([k for k in ids if k not in changed], self.past.scope(filters))
        found = {key: self.past.row(row) for key, row in live.items()}
        found.update({k: self.past.rows[k] for k in ids
                      if k in self.past.rows and self.past.admits(self.past.rows[k], filters)})
        return found

    def neighbours(self, entries: Sequence[EntryRow], reach: int, window_ms: int) -> dict[str, list[tuple[str, int]]]:
        """The memories written beside each entry as they stood: the live ones that have not changed since and
        the changed ones as they were, counted outward on each side in the order live neighbours are."""
        past = self.past
        live = self.live.neighbours(entries, reach + min(len(past.changed), 4 * reach), window_ms)
        kept = {key for near in live.values() for key, _ in near if key not in past.changed}
        order = self.live.written([*kept, *(e.id for e in entries if e.id not in past.rows)])
        kept = {key for key in kept if key in order and order[key][1] <= past.cut}  # begun by then
        order.update({key: (row.created_at, past.positions[key]) for key, row in past.rows.items()})
        found: dict[str, list[tuple[str, int]]] = {}
        for seed in entries:
            beside = {key for key, _ in live.get(seed.id, []) if key in kept}
            beside.update(row.id for row in past.rows.values()
                          if row.id != seed.id and row.workspace == seed.workspace and row.source == seed.source
                          and abs(row.created_at - seed.created_at) <= window_ms)
            mark = order.get(seed.id, (seed.created_at, 0))
            near: list[tuple[str, int]] = []
            for earlier in (True, False):
                side = sorted((k for k in beside if k in order and (order[k] < mark) == earlier),
                              key=order.__getitem__, reverse=earlier)
                near += [(key, step) for step, key in enumerate(side[:reach], start=1)]
            found[seed.id] = near
        return found

    def connections(self, entry_id: str, workspaces: Sequence[str], link_type: str | None, limit: int,
                    superseded: bool = False, deprecated: bool = False) -> list[Connection]:
        """The live edges that have not changed since (to neighbours as they were), and the changed ones as they
        were; deprecation is judged on the neighbour as it was."""
        past = self.past
        found = []
        live = self.live.connections(entry_id, workspaces, link_type, 4 * limit + len(past.edges), superseded,
                                     deprecated=True)
        begun = past.begun(self.live, [c.entry.id for c in live])
        live = [c for c in live if c.entry.id in begun]
        unchanged = {c.entry.id: past.row(c.entry) for c in live if c.entry.id not in past.changed}
        for c in live:
            other = c.entry.id
            if other not in past.hidden and not past.edge_changed(entry_id, other, c.type):
                found.append(replace(c, entry=past.rows.get(other) or unchanged[other]))
        for edge in past.edges.values():
            if (not edge.exists or entry_id not in (edge.source_id, edge.target_id)
                    or link_type not in (None, edge.type)):
                continue
            other = edge.target_id if edge.source_id == entry_id else edge.source_id
            row = past.rows.get(other) or unchanged.get(other) or next(
                iter(self.hydrate([other], Filters(tuple(workspaces))).values()), None)  # an edge since removed
            if row is not None:
                found.append(Connection(row, edge.type, edge.weight, edge.provenance, edge.created_at,
                                        edge.source_id == entry_id))
        found = [c for c in found if c.entry.workspace in workspaces and (
            deprecated or text.DEPRECATED not in c.entry.tags or (superseded and c.type == "supersedes"))]
        found.sort(key=lambda c: (c.weight, c.linked_at), reverse=True)
        return found[:limit]

    def _kept(self, hits: list[KeywordHit]) -> list[KeywordHit]:
        changed = self.past.changed
        return [replace(h, entry=self.past.row(h.entry)) for h in hits if h.entry.id not in changed]

    def _containing(self, terms: Sequence[str], filters: Filters, require_all: bool) -> list[KeywordHit]:
        """The changed memories whose text then holds the terms (as the trigram index matches: anywhere, any case)."""
        wanted = [t.lower() for t in terms]
        test = all if require_all else any
        return [KeywordHit(row, 0.0) for row in self.past.rows.values()
                if self.past.admits(row, filters) and test(t in row.content.lower() for t in wanted)]


class PastVectors:
    """The vector reads recall makes, at the moment: live vectors for what has not changed, cached ones for what
    has, as its text was."""

    def __init__(self, live: VectorSearch, past: Past, reads: RecallReads) -> None:
        self.live = live
        self.past = past
        self.reads = reads

    def search(self, query: np.ndarray, filters: Filters, limit: int) -> list[VectorHit]:
        past = self.past
        hits = self.live.search(query, past.scope(filters), limit)
        begun = past.begun(self.reads, [h.entry_id for h in hits])  # passages stored before they had a position
        hits = [h for h in hits if h.entry_id in begun and h.entry_id not in past.changed]
        admitted = [key for key, row in past.rows.items() if past.admits(row, filters)]
        hits += self.scores_for(query, admitted).values()
        return sorted(hits, key=lambda h: -h.score)[:limit]

    def scores_for(self, query: np.ndarray, entry_ids: Sequence[str]) -> dict[str, VectorHit]:
        past = self.past
        live = [k for k in entry_ids if k not in past.changed or k in past.same_text]
        found = self.live.scores_for(query, live) if live else {}
        # A changed text, or one whose live vectors are gone (deprecated since): the vectors cached for it.
        found.update(self._scores(query, {k: past.passages[k] for k in entry_ids
                                          if k in past.passages and k not in found}))
        return found

    def vectors_of(self, entry_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The live vectors of the memories whose text is as it was, else those cached for the text it was."""
        past = self.past
        found = self.live.vectors_of([k for k in entry_ids if k not in past.changed or k in past.same_text])
        found.update({k: past.passages[k][0][0] for k in entry_ids if k not in found and k in past.passages})
        return found

    @staticmethod
    def _scores(query: np.ndarray, passages: dict[str, list[tuple[np.ndarray, bool]]]) -> dict[str, VectorHit]:
        found = {}
        for key, vectors in passages.items():
            scores = [float(np.dot(vector, query)) for vector, _ in vectors]
            best = int(np.argmax(scores))
            found[key] = VectorHit(key, scores[best], vectors[best][1])
        return found


def past_recall(live: RecallService, past: Past, reads: RecallReads, vectors: VectorSearch | None) -> RecallService:
    """The live recall service, reading the brain as it was at `past.at`, with that moment as now: through the
    live read model and vector index it reads (`reads`, `vectors`), corrected by what changed since."""
    service = copy.copy(live)
    service.read_model = PastReads(reads, past)
    service.vectors = PastVectors(vectors, past, reads) if vectors is not None else None
    service.clock = PastClock(past.at)
    return service


def _by_stream(touches: list[Touch]) -> dict[str, list[Touch]]:
    streams: dict[str, list[Touch]] = {}
    for touch in touches:
        streams.setdefault(touch.stream_id, []).append(touch)
    return streams

