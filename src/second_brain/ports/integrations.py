"""What an integration's connector gives the brain: the items upstream, each as a mirror should read."""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol


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
    when_at: int | None = None  # a calendar event's start (unix ms): the mirror's time anchor
    when_kind: str | None = None


class Connector(Protocol):
    # Whether it reads the brain's own machine (a folder), with the server's rights: then only the owner connects it.
    local: bool

    def check(self, settings: Mapping[str, str]) -> None:
        """Refuse settings that cannot work (InvalidInput, in words), before anything is connected."""

    def items(self, settings: Mapping[str, str]) -> Iterator[Item]:
        """Every item upstream, each once, in a stable order; raise StoreUnavailable when upstream cannot be read
        (the sync records the failure in words and changes nothing)."""
