"""Projects: the registry a capture, a recall and a graph can name by slug."""

from typing import Any

from ..brain import Brain
from ..handling import Context
from .inputs import capture_workspace, narrowed, required, workspaces_for


def list_projects(brain: Brain, ctx: Context, workspace: str | None = None, include_archived: bool = False,
                  counts: bool = False, team: str | None = None) -> dict[str, Any]:
    return {"projects": brain.projects.list(ctx, workspaces_for(ctx, workspace, team), include_archived, counts)}


def create_project(brain: Brain, ctx: Context, name: str | None, slug: str | None = None, description: str = "",
                   aliases: list[str] | None = None, workspace: str | None = None,
                   team: str | None = None) -> dict[str, Any]:
    target = capture_workspace(brain, ctx, workspace, team)
    project = brain.projects.create(ctx, required(name, "name"), slug, description, aliases or [], target)
    return {"ok": True, "project": project}


def update_project(brain: Brain, ctx: Context, slug: str, name: str | None = None, description: str | None = None,
                   aliases: list[str] | None = None, status: str | None = None, workspace: str | None = None,
                   team: str | None = None) -> dict[str, Any]:
    """Change a project; `workspace` and `team` say which, when one slug names projects in several."""
    project = brain.projects.update(ctx, slug, name, description, aliases, status,
                                    scope=narrowed(ctx, workspace, team))
    return {"ok": True, "project": project}


def delete_project(brain: Brain, ctx: Context, slug: str, workspace: str | None = None,
                   team: str | None = None) -> dict[str, Any]:
    """Delete a project (its memories keep their tags); `workspace` and `team` say which, as for an update."""
    brain.projects.delete(ctx, slug, scope=narrowed(ctx, workspace, team))
    return {"ok": True, "deleted": True}
