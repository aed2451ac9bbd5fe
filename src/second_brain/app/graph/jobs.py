"""The graph's nightly job."""

from ...domain import links, text
from ...ports.clock import Clock
from ...ports.event_store import EventStore, settled_pages
from ...ports.read_model import GraphReads
from ...ports.vector_index import VectorIndex
from ..maintenance.runner import NIGHTLY, Budget, JobResult
from ..maintenance.sweep import PAGE, first_events, load, system
from .links import LinkService

WEAK_BELOW = 0.3  # an inferred edge under this weight says little
WEAK_AGE_MS = 7 * 24 * 3600 * 1000  # ...and goes once it is a week old without being renewed
LINKS_PER_RUN = 25  # memories newly linked per run (the reference's figure)
LOOKS_PER_RUN = 1000  # memories looked at per run in search of unlinked ones
EVENTS_PER_RUN = 50_000  # log events read per run in search of weak edges
NOT_LINKED = (text.DEPRECATED, "auto-insight", "auto-pattern", "synthesized")


class GraphPass:
    """The graph pass: weak inferred edges that nothing has renewed for a week go, and memories left without any
    link (restored ones, ones indexed before their neighbours existed) are linked to their closest neighbours."""

    name = "graph"
    schedule = NIGHTLY

    def __init__(self, store: EventStore, clock: Clock, graph: GraphReads, vectors: VectorIndex | None,
                 service: LinkService) -> None:
        self.store = store
        self.clock = clock
        self.graph = graph
        self.vectors = vectors
        self.service = service

    def run(self, budget: Budget, cursor: str) -> JobResult:
        prune_from, link_from = (int(part or 0) for part in (cursor or ":").split(":"))
        result = JobResult()
        prune_at, pruned_all = self._prune(budget, prune_from, result)
        link_at, linked_all = self._link(budget, link_from, result) if self.vectors else (0, True)
        result.cursor = f"{0 if pruned_all else prune_at}:{0 if linked_all else link_at}"
        result.complete = pruned_all and linked_all
        return result

    def _prune(self, budget: Budget, position: int, result: JobResult) -> tuple[int, bool]:
        """Remove weak, old inferred edges found in the next slice of the log; where it stopped, and whether at
        the head."""
        read = 0
        for batch in settled_pages(self.store, position, PAGE):
            for envelope in batch:
                if _maybe_weak(envelope.event):
                    self._prune_edge(envelope.stream_id, result)
            position, read = batch[-1].position, read + len(batch)
            if len(batch) < PAGE:
                return position, True
            if budget.expired() or read >= EVENTS_PER_RUN:
                return position, False
        return position, True

    def _prune_edge(self, stream_id: str, result: JobResult) -> None:
        history = self.store.read_stream(stream_id)
        edge = links.fold_edge(history, links.Edge("", "", ""))
        now = self.clock.now_ms()
        if not (edge.exists and edge.provenance == "inferred" and edge.weight < WEAK_BELOW
                and edge.updated_at < now - WEAK_AGE_MS):
            return
        ctx = system(edge.workspace, self.name, now)
        if self.service.unlink(ctx, edge.source_id, edge.target_id, edge.type):
            result.add("pruned")

    def _link(self, budget: Budget, position: int, result: JobResult) -> tuple[int, bool]:
        for looked, first in enumerate(first_events(self.store, position)):
            if budget.expired() or looked >= LOOKS_PER_RUN or result.counts.get("linked", 0) >= LINKS_PER_RUN:
                return position, False
            self._link_memory(first.memory_id, result)
            position = first.position
        return position, True

    def _link_memory(self, memory_id: str, result: JobResult) -> None:
        memory = load(self.store, memory_id)
        if not memory.exists or any(tag in NOT_LINKED for tag in memory.tags):
            return
        if self.graph.connections(memory_id, (memory.workspace,), None, 1, superseded=True):
            return
        vector = self.vectors.vector_of(memory_id) if self.vectors else None
        if vector is None:  # not indexed yet: the indexer links it when it is
            return
        made = self.service.link_neighbours(memory_id, memory.workspace, vector, f"maintenance-graph-{memory_id}")
        result.add("linked" if made else "unlinkable")


def _maybe_weak(event: object) -> bool:
    return isinstance(event, links.LinkCreated) and event.provenance == "inferred" and event.weight < WEAK_BELOW
