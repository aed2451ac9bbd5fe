"""GET /graph: the memories and links a dashboard draws, centred on one memory or on the best-connected ones,
within the caller's (narrowed) workspaces. Every edge's ends are nodes, and both they and the edge itself lie
in those workspaces, so the walk never crosses into a layer the caller cannot read."""

import math
from collections import Counter
from typing import Any, Protocol

from ...domain.brief import HIDDEN
from ...domain.errors import InvalidInput, NotFound
from ...domain.identity import Identity
from ...domain.text import shorten
from ...ports.read_model import EdgeRow, EntryReads, EntryRow, Filters, GraphViewReads
from ..handling import Context
from ..memories.views import actor_name

DEFAULT_LIMIT, MAX_LIMIT = 100, 500
MAX_DEPTH = 3  # levels of neighbours walked from the starting memories (recall's own hop limit)
FAN_OUT = 8  # links read per memory of a level, strongest first (as recall's hops and /connections)
START_SHARE = 5  # without a seed, a fifth of the nodes (the best connected) start the walk
LABEL_CHARS = 80


class GraphSources(GraphViewReads, EntryReads, Protocol):
    """What the graph reads."""


class GraphView:
    def __init__(self, read_model: GraphSources) -> None:
        self.read_model = read_model

    def graph(self, ctx: Context, filters: Filters, seed: str | None, limit: int) -> dict[str, Any]:
        """At most `limit` nodes; `filters` gives the workspaces, and the project the starting memories are in."""
        candidates = [] if seed else self.read_model.hubs(filters, limit)
        start = [self._seed(filters, seed)] if seed else candidates[: math.ceil(limit / START_SHARE)]
        nodes = {row.id: row for row in start}
        frontier = list(nodes)
        for _ in range(MAX_DEPTH):
            if not frontier or len(nodes) >= limit:
                break
            found = self.read_model.linked(frontier, filters.workspaces, FAN_OUT * len(frontier))
            frontier = []
            for _, row in found:
                if row.id not in nodes and len(nodes) < limit:
                    nodes[row.id] = row
                    frontier.append(row.id)
        for row in candidates:  # room left: the next best-connected (then newest) memories
            if len(nodes) >= limit:
                break
            nodes.setdefault(row.id, row)
        edges = self.read_model.edges_among(list(nodes), filters.workspaces)
        degree = Counter(end for edge in edges for end in (edge.source_id, edge.target_id))
        return {"ok": True, "seed": seed,
                "nodes": [node_view(row, ctx.identity, degree[row.id]) for row in nodes.values()],
                "edges": [edge_view(edge) for edge in edges]}

    def _seed(self, filters: Filters, seed: str) -> EntryRow:
        """The seed must be readable in the chosen workspaces and, with a project, one of its memories."""
        row = self.read_model.get(seed, filters.workspaces)
        if row is None or (filters.any_tags and not set(row.tags) & set(filters.any_tags)):
            raise NotFound(f"No entry found with ID: {shorten(seed)}")
        if any(tag in HIDDEN for tag in row.tags):
            raise InvalidInput("seed is not drawn in the graph: it is deprecated, a pattern awaiting confirmation"
                               " or a digest")
        return row


def node_view(row: EntryRow, identity: Identity, degree: int) -> dict[str, Any]:
    """A memory as a node: a one-line label, its layer, and its author's name in the company layer."""
    layer = identity.layer(row.workspace)
    return {
        "id": row.id, "label": shorten(" ".join(row.content.split()), LABEL_CHARS), "tags": list(row.tags),
        "source": row.source, "workspace": layer,
        "actor_name": actor_name(identity, row.actor) if layer == "company" else None,
        "created_at": row.created_at, "importance_score": row.importance_score,
        "degree": degree,  # links drawn: edges of this answer at this node
    }


def edge_view(edge: EdgeRow) -> dict[str, Any]:
    return {"source_id": edge.source_id, "target_id": edge.target_id, "type": edge.type, "weight": edge.weight,
            "provenance": edge.provenance, "created_at": edge.created_at}
