"""Linking memories: facts gathered from the read model, decisions from the pure edge functions."""

from functools import reduce
from typing import Any, Protocol

import numpy as np

from ...domain import links
from ...domain.errors import Forbidden, InvalidInput, NotFound
from ...domain.events import MemoryImported, memory_stream
from ...domain.identity import Identity
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.read_model import Connection, EntryReads, EntryRow, Filters, GraphReads
from ...ports.vector_index import PendingEntry, VectorIndex
from ..handling import Context, envelopes, retrying
from ..handling import system as system_context
from ..memories.views import entry_view

MAX_CONNECTIONS = 8
INFERRED_PER_MEMORY = 3


class LinkReads(EntryReads, GraphReads, Protocol):
    """What the graph service reads."""


class LinkService:
    def __init__(self, store: EventStore, read_model: LinkReads, clock: Clock, vectors: VectorIndex | None = None,
                 inferred_link_threshold: float = 0.75) -> None:
        self.store = store
        self.read_model = read_model
        self.clock = clock
        self.vectors = vectors
        # MiniLM: paraphrases score about 0.93, unrelated notes about 0.08; the reference used 0.78 with bge-small.
        self.inferred_link_threshold = inferred_link_threshold

    def link(self, ctx: Context, source_id: str, target_id: str, link_type: str = "relates_to",
             weight: float = 1.0, provenance: str = "explicit") -> tuple[str, str, str]:
        source_id, target_id = links.endpoints(source_id, target_id, link_type)
        source, target = self._entry(ctx, source_id), self._entry(ctx, target_id)
        if source.workspace != target.workspace:
            raise InvalidInput("Both memories must be in the same workspace: share both or keep both private",
                               code="cross_workspace_link")
        _may_change_either(ctx, source, target)
        if link_type in links.EPISODIC_ONLY and not all("kind:episodic" in e.tags for e in (source, target)):
            raise InvalidInput(f"{link_type} links need both memories classified episodic (kind:episodic)",
                               code="kind_not_allowed")
        decide = lambda edge: links.decide_link(edge, weight, provenance)  # noqa: E731
        self._append_decisions(ctx, [(source_id, target_id, link_type)], decide, source.workspace)
        return source_id, target_id, link_type

    def unlink(self, ctx: Context, a: str, b: str, link_type: str | None = None) -> int:
        """Remove the edges between two memories, in either direction; how many went."""
        a, b = a.strip(), b.strip()
        if not a or not b:
            raise InvalidInput("Missing or empty source_id or target_id")
        types = [links.check_type(link_type)] if link_type else list(links.LABELS)
        first, second = (self.read_model.get(x, ctx.identity.readable) for x in (a, b))
        if a == b or first is None or second is None:
            return 0  # nothing the caller can see is linked there
        _may_change_either(ctx, first, second)
        keys = {links.endpoints(x, y, t) + (t,) for t in types for x, y in ((a, b), (b, a))}
        return self._append_decisions(ctx, sorted(keys), links.decide_unlink, first.workspace)

    def infer(self, entry: PendingEntry, vector: np.ndarray) -> int:
        """Link a freshly indexed memory to its closest neighbours (relates_to, inferred, weight = cosine)."""
        if self.vectors is None:
            return 0
        first = self.store.read_stream(memory_stream(entry.id))[:1]
        if first and isinstance(first[0].event, MemoryImported):
            return 0  # a restored memory brings its own edges: inferring more would change the backup
        return self.link_neighbours(entry.id, entry.workspace, vector, f"infer-{entry.id}")

    def link_neighbours(self, entry_id: str, workspace: str, vector: np.ndarray, request_id: str) -> int:
        """Link a memory to its closest neighbours in its workspace, as the system; how many links it made."""
        if self.vectors is None:
            return 0
        system = system_context(workspace, request_id)
        hits = self.vectors.search(vector, Filters((workspace,)), INFERRED_PER_MEMORY + 1)
        near = [h for h in hits if h.entry_id != entry_id and h.score >= self.inferred_link_threshold]
        near = near[:INFERRED_PER_MEMORY]
        if not near:
            return 0
        # Both ends of every link read at once, and every link in one append (on AWS: one read of the index and
        # one transaction, not two reads and a transaction per link); a neighbour gone meanwhile is left out.
        rows = self.read_model.many([entry_id, *(h.entry_id for h in near)], (workspace,))
        weights = {links.endpoints(entry_id, h.entry_id, "relates_to") + ("relates_to",): round(min(h.score, 1.0), 4)
                   for h in near if entry_id in rows and h.entry_id in rows}
        if weights:
            self._append_decisions(system, sorted(weights), lambda edge: links.decide_link(
                edge, weights[(edge.source_id, edge.target_id, edge.type)], "inferred"), workspace)
        return len(weights)

    def connections(self, ctx: Context, entry_id: str, link_type: str | None) -> list[dict[str, Any]]:
        entry_id = entry_id.strip()
        self._entry(ctx, entry_id)
        if link_type:
            links.check_type(link_type)
        # Deprecated neighbours are left out, except the ones a memory superseded: that is the audit trail.
        found = self.read_model.connections(entry_id, ctx.identity.readable, link_type, MAX_CONNECTIONS,
                                            superseded=True)
        return [connection_view(c, ctx.identity) for c in found]

    def _entry(self, ctx: Context, entry_id: str) -> EntryRow:
        row = self.read_model.get(entry_id, ctx.identity.readable)
        if row is None:
            raise NotFound(f"No entry found with ID: {entry_id}")
        return row

    def append_decisions(self, ctx: Context, keys: list[tuple[str, str, str]], decide: Any, workspace: str) -> int:
        """Decide on each of these edges (source, target, type) and append the events in one batch (the system's
        own links: inferred neighbours, an integration's wikilinks); how many events that was."""
        return self._append_decisions(ctx, keys, decide, workspace)

    def _append_decisions(self, ctx: Context, keys: list[tuple[str, str, str]], decide: Any, workspace: str) -> int:
        """Decide on every edge and append all resulting events in one batch; how many events that was."""

        streams = [links.edge_stream(*key) for key in keys]

        def attempt() -> int:
            batch = []
            histories = self.store.read_streams(streams)  # on AWS one read for the edges not made yet
            for (source_id, target_id, link_type), stream in zip(keys, streams, strict=True):
                history = (e.event for e in histories[stream])
                edge = reduce(links.evolve_edge, history, links.Edge(source_id, target_id, link_type))
                batch += envelopes(ctx, stream, edge.version, decide(edge), workspace, self.clock.now_ms())
            if batch:
                self.store.append(batch)
            return len(batch)

        return retrying(attempt)


def _may_change_either(ctx: Context, a: EntryRow, b: EntryRow) -> None:
    """An edge is made or removed by someone who may change one of its two memories (on a company memory, its
    author or an admin): a member does not rewire the graph between other people's memories."""
    if not any(ctx.identity.can_edit(end.workspace, end.actor) for end in (a, b)):
        raise Forbidden("Only the author of one of the two memories, or an admin, may link or unlink them")


def connection_view(connection: Connection, identity: Identity) -> dict[str, Any]:
    """A neighbour as /connections lists it: the memory's summary and the edge that reaches it; ours beyond the
    reference, which way it goes (`direction`: "outgoing" from the memory asked about, "incoming" to it, or
    "both ways" for a relation without one) and a sentence saying it."""
    undirected = connection.type in links.UNDIRECTED
    direction = "both ways" if undirected else "outgoing" if connection.outgoing else "incoming"
    verb = links.VERBS.get(connection.type, connection.type.replace("_", " "))
    said = f"this memory {verb} it" if undirected or connection.outgoing else f"it {verb} this memory"
    return {**{k: v for k, v in entry_view(connection.entry, identity).items()
               if k in ("id", "content", "tags", "source", "created_at")},
            "type": connection.type, "label": links.label(connection.type), "weight": connection.weight,
            "provenance": connection.provenance, "linkedAt": connection.linked_at, "direction": direction,
            "relation": said}
