"""The team: who the caller is, the roster, capture defaults, tokens and, for admins, members, teams and the
activity feed. Each is the team service's own rule (app/team/service.py); these are the ways in."""

from typing import Any

from ...domain.identity import Identity
from ..brain import Brain
from ..handling import Context


def owner_identity(brain: Brain) -> Identity:
    """The owner, as the team knows them now: the caller of a brain run on the owner's own machine (CLI, stdio)."""
    return brain.team.owner_identity()


def list_teams(brain: Brain, ctx: Context) -> dict[str, Any]:
    return {"ok": True, "teams": [{**team, "workspace_id": team["id"]} for team in brain.team.teams(ctx)]}


def me(brain: Brain, ctx: Context) -> dict[str, Any]:
    """Who the caller is: profile, owner flag, their capture default, the team's, and the one that applies."""
    return brain.team.me(ctx)


def roster(brain: Brain, ctx: Context) -> dict[str, Any]:
    return brain.team.roster(ctx)


def team_workspaces(brain: Brain, ctx: Context) -> dict[str, Any]:
    return brain.team.workspaces(ctx)


def set_own_default(brain: Brain, ctx: Context, default: str | None) -> dict[str, Any]:
    return brain.team.set_own_default(ctx, default)


def rotate_own_token(brain: Brain, ctx: Context) -> dict[str, Any]:
    return brain.team.rotate_own_token(ctx)


def update_profile(brain: Brain, ctx: Context, member_id: str | None, name: str | None = None,
                   email: str | None = None, role: str | None = None) -> dict[str, Any]:
    return brain.team.update_profile(ctx, member_id, name, email, role)


def members(brain: Brain, ctx: Context) -> dict[str, Any]:
    return brain.team.members(ctx)


def add_member(brain: Brain, ctx: Context, name: str | None, email: str | None = None, role: str | None = None,
               teams: list[str] | None = None) -> dict[str, Any]:
    return brain.team.add_member(ctx, name, email, role, teams)


def rotate_member_token(brain: Brain, ctx: Context, member_id: str | None) -> dict[str, Any]:
    return brain.team.rotate_token(ctx, member_id)


def suspend_member(brain: Brain, ctx: Context, member_id: str | None, suspended: bool | None) -> dict[str, Any]:
    return brain.team.suspend(ctx, member_id, suspended)


def set_member_default(brain: Brain, ctx: Context, member_id: str | None, default: str | None) -> dict[str, Any]:
    return brain.team.set_member_default(ctx, member_id, default)


def remove_member(brain: Brain, ctx: Context, member_id: str | None) -> dict[str, Any]:
    return brain.team.remove(ctx, member_id)


def rename_team(brain: Brain, ctx: Context, name: str | None, workspace_id: str | None = None) -> dict[str, Any]:
    return brain.team.rename_workspace(ctx, name, workspace_id)


def create_team(brain: Brain, ctx: Context, name: str | None, members: list[str] | None = None) -> dict[str, Any]:
    return brain.team.create_team(ctx, name, members)


def set_membership(brain: Brain, ctx: Context, workspace_id: str | None, member_id: str | None,
                   joined: bool | None) -> dict[str, Any]:
    return brain.team.set_membership(ctx, workspace_id, member_id, joined)


def team_activity(brain: Brain, ctx: Context, limit: int = 50, offset: int = 0) -> dict[str, Any]:
    return brain.team.activity(ctx, limit, offset)
