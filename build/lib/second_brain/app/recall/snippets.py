"""Bounded snippets: short memories whole, long ones cut to a head plus the part that matters."""

import re
from dataclasses import dataclass

NOTE_COST = 90  # a cut costs its marker; never cut a memory for fewer characters than this
SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")
UPDATE_BLOCK = "\n\n[Update "


@dataclass(frozen=True)
class Budget:
    snippet: int = 400
    full_match: int = 4000
    full_matches: int = 2
    strong_ratio: float = 0.75


def allowance(index: int, normalized_score: float, budget: Budget) -> int:
    """The first results get the large allowance only if they are also strong matches."""
    strong = index < budget.full_matches and normalized_score >= budget.strong_ratio
    return budget.full_match if strong else budget.snippet


def snippet(content: str, limit: int, query_terms: list[str]) -> tuple[str, bool]:
    """Cut `content` to about `limit` characters: (text, truncated)."""
    if len(content) <= limit + NOTE_COST:
        return content, False
    head = _cut(content, int(limit * 0.6))
    rest = limit - len(head)
    tail = _latest_update(content, rest) or _best_window(content[len(head):], rest, query_terms)
    return (f"{head}\n…\n{tail}" if tail else head), True


def _cut(text: str, limit: int) -> str:
    """Cut at the last sentence or line end in the second half of the window, else at a word."""
    window = text[:limit]
    ends = [m.end() for m in SENTENCE_END.finditer(window) if m.end() >= limit // 2]
    if ends:
        return window[: ends[-1]].rstrip()
    space = window.rfind(" ", limit // 2)
    return window[: space if space > 0 else limit].rstrip()


def _latest_update(content: str, limit: int) -> str:
    start = content.rfind(UPDATE_BLOCK)
    if start < 0:
        return ""
    return _cut(content[start:].strip(), limit)


def _best_window(text: str, limit: int, terms: list[str]) -> str:
    """The window holding the most distinct query terms, backed up a little for context."""
    lowered = text.lower()
    best_start, best_hits = -1, 0
    for term in {t.lower() for t in terms if len(t) >= 3}:
        for match in re.finditer(re.escape(term), lowered):
            start = max(0, match.start() - int(limit * 0.15))
            window = lowered[start : start + limit]
            hits = sum(1 for t in terms if t.lower() in window)
            if hits > best_hits:
                best_start, best_hits = start, hits
    if best_start < 0:
        return ""
    return _cut(text[best_start:], limit)
