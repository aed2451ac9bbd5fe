"""Bounded snippets: short memories whole, long ones cut to a head plus the part that matters."""

import re
from bisect import bisect_left
from dataclasses import dataclass

NOTE_COST = 90  # a cut costs its marker; never cut a memory for fewer characters than this
MIN_TERM = 3  # shorter query words match inside too many others to place a window
BACK_UP = 0.15  # a window starts this share of its length before the match, for context
LONG_URL = 60
SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")
UPDATE_BLOCK = "\n[Update "
INVISIBLE = re.compile(r"[\u200b-\u200d\u2060\ufeff]|&zwnj;")
URL = re.compile(r"https?://\S+")
BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+\n")
WHITESPACE = re.compile(r"\s")


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
    text = condense(content)
    head = _cut(text, int(limit * 0.6))
    rest = limit - len(head)
    tail = _best_window(text[len(head):], rest, query_terms, shown=head) or _latest_update(text, rest)
    return (f"{head}\n…\n{tail}" if tail else head), True


def condense(text: str) -> str:
    """Spend no budget on invisible characters, long links or runs of blank lines."""
    text = INVISIBLE.sub("", text)
    text = URL.sub(lambda m: "[link]" if len(m.group()) >= LONG_URL else m.group(), text)
    return BLANK_LINES.sub("\n\n", text)


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


def _best_window(text: str, limit: int, terms: list[str], shown: str) -> str:
    """The window holding the most distinct query words the head does not already show, backed up for context."""
    seen = shown.lower()
    wanted = {t for t in map(str.lower, terms) if len(t) >= MIN_TERM and t not in seen}
    found = {t: [m.start() for m in re.finditer(re.escape(t), text, re.IGNORECASE)] for t in wanted}

    def covered(start: int) -> int:
        end = start + limit
        return sum(1 for t, at in found.items() if (i := bisect_left(at, start)) < len(at) and at[i] + len(t) <= end)

    starts = {_word_start(text, at - int(limit * BACK_UP), at) for positions in found.values() for at in positions}
    best = max(starts, key=lambda start: (covered(start), -start), default=None)
    return _cut(text[best:], limit) if best is not None and covered(best) else ""


def _word_start(text: str, start: int, match: int) -> int:
    """`start`, moved forward past a partial word, but never past the match."""
    start = max(0, start)
    if start == 0 or text[start - 1].isspace():
        return start
    space = WHITESPACE.search(text, start, match)
    return space.end() if space else match
