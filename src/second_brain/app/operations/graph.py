"""The graph: links between memories, a memory's neighbours (now or as they were), and the dashboard's graph."""

from typing import Any

from ...domain.errors import InvalidInput
from ..brain import Brain
from ..graph.view import DEFAULT_LIMIT as GRAPH_LIMIT
from ..graph.view import MAX_LIMIT as GRAPH_MAX_LIMIT
from ..handling import Context
from ..past import as_of as past
from .inputs import clamp, filters, identifier, required


def link(brain: Brain, ctx: Context, source_id: str | None, target_id: str | None,
         link_type: str | None = None) -> dict[str, Any]:
    source_id, target_id, link_type = brain.links.link(
        ctx, identifier(source_id, "source_id"), identifier(target_id, "target_id"), link_type or "relates_to")
    return {"ok": True, "source_id": source_id, "target_id": target_id, "type": link_type}


def unlink(brain: Brain, ctx: Context, source_id: str | None, target_id: str | None,
           link_type: str | None = None) -> dict[str, Any]:
    deleted = brain.links.unlink(ctx, required(source_id, "source_id"), required(target_id, "target_id"), link_type)
    return {"ok": True, "deleted": deleted}


def connections(brain: Brain, ctx: Context, memory_id: str | None, link_type: str | None = None,
                as_of: str | int | None = None) -> dict[str, Any]:
    """A memory's strongest neighbours and how they are related (with `as_of`: as they were then)."""
    if as_of is not None:
        return past.connections(brain, ctx, memory_id, link_type, as_of)
    memory_id = identifier(memory_id).strip()
    return {"ok": True, "id": memory_id, "connections": brain.links.connections(ctx, memory_id, link_type)}


def graph(brain: Brain, ctx: Context, seed: str | None = None, limit: int | None = None,
          workspace: str | None = None, team: str | None = None, project: str | None = None) -> dict[str, Any]:
    """Nodes and edges for a dashboard: around `seed`, else the best-connected memories (of `project`)."""
    if limit is not None and limit < 1:
        raise InvalidInput("limit must be at least 1")
    chosen = filters(brain, ctx, workspace=workspace, team=team, project=project)
    seed = identifier(seed, "seed").strip() if seed is not None else None
    return brain.graph.graph(ctx, chosen, seed, clamp(limit or GRAPH_LIMIT, 1, GRAPH_MAX_LIMIT))
