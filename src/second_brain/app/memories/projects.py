"""Projects: the registry commands, and turning a slug into the tags a filter matches."""

from collections.abc import Sequence
from functools import reduce
from typing import Any, Protocol

from ...domain import projects as p
from ...domain import text
from ...domain.capture import Change
from ...domain.errors import InvalidInput, UnknownProject
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.read_model import Filters, ProjectReads, ProjectRow, StatsReads
from ..handling import Context, envelopes, retrying

KNOWN_SHOWN = 10


class ProjectCatalogue(ProjectReads, StatsReads, Protocol):
    """What the project service reads: the registry, and how many memories carry a project's tag."""


class ProjectService:
    def __init__(self, store: EventStore, read_model: ProjectCatalogue, clock: Clock) -> None:
        self.store = store
        self.read_model = read_model
        self.clock = clock

    def create(self, ctx: Context, name: str, slug: str | None = None, description: str = "",
               aliases: list[str] | None = None, workspace: str | None = None) -> dict[str, Any]:
        slug = p.check_slug(slug.strip() if slug else p.slugify(name))
        workspace = workspace or ctx.identity.personal_workspace
        self._decide(ctx, workspace, slug, lambda state: p.decide_create(state, name, description, aliases or []))
        return self.view(ctx, self._row(ctx, slug, (workspace,)))

    def update(self, ctx: Context, slug: str, name: str | None = None, description: str | None = None,
               aliases: list[str] | None = None, status: str | None = None,
               scope: tuple[str, ...] | None = None) -> dict[str, Any]:
        row = self._row(ctx, slug, scope)
        self._decide(ctx, row.workspace, row.slug,
                     lambda state: p.decide_update(state, name, description, aliases, status))
        return self.view(ctx, self._row(ctx, slug, (row.workspace,)))

    def delete(self, ctx: Context, slug: str, scope: tuple[str, ...] | None = None) -> None:
        row = self._row(ctx, slug, scope)
        self._decide(ctx, row.workspace, row.slug, p.decide_delete)

    def erase_workspace(self, ctx: Context, workspace: str) -> int:
        """Erase every project of a workspace, history and all (a removed member's personal projects)."""
        rows = self.read_model.projects((workspace,), True)
        for row in rows:
            self._decide(ctx, workspace, row.slug, lambda state: [p.ProjectErased()] if state.version else [])
        return len(rows)

    def creations(self, ctx: Context, slugs: Sequence[str], workspace: str | None = None) -> list[Change]:
        """What creates the projects a capture names that do not exist yet (in the capture's workspace), to append
        with the capture."""
        workspace = workspace or ctx.identity.personal_workspace
        known = {r.slug for r in self.read_model.projects(ctx.identity.readable)}
        changes = []
        for slug in dict.fromkeys(slugs):
            state = self._state(workspace, slug)
            if slug not in known and not state.exists:
                changes.append(Change(p.project_stream(workspace, slug), state.version, workspace,
                                      tuple(p.decide_create(state, slug, "", []))))
        return changes

    def tags_for(self, ctx: Context, slug: str) -> tuple[str, ...]:
        """What a project filter matches: its project:<slug> tag and its aliases."""
        row = self._row(ctx, slug)
        return (f"project:{row.slug}", *row.aliases)

    def list(self, ctx: Context, workspaces: tuple[str, ...], include_archived: bool, counts: bool
             ) -> list[dict[str, Any]]:
        rows = self.read_model.projects(workspaces, include_archived)
        views = [self.view(ctx, row) for row in rows]
        if counts:  # what the project's list of memories lists: its tag and its aliases, as the filter reads them
            for view, row in zip(views, rows, strict=True):
                view["count"] = self.read_model.count_matching(
                    Filters((row.workspace,), any_tags=(f"project:{row.slug}", *row.aliases)))
        return views

    def view(self, ctx: Context, row: ProjectRow) -> dict[str, Any]:
        return {
            "id": row.slug, "name": row.name, "description": row.description, "aliases": list(row.aliases),
            "status": row.status, "workspace_id": row.workspace, "layer": ctx.identity.layer(row.workspace),
            "created_at": row.created_at, "updated_at": row.updated_at,
        }

    def row(self, ctx: Context, slug: str) -> ProjectRow:
        """The readable project a slug names; unknown: 404 with `known_projects`."""
        return self._row(ctx, slug)

    def _row(self, ctx: Context, slug: str, scope: tuple[str, ...] | None = None) -> ProjectRow:
        """The project a slug names among the readable ones (within `scope`, when the caller narrowed it)."""
        rows = self.read_model.projects(ctx.identity.readable if scope is None else scope)
        found = [r for r in rows if r.slug == slug.strip()]
        if not found:
            known = [r.slug for r in rows if r.status == "active"][:KNOWN_SHOWN]
            raise UnknownProject(f'unknown project "{text.shorten(slug.strip())}"', known_projects=known)
        if len(found) > 1:
            raise InvalidInput(f'project "{slug}" exists in more than one workspace: say which with workspace')
        return found[0]

    def _decide(self, ctx: Context, workspace: str, slug: str, decide: Any) -> None:
        stream = p.project_stream(workspace, slug)

        def attempt() -> None:
            state = self._state(workspace, slug)
            batch = envelopes(ctx, stream, state.version, decide(state), workspace, self.clock.now_ms())
            if batch:
                self.store.append(batch)

        retrying(attempt)

    def _state(self, workspace: str, slug: str) -> p.Project:
        history = (e.event for e in self.store.read_stream(p.project_stream(workspace, slug)))
        return reduce(p.evolve_project, history, p.Project(slug, workspace))
