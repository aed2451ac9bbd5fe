"""REST routes for the team: identity, roster, capture defaults and, for admins, members and the activity feed."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import StrictBool, StrictStr

from ...app import operations as ops
from .body import Body, json_body
from .context import Ctx
from .openapi import documented, errors, link, linked, query, requiring
from .params import int_param
from .schemas import (
    COUNT_RANGE,
    EMAIL,
    MEMBER,
    MEMBER_ID,
    NAME,
    PERSON_ID,
    PERSON_NAME,
    ROLE,
    SHARE,
    TEAM_ID,
    optional,
    schema,
)

router = APIRouter(prefix="/team")
BOOLEAN = {"type": "boolean"}
NEW_MEMBER = "$response.body#/member/id"
NEW_TEAM = "$response.body#/workspace/id"


class DefaultBody(Body):
    model_config = requiring("default")
    default: Annotated[StrictStr | None, schema(SHARE)] = None


class ProfileBody(Body):
    id: Annotated[StrictStr | None, optional(MEMBER_ID)] = None  # absent: your own (the owner has none here)
    name: Annotated[StrictStr | None, optional(PERSON_NAME)] = None
    email: Annotated[StrictStr | None, optional(EMAIL)] = None
    role: Annotated[StrictStr | None, optional(ROLE)] = None


class NewMemberBody(Body):
    model_config = requiring("name")
    name: Annotated[StrictStr | None, schema(PERSON_NAME)] = None
    email: Annotated[StrictStr | None, optional(EMAIL)] = None
    role: Annotated[StrictStr | None, optional(ROLE)] = None  # absent: member
    # company workspace ids to join; the primary team when absent
    teams: Annotated[list[StrictStr] | None, optional({"type": "array", "items": TEAM_ID})] = None


class NewTeamBody(Body):
    model_config = requiring("name")
    name: Annotated[StrictStr | None, schema(NAME)] = None
    members: Annotated[list[StrictStr] | None, optional({"type": "array", "items": MEMBER_ID})] = None


class MembershipBody(Body):
    model_config = requiring("id", "member", "joined")
    id: Annotated[StrictStr | None, schema(TEAM_ID)] = None  # the company workspace
    member: Annotated[StrictStr | None, schema(MEMBER_ID)] = None
    joined: Annotated[StrictBool | None, schema(BOOLEAN)] = None


class MemberBody(Body):
    model_config = requiring("id")
    id: Annotated[StrictStr | None, schema(MEMBER_ID)] = None


class SuspendBody(Body):
    model_config = requiring("id", "suspended")
    id: Annotated[StrictStr | None, schema(MEMBER_ID)] = None
    suspended: Annotated[StrictBool | None, schema(BOOLEAN)] = None


class MemberDefaultBody(Body):
    # The owner's captures land where the owner says: never the organisation's default (`inherit`).
    model_config = requiring("id", "default", anyOf=[{"properties": {"id": {"pattern": f"^{MEMBER}$"}}},
                                                     {"properties": {"default": {"enum": ["personal", "company"]}}}])
    id: Annotated[StrictStr | None, schema(PERSON_ID)] = None
    default: Annotated[StrictStr | None, schema(SHARE)] = None


class RenameBody(Body):
    model_config = requiring("name")
    id: Annotated[StrictStr | None, optional(TEAM_ID)] = None  # absent: the primary team
    name: Annotated[StrictStr | None, schema(NAME)] = None


DefaultIn = Annotated[DefaultBody, Depends(json_body(DefaultBody))]
ProfileIn = Annotated[ProfileBody, Depends(json_body(ProfileBody))]
NewMemberIn = Annotated[NewMemberBody, Depends(json_body(NewMemberBody))]
MemberIn = Annotated[MemberBody, Depends(json_body(MemberBody))]
SuspendIn = Annotated[SuspendBody, Depends(json_body(SuspendBody))]
MemberDefaultIn = Annotated[MemberDefaultBody, Depends(json_body(MemberDefaultBody))]
RenameIn = Annotated[RenameBody, Depends(json_body(RenameBody))]
NewTeamIn = Annotated[NewTeamBody, Depends(json_body(NewTeamBody))]
MembershipIn = Annotated[MembershipBody, Depends(json_body(MembershipBody))]


@router.get("/me", responses=errors())
def me(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Who you are: profile, owner flag, your capture default, the team's, and the one that applies."""
    return ops.me(request.app.state.brain, ctx)


@router.get("/roster", responses=errors())
def roster(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Team names with member names and roles (no emails, counts or suspensions)."""
    return ops.roster(request.app.state.brain, ctx)


@router.get("/workspaces", responses=errors())
def workspaces(ctx: Ctx, request: Request) -> dict[str, Any]:
    """The company workspaces you belong to."""
    return ops.team_workspaces(request.app.state.brain, ctx)


@router.post("/me/default-share", responses=errors(400, 409, 413), openapi_extra=documented(DefaultBody))
def own_default(ctx: Ctx, body: DefaultIn, request: Request) -> dict[str, Any]:
    """Where your captures land when they name no workspace: personal, company or inherit (the team's; not for
    the owner, whose captures go where the owner says)."""
    return ops.set_own_default(request.app.state.brain, ctx, body.default)


@router.post("/me/token", responses=errors(400, 409))
def own_token(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Replace your own token: the new one is shown to you alone, this once; the one an admin made (and saw) stops
    working. Not for the owner, whose token comes from the deployment."""
    return ops.rotate_own_token(request.app.state.brain, ctx)


@router.post("/profile", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(ProfileBody))
def profile(ctx: Ctx, body: ProfileIn, request: Request) -> dict[str, Any]:
    """Your name and email; an admin may name another member's `id`, and change a role."""
    return ops.update_profile(request.app.state.brain, ctx, body.id, body.name, body.email, body.role)


@router.get("/members", responses=errors(403))
def members(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Admin: every member with email, role, suspension and default, and your own id."""
    return ops.members(request.app.state.brain, ctx)


@router.post("/members", responses={**errors(400, 403, 404, 409, 413), **linked(200, "The member, and their token", {
    "Profile": link("/team/profile", "post", "Change their profile", body={"id": NEW_MEMBER}),
    "Token": link("/team/members/token", "post", "Replace their token", body={"id": NEW_MEMBER}),
    "Suspend": link("/team/members/suspend", "post", "Suspend or restore them", body={"id": NEW_MEMBER}),
    "Default": link("/team/members/default-share", "post", "Set their capture default", body={"id": NEW_MEMBER}),
    "Membership": link("/team/workspaces/members", "post", "Add them to a team or take them out",
                       body={"member": NEW_MEMBER}),
    "Remove": link("/team/members/remove", "post", "Remove them", body={"id": NEW_MEMBER})})},
             openapi_extra=documented(NewMemberBody))
def add_member(ctx: Ctx, body: NewMemberIn, request: Request) -> dict[str, Any]:
    """Admin: add a member; the answer holds their token, shown this once (only its hash is kept)."""
    return ops.add_member(request.app.state.brain, ctx, body.name, body.email, body.role, body.teams)


@router.post("/members/token", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(MemberBody))
def rotate(ctx: Ctx, body: MemberIn, request: Request) -> dict[str, Any]:
    """Admin: replace a member's token; the new one is shown this once, the old one stops working."""
    return ops.rotate_member_token(request.app.state.brain, ctx, body.id)


@router.post("/members/suspend", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(SuspendBody))
def suspend(ctx: Ctx, body: SuspendIn, request: Request) -> dict[str, Any]:
    """Admin: suspend a member (their token answers 401 `suspended`) or restore them; no data is touched."""
    return ops.suspend_member(request.app.state.brain, ctx, body.id, body.suspended)


@router.post("/members/default-share", responses=errors(400, 403, 404, 409, 413),
             openapi_extra=documented(MemberDefaultBody))
def member_default(ctx: Ctx, body: MemberDefaultIn, request: Request) -> dict[str, Any]:
    """Admin: set a member's capture default (personal, company or inherit)."""
    return ops.set_member_default(request.app.state.brain, ctx, body.id, body.default)


@router.post("/members/remove", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(MemberBody))
def remove(ctx: Ctx, body: MemberIn, request: Request) -> dict[str, Any]:
    """Admin: remove a member and erase their personal workspace; their company memories stay, attributed."""
    return ops.remove_member(request.app.state.brain, ctx, body.id)


@router.post("/workspaces/rename", responses=errors(400, 403, 404, 409, 413), openapi_extra=documented(RenameBody))
def rename(ctx: Ctx, body: RenameIn, request: Request) -> dict[str, Any]:
    """Admin: rename a company workspace (the primary team's when no `id`)."""
    return ops.rename_team(request.app.state.brain, ctx, body.name, body.id)


@router.post("/workspaces", responses={**errors(400, 403, 404, 409, 413), **linked(200, "The team", {
    "Rename": link("/team/workspaces/rename", "post", "Rename it", body={"id": NEW_TEAM}),
    "Membership": link("/team/workspaces/members", "post", "Add a member or take one out", body={"id": NEW_TEAM}),
    "Capture": link("/capture", "post", "A memory in it", body={"workspace": "company", "team": NEW_TEAM})})},
             openapi_extra=documented(NewTeamBody))
def create_team(ctx: Ctx, body: NewTeamIn, request: Request) -> dict[str, Any]:
    """Admin: another company workspace on this brain (a team), with the members named; the owner is in all."""
    return ops.create_team(request.app.state.brain, ctx, body.name, body.members)


@router.post("/workspaces/members", responses=errors(400, 403, 404, 409, 413),
             openapi_extra=documented(MembershipBody))
def membership(ctx: Ctx, body: MembershipIn, request: Request) -> dict[str, Any]:
    """Admin: add a member to a company workspace (`joined: true`) or take them out (`false`)."""
    return ops.set_membership(request.app.state.brain, ctx, body.id, body.member, body.joined)


@router.get("/activity", responses=errors(400, 403), openapi_extra=documented(
    None, query("limit", "Items per page, clamped to 1-100", "integer", minimum=1, maximum=100, default=50),
    query("offset", "Items to skip, newest first", "integer", **COUNT_RANGE, default=0)))
def activity(ctx: Ctx, request: Request) -> dict[str, Any]:
    """Admin: the audit feed, newest first: administrative acts, shares and un-shares, by name."""
    params = request.query_params
    return ops.team_activity(request.app.state.brain, ctx, int_param(params, "limit", 50),
                             int_param(params, "offset", 0))
