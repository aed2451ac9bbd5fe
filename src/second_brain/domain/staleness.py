"""Which memories may have gone out of date: the nightly staleness pass's rules, as pure functions.

A memory untouched for 90 days that states something which changes (where someone works or lives, a plan, a
meeting, a task) is flagged `stale:as-of`, with a reason a person can read; one that states something lasting (a
birthday, a name) loses the flag. Its own `volatility:` tag, when it has one, decides over the wording.
"""

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from . import text
from .memory import Memory

STALE_TAG = "stale:as-of"
STALE_AFTER_MS = 90 * 24 * 3600 * 1000
DAY_MS = 24 * 3600 * 1000
NEVER_JUDGED = (text.DEPRECATED, "auto-insight", "auto-pattern", "synthesized", "rolled-up")

VOLATILE = re.compile(r"\b(meetings?|appointments?|deadlines?)\b", re.IGNORECASE)
DURABLE = re.compile(r"\b(birthday|born|birth ?date|date of birth|grew up in|name is|is called|nationality|"
                     r"maiden name)\b", re.IGNORECASE)
STATE = re.compile(r"\b(works? at|work(?:s|ing)? for|employed|job (?:at|with)|lives? in|living in|"
                   r"plan(?:s|ning)? to|role at|position at)\b", re.IGNORECASE)
WHAT = {  # what a matched phrase says, for the reason
    "state": "says where someone works or lives, or what they plan",
    "volatile": "is about a meeting, appointment or deadline",
}


@dataclass(frozen=True)
class Verdict:
    stale: bool
    reason: str


def volatility(memory: Memory) -> tuple[str, str]:
    """The memory's volatility and the evidence for it, in words a person can check: its own tag decides, its
    wording explains ("", "" when neither says anything)."""
    worded, evidence = _worded(memory.content)
    for tag in memory.tags:
        if tag.startswith("volatility:"):
            kind = tag.removeprefix("volatility:")
            return kind, evidence if worded == kind else f"it is marked {kind}"
    if "task" in memory.tags:
        return "volatile", "it is a task"
    return worded, evidence


def _worded(content: str) -> tuple[str, str]:
    durable, state, volatile = (p.search(content) for p in (DURABLE, STATE, VOLATILE))
    if state and not durable:
        return "state", f"it {WHAT['state']} (“{state.group(0)}”)"
    if volatile and not durable:
        return "volatile", f"it {WHAT['volatile']} (“{volatile.group(0)}”)"
    if durable and not (state or volatile):
        return "durable", f"it states something lasting (“{durable.group(0)}”)"
    return "", ""


def judge(memory: Memory, now: int) -> Verdict | None:
    """The flag a memory should carry now, or None when the pass leaves it as it is."""
    if not memory.exists or any(tag in NEVER_JUDGED for tag in memory.tags):
        return None
    if memory.updated_at >= now - STALE_AFTER_MS:
        return None
    kind, evidence = volatility(memory)
    flagged = STALE_TAG in memory.tags
    if kind in ("state", "volatile") and not flagged:
        changed = datetime.fromtimestamp(memory.updated_at / 1000, UTC).date().isoformat()
        days = (now - memory.updated_at) // DAY_MS
        return Verdict(True, f"Possibly out of date: {evidence}, and it has not changed in {days} days. "
                             f"True as of {changed}; verify before relying on it.")
    if kind == "durable" and flagged:
        return Verdict(False, f"No longer flagged: {evidence}.")
    return None
