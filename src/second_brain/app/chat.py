"""POST /chat: an answer grounded in the memories the caller passes, streamed as it is written."""

from collections.abc import Iterator

from ..ports.llm import LanguageModel, Message

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
    return model.stream(chat_messages(query, memories), max_tokens=600)
