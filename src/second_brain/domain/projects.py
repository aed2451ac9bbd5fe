"""Projects: a registry row per (workspace, slug); membership itself is the memory's project:<slug> tag."""

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import ClassVar

from . import text
from .envelope import Envelope, Erased, stored
from .errors import AlreadyExists, InvalidInput, NotFound
from .shown import shows

SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
MAX_NAME = 120
MAX_DESCRIPTION = 1000
MAX_ALIASES = 16
STATUSES = ("active", "archived")


@stored
@dataclass(frozen=True)
class ProjectCreated:
    slug: str
    name: str
    description: str
    aliases: tuple[str, ...]
    workspace: str
    SCHEMA: ClassVar[int] = 1


shows(ProjectCreated, line=lambda e, other: f"project {e.name!r}")


@stored
@dataclass(frozen=True)
class ProjectImported:
    """A project restored from an export, as it was there."""

    slug: str
    name: str
    description: str
    aliases: tuple[str, ...]
    status: str
    workspace: str
    created_at: int
    updated_at: int | None
    SCHEMA: ClassVar[int] = 1


shows(ProjectImported, line=lambda e, other: f"project {e.name!r}")


@stored
@dataclass(frozen=True)
class ProjectUpdated:
    name: str
    description: str
    aliases: tuple[str, ...]
    status: str
    SCHEMA: ClassVar[int] = 1


shows(ProjectUpdated, line=lambda e, other: f"project {e.name!r}, {e.status}")


@stored
@dataclass(frozen=True)
class ProjectDeleted:
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class ProjectErased:
    """Tombstone: a removed member's project goes with their workspace, its name and description erased."""

    SCHEMA: ClassVar[int] = 1
    TOMBSTONE: ClassVar[bool] = True


@dataclass(frozen=True)
class Project:
    slug: str
    workspace: str
    exists: bool = False
    name: str = ""
    description: str = ""
    aliases: tuple[str, ...] = ()
    status: str = "active"
    version: int = 0
    created_at: int = 0
    updated_at: int | None = None  # None until it is first changed


def project_stream(workspace: str, slug: str) -> str:
    return f"project-{workspace}-{slug}"


def slugify(name: str) -> str:
    """Lowercase, spaces to hyphens, anything else illegal stripped."""
    slug = re.sub(r"[^a-z0-9_-]", "", re.sub(r"\s+", "-", name.strip().lower()))
    return slug.lstrip("_-")[:64]


def check_slug(slug: str) -> str:
    if not SLUG.match(slug):
        raise InvalidInput(f"Invalid project slug {text.shorten(slug)!r}: "
                           "use lowercase letters, digits, - and _ (at most 64)")
    return slug


def check_fields(name: str, description: str, aliases: list[str] | tuple[str, ...], status: str) -> tuple[str, ...]:
    if not name.strip():
        raise InvalidInput("Missing or empty name")
    if len(name) > MAX_NAME:
        raise InvalidInput(f"name is too long: at most {MAX_NAME} characters")
    if len(description) > MAX_DESCRIPTION:
        raise InvalidInput(f"description is too long: at most {MAX_DESCRIPTION} characters")
    if status not in STATUSES:
        raise InvalidInput("status must be active or archived")
    cleaned = text.normalize_tags(list(aliases))
    if len(cleaned) > MAX_ALIASES:
        raise InvalidInput(f"Too many aliases: at most {MAX_ALIASES}")
    for alias in cleaned:
        if alias.startswith(text.RESERVED_PREFIXES):
            raise InvalidInput(f"Alias {alias!r} uses a reserved prefix: aliases are plain topic tags")
    return tuple(cleaned)


def decide_create(state: Project, name: str, description: str, aliases: list[str]) -> list[object]:
    if state.exists:
        raise AlreadyExists(f'project "{state.slug}" already exists')
    cleaned = check_fields(name, description, aliases, "active")
    return [ProjectCreated(check_slug(state.slug), name.strip(), description, cleaned, state.workspace)]


def decide_update(state: Project, name: str | None, description: str | None, aliases: list[str] | None,
                  status: str | None) -> list[object]:
    if not state.exists:
        raise NotFound(f'unknown project "{state.slug}"')
    new = ProjectUpdated(
        name=state.name if name is None else name.strip(),
        description=state.description if description is None else description,
        aliases=state.aliases if aliases is None else tuple(aliases),
        status=state.status if status is None else status,
    )
    new = replace(new, aliases=check_fields(new.name, new.description, new.aliases, new.status))
    unchanged = (new.name, new.description, new.aliases, new.status) == (
        state.name, state.description, state.aliases, state.status)
    return [] if unchanged else [new]


def decide_delete(state: Project) -> list[object]:
    if not state.exists:
        raise NotFound(f'unknown project "{state.slug}"')
    return [ProjectDeleted()]


def evolve_project(state: Project, event: object, envelope: Envelope | None = None) -> Project:
    """The only place a project's state is derived: the aggregate and every projection fold with it."""
    version = state.version + 1
    at = envelope.at if envelope else 0
    if isinstance(event, ProjectCreated):
        return replace(state, slug=event.slug, exists=True, name=event.name, description=event.description,
                       aliases=event.aliases, status="active", version=version, created_at=at, updated_at=None)
    if isinstance(event, ProjectImported):
        return replace(state, slug=event.slug, exists=True, name=event.name, description=event.description,
                       aliases=event.aliases, status=event.status, version=version, created_at=event.created_at,
                       updated_at=event.updated_at)
    if isinstance(event, ProjectUpdated):
        return replace(state, name=event.name, description=event.description, aliases=event.aliases,
                       status=event.status, version=version, updated_at=at)
    if isinstance(event, (ProjectDeleted, ProjectErased)):
        return Project(state.slug, state.workspace, version=version)
    if isinstance(event, Erased):  # an erased project's earlier events
        return replace(state, version=version)
    raise TypeError(f"unknown event {event!r}")


def fold_project(envelopes: Iterable[Envelope], state: Project) -> Project:
    for envelope in envelopes:
        state = evolve_project(state, envelope.event, envelope)
    return state
