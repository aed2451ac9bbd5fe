"""The rules behind GET /brief and GET /graph: their windows (in UTC hours and days since the Unix epoch), which
memories are patterns awaiting confirmation, which are never shown as a graph node or resurfaced, and the
stable pseudo-random keys the daily resurface pick is made with."""

import hashlib
from collections.abc import Sequence

from .text import AWAITING_CONFIRMATION, CANONICAL, DEPRECATED, PROTECTED_IMPORTANCE, SYNTHESIZED

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
WINDOW_HOURS = 48  # `captured` and `sources`
ACTIVITY_DAYS = 14  # one count per day, empty days included
TOPIC_DAYS = 7  # topics: tags of the memories written on the last 7 days (today included)
PATTERNS_SHOWN = 3
TOPICS_SHOWN = 5
RESURFACE_MIN_AGE_MS = 30 * DAY_MS
PATTERN_TAGS = AWAITING_CONFIRMATION  # patterns awaiting confirmation (auto-pattern: the name before the rename)
# Never a graph node, never resurfaced: retired memories, patterns awaiting confirmation, and digests (a digest
# restates memories that are there themselves).
HIDDEN = (DEPRECATED, *PATTERN_TAGS, SYNTHESIZED)


def hour_of(at_ms: int) -> int:
    """The UTC hour since the epoch a time falls in (floor, so times before 1970 too)."""
    return at_ms // HOUR_MS


def day_of(at_ms: int) -> int:
    """The UTC day since the epoch a time falls in: the brief's `day`."""
    return at_ms // DAY_MS


def resurfaceable(tags: Sequence[str], importance: int) -> bool:
    """Worth re-reading some day: important (or canonical), and neither retired, a pattern nor a digest.
    (It is resurfaced only once it is older than RESURFACE_MIN_AGE_MS.)"""
    important = importance >= PROTECTED_IMPORTANCE or CANONICAL in tags
    return important and not any(tag in HIDDEN for tag in tags)


def pick_key(value: str) -> int:
    """A stable pseudo-random signed 64-bit number for a memory id or a day: the resurface pool is walked in this
    order from the day's key, so the pick holds all day and moves the next."""
    return int.from_bytes(hashlib.sha256(value.encode()).digest()[:8], "big", signed=True)


def day_seed(day: int) -> int:
    return pick_key(f"resurface-day-{day}")
