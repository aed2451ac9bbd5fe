"""Typed relationship edges between memories, one stream per edge, as pure decide/evolve."""

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import ClassVar

from . import text
from .envelope import Envelope, stored
from .errors import InvalidInput
from .shown import shows

LABELS = {
    "relates_to": "Related to",
    "supersedes": "Supersedes",
    "caused_by": "Caused by",
    "decided": "Decided",
    "about_person": "About person",
    "part_of_project": "Part of project",
    "follows": "Follows",
}
# Made by the brain only: a pattern (or a digest) points at the memories it was drawn from. /link refuses it.
INTERNAL = {"drawn_from": "Drawn from"}
UNDIRECTED = frozenset({"relates_to"})
# Each relation as a sentence says it, source first: "A supersedes B", "A was caused by B".
VERBS = {"relates_to": "is related to", "supersedes": "supersedes", "caused_by": "was caused by",
         "decided": "decided", "about_person": "is about", "part_of_project": "is part of", "follows": "follows",
         "drawn_from": "was drawn from"}
EPISODIC_ONLY = frozenset({"decided", "follows"})
PROVENANCES = ("explicit", "inferred", "system")


@stored
@dataclass(frozen=True)
class LinkCreated:
    source_id: str
    target_id: str
    type: str
    weight: float
    provenance: str
    created_at: int | None = None  # set by an import, to keep the time the edge was first made
    SCHEMA: ClassVar[int] = 1


shows(LinkCreated, line=lambda e, other: f"{e.source_id} {e.type} {e.target_id} ({e.provenance}, weight {e.weight:g})")


@stored
@dataclass(frozen=True)
class LinkRemoved:
    source_id: str
    target_id: str
    type: str
    SCHEMA: ClassVar[int] = 1


shows(LinkRemoved, line=lambda e, other: f"{e.source_id} {e.type} {e.target_id} removed")


@dataclass(frozen=True)
class Edge:
    source_id: str
    target_id: str
    type: str
    exists: bool = False
    weight: float = 0.0
    provenance: str = ""
    version: int = 0
    workspace: str = ""
    created_at: int = 0  # when the edge was first made (kept by later re-links)
    updated_at: int = 0


def check_type(link_type: str) -> str:
    if link_type not in LABELS:
        raise InvalidInput(f"Unknown link type: {text.shorten(link_type)}. Use one of: {', '.join(LABELS)}")
    return link_type


def label(link_type: str) -> str:
    return LABELS.get(link_type) or INTERNAL.get(link_type, link_type)


def endpoints(source_id: str, target_id: str, link_type: str, internal: bool = False) -> tuple[str, str]:
    """The stored direction: undirected pairs in canonical (sorted) order; `internal` admits the brain's own
    types (the system, a restored backup)."""
    source_id, target_id = source_id.strip(), target_id.strip()
    if not source_id or not target_id:
        raise InvalidInput("Missing or empty source_id or target_id")
    if source_id == target_id:
        raise InvalidInput("Cannot link an entry to itself")
    if not (internal and link_type in INTERNAL):
        check_type(link_type)
    if link_type in UNDIRECTED and target_id < source_id:
        return target_id, source_id
    return source_id, target_id


def edge_stream(source_id: str, target_id: str, link_type: str) -> str:
    return f"link-{link_type}-{source_id}-{target_id}"


# How sure each origin of an edge is: a person's link, a link stated upstream (an integration's wikilink or reply),
# then the brain's guess by likeness.
PROVENANCE_RANK = {"explicit": 3, "system": 2, "inferred": 1}


def decide_link(edge: Edge, weight: float, provenance: str) -> list[object]:
    """Linking is idempotent: an existing edge keeps the stronger weight and the stronger provenance."""
    if not 0.0 <= weight <= 1.0:
        raise InvalidInput("weight must be between 0 and 1")
    if not edge.exists:
        return [LinkCreated(edge.source_id, edge.target_id, edge.type, weight, provenance)]
    stronger = PROVENANCE_RANK.get(provenance, 0) > PROVENANCE_RANK.get(edge.provenance, 0)
    kept = provenance if stronger else edge.provenance
    if edge.weight >= weight and kept == edge.provenance:
        return []
    return [LinkCreated(edge.source_id, edge.target_id, edge.type, max(weight, edge.weight), kept)]


def decide_unlink(edge: Edge) -> list[object]:
    return [LinkRemoved(edge.source_id, edge.target_id, edge.type)] if edge.exists else []


def evolve_edge(edge: Edge, event: object, envelope: Envelope | None = None) -> Edge:
    """The only place an edge's state is derived: the aggregate and every projection fold with it."""
    version = edge.version + 1
    at = envelope.at if envelope else edge.updated_at
    if isinstance(event, LinkCreated):
        created = edge.created_at if edge.exists else (event.created_at or at)
        return replace(edge, source_id=event.source_id, target_id=event.target_id, type=event.type, exists=True,
                       weight=event.weight, provenance=event.provenance, version=version, created_at=created,
                       updated_at=at, workspace=envelope.workspace if envelope else edge.workspace)
    if isinstance(event, LinkRemoved):
        return replace(edge, exists=False, weight=0.0, provenance="", version=version)
    raise TypeError(f"unknown event {event!r}")


def fold_edge(envelopes: Iterable[Envelope], edge: Edge) -> Edge:
    for envelope in envelopes:
        edge = evolve_edge(edge, envelope.event, envelope)
    return edge
