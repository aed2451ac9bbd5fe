"""Time travel: what the brain would have answered at a past moment, from the log.

A stream "as of" T is its events up to the first one stored after T, folded with the domain's own folds
(`memory.fold`, `links.fold_edge`, `projects.fold_project`), so a past answer is written from the same state a
projection would have written then. /entry and /export fold the streams they show; /list, /connections and
/recall read the live projections corrected by the streams changed since (app/past/recall.py), so their cost
follows what changed after the moment, not the size of the brain. Forgotten memories were erased from the log
(`Erased` folds into nothing), so they never come back. The operations (app/operations/) call the functions at the
end of this module when they are given an `as_of`.

Scope: the caller's readable workspaces NOW, applied to the memory both as it was and as it is. A memory shows
only if it is readable today (another member's private memory, or one taken back into their personal layer
since, stays invisible with its history) and was in a workspace the caller can read today at that moment (a
memory shared with the company yesterday does not reveal what it said while it was still someone's own).
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from ...domain import links
from ...domain.errors import InvalidInput, NotFound
from ...domain.events import Envelope, memory_of, memory_stream
from ...domain.memory import Memory, evolve, fold
from ...domain.projects import Project, evolve_project
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.read_model import EdgeRow, EntryReads, EntryRow, Filters
from ...ports.vector_index import VectorIndex
from ..brain import Brain
from ..graph.links import MAX_CONNECTIONS, connection_view
from ..handling import Context
from ..inputs import clamp, filters, identifier, moment_of, recall_request
from ..memories.views import entry_view, full_entry_view, referenced_ids
from ..recall.chat import insight as synthesise
from ..recall.pipeline import RecallReads
from ..transfer import FORMAT_VERSION, edge_export, entry_export, project_export
from . import revisions
from .recall import Past, PastReads, past_recall, until, visible

ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")  # SQLite's NOCASE


@dataclass
class _Stream:
    """One stream met on a walk through the log: its state then, and (for memories) now."""

    then: Any
    now: Any = None
    cut: bool = False  # an event stored after the moment was met: the rest is not part of "then"


def _step(stream: _Stream, envelope: Envelope, at: int, evolve_state: Callable[..., Any]) -> None:
    if stream.now is not None:
        stream.now = evolve_state(stream.now, envelope.event, envelope)
    stream.cut = stream.cut or envelope.at > at
    if not stream.cut:
        stream.then = evolve_state(stream.then, envelope.event, envelope)


class PastModel(RecallReads, EntryReads, Protocol):
    """What the past reads of the read model: recall's reads and the newest entries."""


class TimeTravel:
    def __init__(self, store: EventStore, read_model: PastModel, vectors: VectorIndex, clock: Clock) -> None:
        self.store = store
        self.read_model = read_model
        self.vectors = vectors
        self.clock = clock

    def entry(self, ctx: Context, entry_id: str, at: int) -> dict[str, Any]:
        """/entry as it would have answered at `at`: the timeline stops there too."""
        entry_id = entry_id.strip()
        found = self._memory(ctx.identity.readable, entry_id, at)
        if found is None:
            raise NotFound(f"No entry found with ID: {entry_id}")
        memory, events = found
        row = replace(EntryRow.of(memory), indexed=self.vectors.is_indexed(entry_id))  # the vectors as they are
        unreadable = {other for other in referenced_ids(events)
                      if self._memory(ctx.identity.readable, other, at) is None}
        return full_entry_view(row, ctx.identity, events, unreadable)

    def recent(self, ctx: Context, filters: Filters, limit: int, at: int) -> list[dict[str, Any]]:
        """/list as of `at`: the live list of memories begun by the cut, without those changed since, merged with
        those as they were (see app/past/recall.py), newest first by creation as live (ties by log position)."""
        past = Past.of(self.store, None, "", ctx.identity.readable, at)
        live = [past.row(row) for row in self.read_model.recent(past.scope(filters), limit + past.begun_changed)
                if row.id not in past.changed]
        order = self.read_model.written([row.id for row in live])
        order.update({key: (row.created_at, past.positions[key]) for key, row in past.rows.items()})
        rows = live + [row for row in past.rows.values() if past.admits(row, filters, recall=False)]
        rows.sort(key=lambda row: order[row.id], reverse=True)
        return [entry_view(row, ctx.identity) for row in rows[:limit]]

    def connections(self, ctx: Context, entry_id: str, link_type: str | None, at: int) -> list[dict[str, Any]]:
        """/connections as of `at`: the live edges corrected by those changed since (see app/past/recall.py), so the
        cost follows what changed after the moment, not how many edges the brain has."""
        entry_id = entry_id.strip()
        readable = ctx.identity.readable
        if self._memory(readable, entry_id, at) is None:
            raise NotFound(f"No entry found with ID: {entry_id}")
        if link_type:
            links.check_type(link_type)
        reads = PastReads(self.read_model, Past.of(self.store, None, "", readable, at))
        # Deprecated neighbours are left out, except the ones a memory superseded, as live.
        found = reads.connections(entry_id, readable, link_type, MAX_CONNECTIONS, superseded=True)
        return [connection_view(c, ctx.identity) for c in found]

    def export(self, ctx: Context, at: int) -> dict[str, Any]:
        """GET /export as of `at`: every readable memory, edge and project as they were, in one walk of the log."""
        readable = ctx.identity.readable
        memories: dict[str, _Stream] = {}
        edges: dict[str, _Stream] = {}
        projects: dict[str, _Stream] = {}
        for envelope in self._log():
            stream_id = envelope.stream_id
            if (memory_id := memory_of(stream_id)) is not None:
                memory = Memory(memory_id)
                _step(memories.setdefault(stream_id, _Stream(memory, memory)), envelope, at, evolve)
            elif stream_id.startswith("link-"):
                first = envelope.event
                edge = links.Edge(first.source_id, first.target_id, first.type)
                _step(edges.setdefault(stream_id, _Stream(edge)), envelope, at, links.evolve_edge)
            elif stream_id.startswith("project-"):
                project = Project(stream_id.removeprefix(f"project-{envelope.workspace}-"), envelope.workspace)
                _step(projects.setdefault(stream_id, _Stream(project)), envelope, at, evolve_project)
        shown = {s.then.id: s.then for s in memories.values() if visible(s.then, s.now, readable)}
        entries = sorted(shown.values(), key=lambda m: (m.created_at, m.position))
        kept = sorted((s.then for s in edges.values()
                       if s.then.exists and s.then.source_id in shown and s.then.target_id in shown),
                      key=lambda e: (e.created_at, e.source_id, e.target_id, e.type))
        named = sorted((s.then for s in projects.values() if s.then.exists and s.then.workspace in readable),
                       key=lambda p: (p.name.translate(ASCII_LOWER), p.slug))
        return {
            "ok": True, "exported_at": self.clock.now_ms(), "as_of": at, "version": FORMAT_VERSION,
            "entries": [entry_export(EntryRow.of(m)) for m in entries],
            "edges": [edge_export(EdgeRow(e.source_id, e.target_id, e.type, e.weight, e.provenance, e.created_at))
                      for e in kept],
            "projects": [project_export(p) for p in named],
        }

    def _log(self) -> Iterator[Envelope]:
        position = 0
        while batch := self.store.read_all(position, 1000):
            yield from batch
            position = batch[-1].position

    def _memory(self, readable: tuple[str, ...], memory_id: str, at: int) -> tuple[Memory, list[Envelope]] | None:
        """The memory as it was at `at` and its events until then, if the caller may see it (see the module)."""
        history = self.store.read_stream(memory_stream(memory_id))
        events = until(history, at)
        then = fold(events, Memory(memory_id))
        now = fold(history[len(events):], then)
        return (then, events) if visible(then, now, readable) else None


# -- the past answers of the operations (app/operations/) called with `as_of`, the moment as given --------------

def moment(brain: Brain, value: str | int | None) -> int:
    """`as_of` as Unix ms: ISO 8601 (offsetless: the brain's time zone) or Unix ms; a future moment is now."""
    try:
        at = moment_of(brain, "" if value is None else value, "as_of", ahead=False)
    except OverflowError:  # a date at the very edge of the calendar, moved past it by its offset
        raise InvalidInput("as_of must be a date between the years 1 and 9999") from None
    return min(at, brain.queries.clock.now_ms())


def travel(brain: Brain) -> TimeTravel:
    return TimeTravel(brain.store, brain.queries.read_model, brain.vectors, brain.queries.clock)


def entry(brain: Brain, ctx: Context, memory_id: str | None, as_of: str | int, diff: bool = False) -> dict[str, Any]:
    """One memory as it was (with `diff`, its revisions until then); reading the past is an audit, not a use:
    it is not counted as an open."""
    memory_id = identifier(memory_id)
    at = moment(brain, as_of)
    try:
        found = travel(brain).entry(ctx, memory_id, at)
    except NotFound:
        now = brain.queries.read_model.get(memory_id.strip(), ctx.identity.readable)
        if now is None or now.created_at <= at:
            raise  # never the caller's to read, or gone since: as an id never used
        zone = brain.memories.timezone
        said = [datetime.fromtimestamp(ms / 1000, zone).isoformat(timespec="seconds") for ms in (at, now.created_at)]
        raise NotFound(f"Memory {memory_id.strip()} did not exist yet at {said[0]}: it was saved at "
                       f"{said[1]}") from None
    if diff:
        shown = revisions.entry_revisions(brain.store, brain.queries.read_model, ctx, found["id"])
        found["revisions"] = [r for r in shown if r["at"] <= at]
    return found


def list_recent(brain: Brain, ctx: Context, n: int, as_of: str | int, *, most: int = 100,
                **filter_args: Any) -> list[dict[str, Any]]:
    at = moment(brain, as_of)
    return travel(brain).recent(ctx, filters(brain, ctx, **filter_args), clamp(n, 1, most), at)


def connections(brain: Brain, ctx: Context, memory_id: str | None, link_type: str | None,
                as_of: str | int) -> dict[str, Any]:
    memory_id = identifier(memory_id).strip()
    at = moment(brain, as_of)
    return {"ok": True, "id": memory_id, "connections": travel(brain).connections(ctx, memory_id, link_type, at)}


def recall(brain: Brain, ctx: Context, query: str | None, top_k: int = 5, *, as_of: str | int,
           hops: int | None = None, full: bool = False, insight: bool = False, **filter_args: Any) -> dict[str, Any]:
    """GET /recall as the brain would have answered at `as_of` (see app/past/recall.py); an audit, so not counted."""
    request = recall_request(brain, ctx, query, top_k, hops, full, **filter_args)
    at = moment(brain, as_of)
    live = brain.recall
    model_id = live.embedder.model_id if live.embedder is not None else ""
    # What the live service reads through: the brain's read model and vector index (None: it reads no vectors).
    reads, vectors = brain.queries.read_model, brain.vectors if live.vectors is not None else None
    past = Past.of(brain.store, vectors, model_id, ctx.identity.readable, at)
    response = past_recall(live, past, reads, vectors).recall(ctx, request)
    if insight:
        response["insight"] = synthesise(brain.llm, request.query, response["results"])
    return {**response, "as_of": at}


def export(brain: Brain, ctx: Context, as_of: str | int) -> dict[str, Any]:
    return travel(brain).export(ctx, moment(brain, as_of))

