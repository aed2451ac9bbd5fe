"""What an integration's connector gives the brain: the items upstream, each as a mirror should read."""

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..domain.errors import InvalidInput, StoreUnavailable
from ..domain.integrations import ConnectorSpec


@dataclass(frozen=True)
class Item:
    """One upstream item: its id there (stable across syncs), its text and tags as the mirror holds them, the link
    back to it, and the ids of the items it links to (a notes folder's [[wikilinks]], a mail's thread)."""

    external_id: str
    content: str
    tags: tuple[str, ...] = ()
    url: str = ""
    links: tuple[str, ...] = ()
    unreadable: bool = False  # listed but not read this time (too large, replaced meanwhile): its mirror stays
    later: bool = False  # listed, not read in this run (its budget spent): its mirror stays, the next run reads it
    failed: str = ""  # listed, could not be read (a malformed message), in words: its mirror stays, the error is told
    # Its version upstream, where the system has a cheap one that changes with every change (a message's UID, an
    # edit time): an item listed with the version its mirror holds is not read again (Synced.version).
    version: str = ""
    when_at: int | None = None  # a calendar event's start (unix ms): the mirror's time anchor
    when_kind: str | None = None
    said_at: int | None = None  # when written (a mail's date, a page's edit; unix ms): what "tomorrow" is read from


@dataclass(frozen=True)
class Synced:
    """What the brain holds of an integration, for a connector that reads only what changed upstream: the version
    each item's mirror was synced at (None: no mirror yet, or none known), and how many items this run may read
    whole (the rest are listed `later`, for the next run). An item whose version is the one held is listed
    `unreadable` (its mirror stays as it is), not read."""

    version: Callable[[str], str | None] = lambda external_id: None
    budget: int = 500
    deadline: float | None = None  # time.monotonic() past which a connector lists what it has not read `later`
    gaps: list[str] = field(default_factory=list)  # what the listing could not reach (see gap)

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def gap(self, reason: str = "") -> None:
        """The listing is not whole (a part upstream could not be read, or was left for the next run: `reason`
        empty): the sync removes nothing, is not complete, and says `reason` as its error."""
        self.gaps.append(reason)


class Connector(Protocol):
    # What it is, as its module declares it (domain/integrations.ConnectorSpec): its kind, the settings it reads
    # (any other is refused) and those of them that are secrets (a password, a token, a secret feed address: kept
    # sealed outside the log (ports/secrets.py), never shown back, given back whole (not trimmed) to `check` and
    # `items` with the rest), and whether it reads the brain's own machine (`local`: only the owner connects it).
    spec: ConnectorSpec

    def check(self, settings: Mapping[str, str]) -> None:
        """Refuse settings that cannot work (InvalidInput, in words), before anything is connected."""

    def items(self, settings: Mapping[str, str], synced: Synced) -> Iterator[Item]:
        """Every item upstream, each once, in a stable order; raise StoreUnavailable when upstream cannot be read
        (the sync records the failure in words and changes nothing)."""


class Unavailable:
    """A connector registered but not run by this deployment (a notes folder on Lambda, whose disk holds no one's
    notes): its kind is known, and connecting or syncing one is refused in words."""

    def __init__(self, spec: ConnectorSpec) -> None:
        self.spec = spec

    def check(self, settings: Mapping[str, str]) -> None:
        raise InvalidInput(f"Integrations of kind {self.spec.kind} are not available here")

    def items(self, settings: Mapping[str, str], synced: Synced) -> Iterator[Item]:
        raise StoreUnavailable(f"Integrations of kind {self.spec.kind} are not available here")
