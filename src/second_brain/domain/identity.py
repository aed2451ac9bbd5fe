"""Who is asking, and which workspaces that identity may read and write."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Identity:
    actor_id: str
    name: str
    role: str  # "admin" or "member"
    personal_workspace: str
    company_workspaces: tuple[str, ...] = ()
    roster: dict[str, str] = field(default_factory=dict, compare=False, hash=False)  # actor id -> name
    owner: bool = False
    notice: str = field(default="", compare=False, hash=False)  # what they must be told when they next sign in
    # Where their captures land by default ("personal", "company" or "inherit"), as the team said when they signed
    # in for this request; None where nobody looked (a capture then reads the team).
    default_share: str | None = field(default=None, compare=False, hash=False)

    @property
    def readable(self) -> tuple[str, ...]:
        return (self.personal_workspace, *self.company_workspaces)

    def layer(self, workspace: str) -> str:
        """'personal' or 'company', as the API names a workspace."""
        return "personal" if workspace == self.personal_workspace else "company"

    def name_of(self, actor: str) -> str:
        """The name an author goes by, for company memories and timelines."""
        return self.name if actor == self.actor_id else self.roster.get(actor, actor)

    def can_edit(self, workspace: str, author: str) -> bool:
        if workspace == self.personal_workspace:
            return True
        return workspace in self.company_workspaces and (author == self.actor_id or self.role == "admin")


def owner(name: str = "Owner") -> Identity:
    """The brain's owner: an admin with a personal workspace of their own."""
    return Identity(actor_id="owner", name=name, role="admin", personal_workspace="personal-owner", owner=True)
