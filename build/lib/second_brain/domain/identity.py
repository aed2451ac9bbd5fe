"""Who is asking, and which workspaces that identity may read and write."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Identity:
    actor_id: str
    name: str
    role: str  # "admin" or "member"
    personal_workspace: str
    company_workspaces: tuple[str, ...] = ()

    @property
    def readable(self) -> tuple[str, ...]:
        return (self.personal_workspace, *self.company_workspaces)

    def layer(self, workspace: str) -> str:
        """'personal' or 'company', as the API names a workspace."""
        return "personal" if workspace == self.personal_workspace else "company"

    def can_edit(self, workspace: str, author: str) -> bool:
        if workspace == self.personal_workspace:
            return True
        return workspace in self.company_workspaces and (author == self.actor_id or self.role == "admin")


def owner(name: str = "Owner") -> Identity:
    """The brain's owner: an admin with a personal workspace of their own."""
    return Identity(actor_id="owner", name=name, role="admin", personal_workspace="personal-owner")
