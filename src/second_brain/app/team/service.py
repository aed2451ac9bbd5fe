"""The team: who a bearer token stands for, the /team/* administration, capture defaults and the activity feed.

Every administrative act is an event on the `team` stream (members added, tokens rotated, suspensions, removals,
defaults, teams and renames), and every share or un-share is noted on `team-shares`: the activity feed is the two
read back, and the state every request needs (who holds which token hash, their names and roles) is the fold of
the first.
"""

import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from functools import reduce
from typing import TYPE_CHECKING, Any

from ...domain import shown
from ...domain import team as t
from ...domain.errors import Forbidden, InvalidInput, NotFound, Unauthorized
from ...domain.events import Envelope
from ...domain.identity import Identity
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.read_model import EntryReads
from ..handling import Context, envelopes, require_admin, retrying

if TYPE_CHECKING:
    from ..memories.projects import ProjectService
    from ..memories.service import MemoryService

TOKEN_PREFIX = "sbm_"  # member tokens; the owner's comes from the deployment
ACTIVITY_LIMIT, ACTIVITY_MAX = 50, 100


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class TeamService:
    def __init__(self, store: EventStore, clock: Clock, owner: Identity,
                 org_default: Callable[[], str] = lambda: "personal",
                 erase_member: Callable[[Identity, Context], int] | None = None) -> None:
        self.store = store
        self.clock = clock
        self.owner = owner
        self.org_default = org_default
        self.erase_member = erase_member  # forgets a member's personal workspace; how many memories went

    # -- identity ---------------------------------------------------------------------------------------------------

    def state(self) -> t.Team:
        return self._fold(self.store.read_stream(t.STREAM))

    def owner_identity(self, team: t.Team | None = None) -> Identity:
        """The owner, a member of every company workspace."""
        team = team or self.state()
        return self._with_team(self.owner, tuple(team.workspaces), team)

    def member_identity(self, token_hash: str, team: t.Team | None = None) -> Identity:
        """The member holding this token hash; Unauthorized (invalid_token, suspended, removed) otherwise."""
        team = team or self.state()
        member = team.by_token_hash(token_hash)
        if member is None:
            raise Unauthorized()
        if member.removed:
            raise Unauthorized("This member was removed from the team", code="removed")
        if member.suspended:
            raise Unauthorized("This member's access is suspended", code="suspended")
        identity = t.identity_of(member, team)
        return self._with_team(identity, identity.company_workspaces, team, self._notice(member, team))

    def _with_team(self, identity: Identity, teams: tuple[str, ...], team: t.Team, notice: str = "") -> Identity:
        roster = {m.id: m.name for m in team.members.values()} | {self.owner.actor_id: self.owner.name,
                                                                    "system": t.PRODUCT_NAME}
        return Identity(identity.actor_id, identity.name, identity.role, identity.personal_workspace, teams,
                        roster, identity.owner, notice, default_share=self._own_default(identity, team))

    def _notice(self, member: t.Member, team: t.Team) -> str:
        """What a member whose token someone else replaced is told each time they sign in, until they replace it
        themselves: who did it and when (that person saw the token, and so could read their personal layer)."""
        if not member.token_replaced_by_another:
            return ""
        by = self.owner.name if member.token_set_by == self.owner.actor_id else team.name_of(member.token_set_by)
        when = datetime.fromtimestamp(member.token_set_at / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
        return (f"{by} replaced your token on {when} and saw the new one to hand it to you. Replace it yourself "
                "(POST /team/me/token, or Settings in the dashboard) so that nobody else holds it.")

    def default_layer(self, ctx: Context) -> str:
        """Where a capture that names no workspace lands: the caller's own default, else the organisation's (never
        for the owner, whose captures go where the owner alone says)."""
        own = ctx.identity.default_share  # read with the team when the caller was identified, in this request
        if own is None:
            own = self._own_default(ctx.identity, self.state())
        return self.org_default() if own == "inherit" else own

    def _own_default(self, identity: Identity, team: t.Team) -> str:
        if identity.owner:
            return team.owner_default
        member = team.members.get(identity.actor_id)
        return member.default_share if member else "inherit"

    # -- what every member may do -----------------------------------------------------------------------------------

    def me(self, ctx: Context) -> dict[str, Any]:
        team = self.state()
        who = ctx.identity
        member = team.members.get(who.actor_id)
        own = self._own_default(who, team)
        org = self.org_default()
        made_by = member.token_set_by if member else who.actor_id
        return {"ok": True, "me": {
            "id": who.actor_id, "name": who.name, "email": member.email if member else "", "role": who.role,
            "owner": who.owner, "default_share": own, "org_default_share": org,
            "effective_default_share": org if own == "inherit" else own,
            "teams": self._teams_of(who, team),
            # Who made the token in use (an admin adding or rotating it saw it once), and the notice if another
            # person replaced it: the member learns it at their next sign-in, whatever client they use.
            "token_made_by": self.owner.name if made_by == self.owner.actor_id else team.name_of(made_by),
            "token_made_at": member.token_set_at if member else None,
            "token_known_to_another": bool(member and member.token_known_to_another),
            "notice": self._notice(member, team) if member else "",
        }}

    def roster(self, ctx: Context) -> dict[str, Any]:
        """The caller's teams, each with its people's names and roles."""
        team = self.state()
        owner = {"id": self.owner.actor_id, "name": self.owner.name, "role": "admin", "owner": True}
        return {"ok": True, "teams": [
            {**item, "members": [owner, *({"id": m.id, "name": m.name, "role": m.role, "owner": False}
                                          for m in team.active() if item["id"] in m.teams)]}
            for item in self._teams_of(ctx.identity, team)]}

    def workspaces(self, ctx: Context) -> dict[str, Any]:
        return {"ok": True, "workspaces": [{**item, "kind": "company"}
                                           for item in self._teams_of(ctx.identity, self.state())]}

    def teams(self, ctx: Context) -> list[dict[str, Any]]:
        return self._teams_of(ctx.identity, self.state())

    @staticmethod
    def _teams_of(identity: Identity, team: t.Team) -> list[dict[str, Any]]:
        return [{"id": w, "name": team.workspaces[w], "primary": w == t.COMPANY}
                for w in team.workspaces if w in identity.company_workspaces]

    def set_own_default(self, ctx: Context, default: object) -> dict[str, Any]:
        value = _share_for(ctx.identity.actor_id, default)
        self._append(ctx, lambda team: [t.DefaultShareSet(ctx.identity.actor_id, value)])
        return self.me(ctx)

    def rotate_own_token(self, ctx: Context) -> dict[str, Any]:
        """A member replaces their own token: the new one is shown to them alone, this once, and the one an admin
        made (and saw) stops working."""
        if ctx.identity.owner:
            raise InvalidInput("The owner's token comes from the deployment (BRAIN_AUTH_TOKEN)")
        token = new_token()
        team = self._append(ctx, lambda team: [t.MemberTokenRotated(team.member(ctx.identity.actor_id).id,
                                                                    t.token_hash(token))])
        return {"ok": True, "member": self._admin_view(team.member(ctx.identity.actor_id)), "token": token,
                "message": "Store this token now: it is shown only once, and nobody else has seen it"}

    def update_profile(self, ctx: Context, member_id: str | None, name: object = None, email: object = None,
                       role: object = None) -> dict[str, Any]:
        target = (member_id or ctx.identity.actor_id).strip()
        if target != ctx.identity.actor_id or role is not None:
            require_admin(ctx)
        if target == self.owner.actor_id:
            raise InvalidInput("The owner's name comes from the deployment (BRAIN_OWNER_NAME)")

        def decide(team: t.Team) -> list[object]:
            member = team.member(target)
            changed = t.MemberProfileChanged(
                target, team.check_unique_name(t.check_name(name), target, self.owner.name) if name is not None
                else member.name,
                t.check_email(email) if email is not None else member.email,
                t.check_role(role) if role is not None else member.role)
            same = (changed.name, changed.email, changed.role) == (member.name, member.email, member.role)
            return [] if same else [changed]

        team = self._append(ctx, decide)
        return {"ok": True, "member": self._admin_view(team.member(target))}

    # -- administration ---------------------------------------------------------------------------------------------

    def members(self, ctx: Context) -> dict[str, Any]:
        require_admin(ctx)
        team = self.state()
        owner = {"id": self.owner.actor_id, "name": self.owner.name, "email": "", "role": "admin", "owner": True,
                 "suspended": False, "default_share": team.owner_default, "created_at": None}
        return {"ok": True, "caller_id": ctx.identity.actor_id,
                "members": [owner, *(self._admin_view(m) for m in team.active())]}

    def add_member(self, ctx: Context, name: object, email: object = None, role: object = None,
                   teams: object = None) -> dict[str, Any]:
        """A new member of the teams named (the primary one by default), with a token shown this once."""
        require_admin(ctx)
        member_id = "m-" + secrets.token_hex(8)
        token = new_token()
        chosen = _team_ids(teams)
        event = t.MemberAdded(member_id, t.check_name(name), t.check_email(email),
                              t.check_role(role if role is not None else "member"), t.token_hash(token), chosen)

        def decide(team: t.Team) -> list[object]:
            for workspace in chosen:
                self._require_team_admin(ctx, team.workspace(workspace))  # an unknown team is a 404
            team.check_unique_name(event.name, member_id, self.owner.name)
            return [event]

        team = self._append(ctx, decide)
        return {"ok": True, "member": self._admin_view(team.member(member_id)), "token": token,
                "message": "Store this token now: it is shown only once"}

    def rotate_token(self, ctx: Context, member_id: str | None) -> dict[str, Any]:
        require_admin(ctx)
        target = _required_id(member_id)
        token = new_token()
        team = self._append(ctx, lambda team: [t.MemberTokenRotated(team.member(target).id, t.token_hash(token))])
        return {"ok": True, "member": self._admin_view(team.member(target)), "token": token,
                "message": "Store this token now: it is shown only once; the old one no longer works"}

    def suspend(self, ctx: Context, member_id: str | None, suspended: object) -> dict[str, Any]:
        require_admin(ctx)
        target = _required_id(member_id)
        if not isinstance(suspended, bool):
            raise InvalidInput("suspended must be true or false")
        if target == ctx.identity.actor_id:
            raise InvalidInput("You cannot suspend yourself")

        def decide(team: t.Team) -> list[object]:
            member = team.member(target)
            return [] if member.suspended == suspended else [t.MemberSuspended(target, suspended)]

        team = self._append(ctx, decide)
        return {"ok": True, "member": self._admin_view(team.member(target))}

    def set_member_default(self, ctx: Context, member_id: str | None, default: object) -> dict[str, Any]:
        require_admin(ctx)
        target = _required_id(member_id)
        if target == self.owner.actor_id and not ctx.identity.owner:
            raise Forbidden("Only the owner changes where the owner's captures land")
        value = _share_for(target, default)
        if target == self.owner.actor_id:
            self._append(ctx, lambda team: [t.DefaultShareSet(target, value)])
            return {"ok": True, "id": target, "default_share": value}
        team = self._append(ctx, lambda team: [t.DefaultShareSet(team.member(target).id, value)])
        return {"ok": True, "member": self._admin_view(team.member(target))}

    def remove(self, ctx: Context, member_id: str | None) -> dict[str, Any]:
        """Erase the member's personal workspace (as forget does, memory by memory), then mark them removed:
        their company memories stay, still attributed to their name."""
        require_admin(ctx)
        target = _required_id(member_id)
        if target == ctx.identity.actor_id:
            raise InvalidInput("You cannot remove yourself")
        if target == self.owner.actor_id:
            raise Forbidden("The owner cannot be removed")
        # Their access ends first, so nothing new lands in (or is shared out of) the workspace being erased; a
        # removal that stops halfway leaves them suspended, and removing them again finishes it.
        team = self._append(ctx, lambda team: [] if team.member(target).suspended
                            else [t.MemberSuspended(target, True)])
        erased = self.erase_member(t.identity_of(team.member(target), team), ctx) if self.erase_member else 0
        self._append(ctx, lambda team: [] if team.members[target].removed else [t.MemberRemoved(target, erased)])
        return {"ok": True, "id": target, "removed": True, "erased_memories": erased}

    def rename_workspace(self, ctx: Context, name: object, workspace_id: str | None = None) -> dict[str, Any]:
        require_admin(ctx)
        target = (workspace_id or (ctx.identity.company_workspaces or (t.COMPANY,))[0]).strip()
        value = t.check_name(name)

        def decide(team: t.Team) -> list[object]:
            self._require_team_admin(ctx, team.workspace(target))
            return [] if team.workspaces[target] == value else [t.WorkspaceRenamed(target, value)]

        team = self._append(ctx, decide)
        return {"ok": True, "workspace": {"id": target, "name": team.workspaces[target]}}

    def create_team(self, ctx: Context, name: object, members: object = None) -> dict[str, Any]:
        """Another company workspace; the owner is in every one, the admin who creates it and the members named
        join it."""
        require_admin(ctx)
        value = t.check_name(name)
        workspace_id = "company-" + secrets.token_hex(6)
        creator = () if ctx.identity.owner else (ctx.identity.actor_id,)
        joining = tuple(dict.fromkeys((*creator, *_member_ids(members))))
        team = self._append(ctx, lambda team: [t.TeamCreated(workspace_id, value), *(
            t.MembershipChanged(workspace_id, team.member(m).id, True) for m in joining)])
        return {"ok": True, "workspace": {"id": workspace_id, "name": value, "primary": False, "kind": "company",
                                          "members": [team.members[m].name for m in joining]}}

    def set_membership(self, ctx: Context, workspace_id: str | None, member_id: str | None,
                       member: object) -> dict[str, Any]:
        """Add a member to a company workspace or take them out (their memories there stay with the team)."""
        require_admin(ctx)
        target = _required_id(member_id)
        if not isinstance(member, bool):
            raise InvalidInput("member must be true or false")
        workspace = (workspace_id or "").strip()
        if not workspace:
            raise InvalidInput("Missing or empty workspace id")

        def decide(team: t.Team) -> list[object]:
            self._require_team_admin(ctx, team.workspace(workspace))
            current = team.member(target)
            return [] if (workspace in current.teams) == member else [t.MembershipChanged(workspace, target, member)]

        team = self._append(ctx, decide)
        return {"ok": True, "member": self._admin_view(team.member(target))}

    def activity(self, ctx: Context, limit: int = ACTIVITY_LIMIT, offset: int = 0) -> dict[str, Any]:
        """Newest first: who did what to whom, by name; never a token hash or a memory's content."""
        require_admin(ctx)
        history = self.store.read_stream(t.STREAM)
        team = self._fold(history)
        roster = self.owner_identity(team)
        shares = [e for e in self.store.read_stream(t.SHARES_STREAM)  # moves in the caller's teams only
                  if isinstance(e.event, t.ShareNoted | t.PatternAnswered)
                  and e.event.workspace in ctx.identity.company_workspaces]
        merged = sorted([*history, *shares], key=lambda e: (e.position, e.at), reverse=True)
        items = [self._feed_item(e, roster, team.workspaces) for e in merged]
        limit, offset = max(1, min(ACTIVITY_MAX, limit)), max(0, offset)
        page = items[offset : offset + limit]
        return {"ok": True, "activity": page, "total": len(items), "limit": limit, "offset": offset,
                "next_offset": offset + len(page) if offset + len(page) < len(items) else None}

    def note_share(self, ctx: Context, memory_id: str, layer: str, author: str, workspace: str) -> list[Envelope]:
        """The feed's record of a share or un-share, to append with the move itself."""
        version = len(self.store.read_stream(t.SHARES_STREAM))
        return envelopes(ctx, t.SHARES_STREAM, version, [t.ShareNoted(memory_id, layer, author, workspace)], "",
                         self.clock.now_ms())

    def note_pattern(self, ctx: Context, memory_id: str, action: str, workspace: str) -> list[Envelope]:
        """The feed's record of a decision on a proposed pattern, to append with the decision itself."""
        version = len(self.store.read_stream(t.SHARES_STREAM))
        return envelopes(ctx, t.SHARES_STREAM, version, [t.PatternAnswered(memory_id, action, workspace)], "",
                         self.clock.now_ms())

    def every_workspace(self) -> tuple[str, ...]:
        """Every workspace of the brain (the owner's, each member's, each team's): what nightly jobs act on."""
        team = self.state()
        return (*self.owner_identity(team).readable, *(m.personal_workspace for m in team.active()))

    def home_of(self, actor_id: str) -> str | None:
        """Where an author's memory goes back to when it is un-shared: their personal workspace (None once they
        have left the team)."""
        if actor_id == self.owner.actor_id:
            return self.owner.personal_workspace
        return self.state().home_of(actor_id)

    # -- helpers ----------------------------------------------------------------------------------------------------

    def _feed_item(self, envelope: Envelope, names: Identity, team_names: dict[str, str]) -> dict[str, Any]:
        """One line of the activity feed: the event's type and what it says, as its row gives them, with who
        acted and, for an event about a member, whom it was about."""
        event = envelope.event
        item: dict[str, Any] = {"type": shown.named(envelope.type).feed_name or envelope.type, "at": envelope.at,
                                "actor_name": names.name_of(envelope.actor)}
        subject = getattr(event, "member_id", None)
        if subject:
            item["member_name"] = names.name_of(subject)
        return item | shown.feed(event, names.name_of, lambda workspace: team_names.get(workspace, workspace))

    @staticmethod
    def _require_team_admin(ctx: Context, workspace: str) -> None:
        """A team's membership and name are changed by the owner, or by an admin who belongs to that team."""
        if not ctx.identity.owner and workspace not in ctx.identity.company_workspaces:
            raise Forbidden("Only the owner or an admin of that team may change it")

    @staticmethod
    def _admin_view(member: t.Member) -> dict[str, Any]:
        return {"id": member.id, "name": member.name, "email": member.email, "role": member.role, "owner": False,
                "suspended": member.suspended, "default_share": member.default_share, "teams": list(member.teams),
                "created_at": member.created_at}

    def _fold(self, history: list[Envelope]) -> t.Team:
        return reduce(lambda team, e: t.evolve(team, e.event, e.at, e.actor), history, t.Team())

    def _append(self, ctx: Context, decide: Callable[[t.Team], list[object]]) -> t.Team:
        """Load the team, decide against it, append; again on a lost race. The team as it is afterwards."""

        def attempt() -> t.Team:
            history = self.store.read_stream(t.STREAM)
            team = self._fold(history)
            events = decide(team)
            if not events:
                return team
            batch = envelopes(ctx, t.STREAM, len(history), events, "", self.clock.now_ms())
            self.store.append(batch)
            return self._fold([*history, *batch])

        return retrying(attempt)


def workspace_eraser(memories: "MemoryService", projects: "ProjectService", read_model: EntryReads
                     ) -> Callable[[Identity, Context], int]:
    """What removing a member erases: every memory of their personal workspace, through the same forget a person
    uses (the log keeps only tombstones, the read model, indexes, vectors and embedding cache lose every trace),
    and their personal projects; their company memories stay. How many memories went."""

    def erase(member: Identity, by: Context) -> int:
        # The admin removing them erases, with the right to change that one layer: the log names who did it.
        acting = Identity(by.identity.actor_id, by.identity.name, by.identity.role, member.personal_workspace)
        ctx = Context(acting, by.request_id)
        erased = 0
        while True:  # again while a pass erased something: whatever landed while it ran
            before = erased
            for row in read_model.all_entries((member.personal_workspace,)):
                try:
                    memories.forget(ctx, row.id, managed=True)  # a mirror of theirs goes too
                    erased += 1
                except NotFound:  # forgotten meanwhile
                    continue
            if erased == before:
                break
        projects.erase_workspace(ctx, member.personal_workspace)
        return erased

    return erase


def _share_for(member_id: str, value: object) -> str:
    """A capture default for this person: the owner's is their own choice, never the organisation's."""
    share = t.check_share(value)
    if member_id == t.OWNER_ID and share == "inherit":
        raise InvalidInput("The owner's captures land where the owner says: default must be personal or company")
    return share


def _team_ids(value: object) -> tuple[str, ...]:
    if value is None:
        return (t.COMPANY,)
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InvalidInput("teams must be a list of workspace ids")
    return tuple(dict.fromkeys(v.strip() for v in value))


def _member_ids(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InvalidInput("members must be a list of member ids")
    return tuple(dict.fromkeys(v.strip() for v in value))


def _required_id(value: str | None) -> str:
    if value is None or not isinstance(value, str) or not value.strip():
        raise InvalidInput("Missing or empty id")
    return value.strip()
