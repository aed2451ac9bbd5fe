"""Where an integration's secrets are kept (a mailbox's password, a Notion token, a secret calendar address): sealed,
outside the log, so an export, a backup of the log or a replica never carries them, and a disconnect erases them."""

from collections.abc import Mapping
from typing import Protocol


class SecretStore(Protocol):
    def put(self, name: str, values: Mapping[str, str]) -> None:
        """Keep `values` under `name`, replacing what was there."""

    def get(self, name: str) -> dict[str, str] | None:
        """What `name` holds; None if nothing (never put, deleted, or a brain restored without its secrets)."""

    def delete(self, name: str) -> None:
        """Erase `name` for good; nothing happens if it is not there."""
