"""REST routes for the team: identity, roster, capture defaults and, for admins, members and the activity feed."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import StrictBool, StrictStr

from .body import Body, json_body
from .context import Ctx
from .openapi import documented, errors, query
from .params import int_param

router = APIRouter(prefix="/team")


class DefaultBody(Body):
    default: StrictStr | None = None


class ProfileBody(Body):
    id: StrictStr | None = None
    name: StrictStr | None = None
    email: StrictStr | None = None
    role: StrictStr | None = None


class NewMemberBody(Body):
    name: StrictStr | None = None
    email: StrictStr | None = None
    role: StrictStr | None = None
    teams: list[StrictStr] | None = None  # company workspace ids to join; the primary team when absent


class NewTeamBody(Body):
    name: StrictStr | None = None
    members: list[StrictStr] | None = None


class MembershipBody(Body):
    id: StrictStr | None = None  # the company workspace
    member: StrictStr | None = None
    joined: StrictBool | None = None


class MemberBody(Body):
    id: StrictStr | None = None


class SuspendBody(Body):
    id: StrictStr | None = None
    suspended: StrictBool | None = None


class MemberDefaultBody(Body):
    id: StrictStr | None = None
    default: StrictStr | None = None


class RenameBody(Body):
    id: StrictStr | None = None
    name: StrictStr | None = None


DefaultIn = Annotated[DefaultBody, Depends(json_body(DefaultBody))]
ProfileIn = Annotated[ProfileBody, Depends(json_body(ProfileBody))]
NewMemberIn = Annotated[NewMemberBody, Depends(json_body(NewMemberBody))]
MemberIn = Annotated[MemberBody, Depends(json_body(MemberBody))]
SuspendIn = Annotated[SuspendBody, Depends(json_body(SuspendBody))]
MemberDefaultIn = Annotated[MemberDefaultBody, Depends(json_body(MemberDefaultBody))]
RenameIn = Annotated[RenameBody, Depends(json_body(RenameBody))]
NewTeamIn = Annotated[NewTeamBody, Depends(json_body(NewTeamBody))]
MembershipIn = Annotated[MembershipBody, Depends(json_body(MembershipBody))]


def _team(request: Request) -> Any:
    return request.app.state.brain.team


@router.get("/me", responses=errors())
def me(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Who you are: profile, owner flag, your capture default, the team's, and the one that applies."""
    return _team(request).me(ctx)


@router.get("/roster", responses=errors())
def roster(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Team names with member names and roles (no emails, counts or suspensions)."""
    return _team(request).roster(ctx)


@router.get("/workspaces", responses=errors())
def workspaces(ctx: Ctx, request: Request) -> dict[str, Any]:
    """The company workspaces you belong to."""
    return _team(request).workspaces(ctx)


@router.post("/me/default-share", responses=errors(400, 409, 413), openapi_extra=documented(DefaultBody))
def own_default(ctx: Ctx, body: DefaultIn, request: Request) -> dict[str, Any]:
    """Where your captures land when they name no workspace: personal, company or inherit (the team's)."""
    return _team(request).set_own_default(ctx, body.default)


@router.post("/profile", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(ProfileBody))
def profile(ctx: Ctx, body: ProfileIn, request: Request) -> dict[str, Any]:
    """Your name and email; an admin may name another member's `id`, and change a role."""
    return _team(request).update_profile(ctx, body.id, body.name, body.email, body.role)


@router.get("/members", responses=errors(403))
def members(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Admin: every member with email, role, suspension and default, and your own id."""
    return _team(request).members(ctx)


@router.post("/members", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(NewMemberBody))
def add_member(ctx: Ctx, body: NewMemberIn, request: Request) -> dict[str, Any]:
    """Admin: add a member; the answer holds their token, shown this once (only its hash is kept)."""
    return _team(request).add_member(ctx, body.name, body.email, body.role, body.teams)


@router.post("/members/token", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(MemberBody))
def rotate(ctx: Ctx, body: MemberIn, request: Request) -> dict[str, Any]:
    """Admin: replace a member's token; the new one is shown this once, the old one stops working."""
    return _team(request).rotate_token(ctx, body.id)


@router.post("/members/suspend", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(SuspendBody))
def suspend(ctx: Ctx, body: SuspendIn, request: Request) -> dict[str, Any]:
    """Admin: suspend a member (their token answers 401 `suspended`) or restore them; no data is touched."""
    return _team(request).suspend(ctx, body.id, body.suspended)


@router.post("/members/default-share", responses=errors(400, 403, 404, 409, 413),
             openapi_extra=documented(MemberDefaultBody))
def member_default(ctx: Ctx, body: MemberDefaultIn, request: Request) -> dict[str, Any]:
    """Admin: set a member's capture default (personal, company or inherit)."""
    return _team(request).set_member_default(ctx, body.id, body.default)


@router.post("/members/remove", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(MemberBody))
def remove(ctx: Ctx, body: MemberIn, request: Request) -> dict[str, Any]:
    """Admin: remove a member and erase their personal workspace; their company memories stay, attributed."""
    return _team(request).remove(ctx, body.id)


@router.post("/workspaces/rename", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(RenameBody))
def rename(ctx: Ctx, body: RenameIn, request: Request) -> dict[str, Any]:
    """Admin: rename a company workspace (the primary team's when no `id`)."""
    return _team(request).rename_workspace(ctx, body.name, body.id)


@router.post("/workspaces", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(NewTeamBody))
def create_team(ctx: Ctx, body: NewTeamIn, request: Request) -> dict[str, Any]:
    """Admin: another company workspace on this brain (a team), with the members named; the owner is in all."""
    return _team(request).create_team(ctx, body.name, body.members)


@router.post("/workspaces/members", responses=errors(400, 403, 404, 409, 413),
             openapi_extra=documented(MembershipBody))
def membership(ctx: Ctx, body: MembershipIn, request: Request) -> dict[str, Any]:
    """Admin: add a member to a company workspace (`joined: true`) or take them out (`false`)."""
    return _team(request).set_membership(ctx, body.id, body.member, body.joined)


@router.get("/activity", responses=errors(400, 403), openapi_extra=documented(
    None, query("limit", "Items per page, clamped to 1-100", "integer", minimum=1, maximum=100, default=50),
    query("offset", "Items to skip, newest first", "integer", minimum=0, default=0)))
def activity(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Admin: the audit feed, newest first: administrative acts, shares and un-shares, by name."""
    params = request.query_params
    return _team(request).activity(ctx, int_param(params, "limit", 50), int_param(params, "offset", 0))
