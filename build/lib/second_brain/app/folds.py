"""A stream's whole history folded into the row a read model shows: for projections that rebuild a document
from the log each time (OpenSearch on AWS), which makes redelivered or repeated batches harmless."""

from ..domain import text
from ..domain.events import (
    ContradictionLost,
    ContradictionWon,
    Envelope,
    Erased,
    MemoryAppended,
    MemoryCaptured,
    MemoryClassified,
    MemoryForgotten,
    MemoryImported,
    MemoryRecalled,
    MemoryRevised,
    StatusChanged,
    TagsChanged,
    TimeAnchorCleared,
    TimeAnchorSet,
)
from ..domain.links import LinkCreated, LinkRemoved
from ..domain.memory import appended, classified_tags
from ..domain.projects import (
    ProjectCreated,
    ProjectDeleted,
    ProjectImported,
    ProjectUpdated,
)
from ..ports.read_model import EdgeRow, EntryRow, ProjectRow


def fold_entry(envelopes: list[Envelope]) -> tuple[EntryRow, int, int] | None:
    """The entry a memory stream shows, its content version and the position of its first event;
    None if it was never written or has been forgotten."""
    row: EntryRow | None = None
    content_version = 0
    first_position = 0
    fields: dict = {}
    for envelope in envelopes:
        event = envelope.event
        if isinstance(event, (MemoryCaptured, MemoryImported)):
            imported = isinstance(event, MemoryImported)
            fields = {
                "id": envelope.stream_id.removeprefix("memory-"), "content": event.content, "tags": event.tags,
                "source": event.source, "workspace": event.workspace, "actor": envelope.actor,
                "created_at": event.created_at if imported else envelope.at,  # type: ignore[union-attr]
                "updated_at": event.updated_at if imported else envelope.at,  # type: ignore[union-attr]
                "recall_count": event.recall_count if imported else 0,  # type: ignore[union-attr]
                "importance_score": event.importance_score if imported else 0,  # type: ignore[union-attr]
                "contradiction_wins": event.contradiction_wins if imported else 0,  # type: ignore[union-attr]
                "contradiction_losses": event.contradiction_losses if imported else 0,  # type: ignore[union-attr]
                "when_at": None, "when_kind": None,
            }
            first_position = envelope.position
        elif isinstance(event, MemoryForgotten):
            return None
        elif not fields or isinstance(event, Erased):
            continue
        elif isinstance(event, (MemoryAppended, MemoryRevised)):
            content = appended(fields["content"], event) if isinstance(event, MemoryAppended) else event.content
            fields |= {"content": content, "updated_at": envelope.at}
            content_version += 1
        elif isinstance(event, (TagsChanged, StatusChanged)):
            tags = event.tags if isinstance(event, TagsChanged) else tuple(
                text.with_prefixed(list(fields["tags"]), "status:", event.status))
            if "status:deprecated" in fields["tags"] and "status:deprecated" not in tags:
                content_version += 1  # back from deprecation: its vectors are needed again
            fields |= {"tags": tuple(tags), "updated_at": envelope.at}
        elif isinstance(event, MemoryClassified):
            fields |= {"tags": classified_tags(tuple(fields["tags"]), event), "importance_score": event.importance}
        elif isinstance(event, ContradictionWon):
            fields["contradiction_wins"] += 1
        elif isinstance(event, ContradictionLost):
            fields["contradiction_losses"] += 1
        elif isinstance(event, MemoryRecalled):
            fields["recall_count"] += 1
        elif isinstance(event, TimeAnchorSet):
            fields |= {"when_at": event.when_at, "when_kind": event.when_kind}
        elif isinstance(event, TimeAnchorCleared):
            fields["when_at"] = None
    if fields:
        row = EntryRow(**fields)
    return (row, content_version, first_position) if row else None


def fold_edge(envelopes: list[Envelope]) -> tuple[EdgeRow, str] | None:
    """The edge an edge stream shows, with its workspace; None if it was removed."""
    edge: EdgeRow | None = None
    workspace = ""
    for envelope in envelopes:
        event = envelope.event
        if isinstance(event, LinkCreated):
            created = edge.created_at if edge else (event.created_at or envelope.at)
            edge = EdgeRow(event.source_id, event.target_id, event.type, event.weight, event.provenance, created)
            workspace = envelope.workspace
        elif isinstance(event, LinkRemoved):
            edge = None
    return (edge, workspace) if edge else None


def fold_project(envelopes: list[Envelope]) -> ProjectRow | None:
    """The project a project stream shows; None if it was deleted."""
    project: ProjectRow | None = None
    for envelope in envelopes:
        event = envelope.event
        if isinstance(event, ProjectCreated):
            project = ProjectRow(event.slug, envelope.workspace, event.name, event.description, event.aliases,
                                 "active", envelope.at, None)
        elif isinstance(event, ProjectImported):
            project = ProjectRow(event.slug, envelope.workspace, event.name, event.description, event.aliases,
                                 event.status, event.created_at, event.updated_at)
        elif isinstance(event, ProjectUpdated) and project:
            project = ProjectRow(project.slug, project.workspace, event.name, event.description, event.aliases,
                                 event.status, project.created_at, envelope.at)
        elif isinstance(event, ProjectDeleted):
            project = None
    return project
