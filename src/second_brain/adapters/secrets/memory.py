"""Secrets in a dict: the unit tests' store (nothing survives the process)."""

from collections.abc import Mapping


class InMemorySecrets:
    def __init__(self) -> None:
        self._held: dict[str, dict[str, str]] = {}

    def put(self, name: str, values: Mapping[str, str]) -> None:
        self._held[name] = dict(values)

    def get(self, name: str) -> dict[str, str] | None:
        held = self._held.get(name)
        return dict(held) if held is not None else None

    def delete(self, name: str) -> None:
        self._held.pop(name, None)
