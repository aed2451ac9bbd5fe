"""The language-model port: chat messages in, text out (whole, or as it is generated)."""

from collections.abc import Iterator, Sequence
from typing import Protocol

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}


class LanguageModel(Protocol):
    model_id: str

    def complete(self, messages: Sequence[Message], max_tokens: int = 512) -> str:
        """The model's whole answer."""

    def stream(self, messages: Sequence[Message], max_tokens: int = 512) -> Iterator[str]:
        """The model's answer in pieces, as they come."""
