"""Answers from a language model grounded in memories: POST /chat (streamed) and the insight on recall."""

import logging
from collections.abc import Iterator, Sequence
from typing import Any

from ...domain.errors import LanguageModelUnavailable
from ...ports.llm import LanguageModel, Message

log = logging.getLogger("second_brain.chat")

SYSTEM = (
    "You are the user's second brain. Answer the question using only the memories provided. "
    "If they do not hold the answer, say so plainly instead of guessing. Be brief."
)
MAX_MEMORY_CHARS = 24_000


def chat_messages(query: str, memories: str) -> list[Message]:
    context = memories.strip()[:MAX_MEMORY_CHARS] or "(no memories were provided)"
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Memories:\n{context}\n\nQuestion: {query.strip()}"},
    ]


def answer(model: LanguageModel, query: str, memories: str) -> Iterator[str]:
    """The model's answer in pieces. No model at all raises LanguageModelUnavailable now, before any piece (the
    caller refuses the request); a model that fails once its answer began raises it from the pieces."""
    return model.stream(chat_messages(query, memories), max_tokens=600)


INSIGHT_SYSTEM = (
    "You tell a person what their own stored memories say about their question, in two to four sentences, "
    "using only those memories. Mention disagreements between them. No preamble."
)
INSIGHT_EXCERPT_CHARS = 800


def insight(model: LanguageModel, query: str, results: Sequence[dict[str, Any]]) -> str | None:
    """A short synthesis of the recalled memories, when there are at least two; None without a usable model."""
    if len(results) < 2:
        return None
    number = {r["id"]: n for n, r in enumerate(results, start=1) if "id" in r}
    memories = "\n".join(f"[{n}]{_history(r, number)} {r['content'][:INSIGHT_EXCERPT_CHARS]}"
                         for n, r in enumerate(results, start=1))
    messages = [{"role": "system", "content": INSIGHT_SYSTEM},
                {"role": "user", "content": f"Question: {query.strip()}\n\nMemories:\n{memories}"}]
    try:
        return model.complete(messages, max_tokens=300).strip() or None
    except LanguageModelUnavailable as exc:
        log.debug("no insight for this recall: %s", exc.message)
        return None


def _history(result: dict[str, Any], number: dict[str, int]) -> str:
    """What recall knows of a memory's history, for the model: replaced, or maybe updated by another of these."""
    if result.get("superseded_by"):
        return " (replaced by a newer note: outdated)"
    others = [f"[{number[o]}]" if o in number else "another note" for o in result.get("conflicts_with") or []]
    return f" (may disagree with {', '.join(others)}: the newer one is more likely current)" if others else ""
