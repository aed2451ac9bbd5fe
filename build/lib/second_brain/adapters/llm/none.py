"""No language model: every call says so, and callers take their deterministic fallbacks."""

from collections.abc import Iterator, Sequence

from ...domain.errors import LanguageModelUnavailable
from ...ports.llm import Message

MESSAGE = "No language model is configured: set BRAIN_LLM=openai and BRAIN_LLM_BASE_URL (Ollama, llama.cpp, vLLM...)"


class NoLanguageModel:
    model_id = "none"

    def complete(self, messages: Sequence[Message], max_tokens: int = 512) -> str:
        raise LanguageModelUnavailable(MESSAGE)

    def stream(self, messages: Sequence[Message], max_tokens: int = 512) -> Iterator[str]:
        raise LanguageModelUnavailable(MESSAGE)
