"""A stream's whole history folded into the row a read model shows: for projections that rebuild a document
from the log each time (OpenSearch on AWS), which makes redelivered or repeated batches harmless."""

from ..domain.events import (
    Envelope,
)
from ..domain.links import LinkCreated, LinkRemoved
from ..domain.projects import (
    ProjectCreated,
    ProjectDeleted,
    ProjectImported,
    ProjectUpdated,
)
from ..ports.read_model import EdgeRow, ProjectRow


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
