"""Patterns (insights) as pure functions: which memories may seed one, which neighbours recur with a seed, how a
cluster scores, when a cluster is new, and the text a pattern gets from its own members when no model writes it."""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar
from zoneinfo import ZoneInfo

from . import text
from .envelope import stored
from .events import MemoryCaptured, MemoryClassified
from .shown import shows

DAY_MS = 24 * 3600 * 1000
MIN_CHARS = 80  # shorter notes say too little to recur
NEIGHBOURS = 10  # looked at per seed
MIN_COSINE = 0.80
MIN_GAP_MS = 30 * DAY_MS  # a theme recurs: the same thing again a month or more later
NOVELTY_OVERLAP = 0.6  # a cluster sharing this share of its members with an earlier pattern is not new
MAX_MEMBERS = 8  # quoted in one pattern
EXCERPT_CHARS = 200  # of each member, in the pattern's own text
MODEL_EXCERPT_CHARS = 800
# Tags that sort memories into broad piles: sharing one says nothing about sharing a topic.
AXIS_TAGS = frozenset({"personal", "work", "task", "idea", "context", "claude-response", "codex-response"})
MACHINE_SOURCES = ("system",)  # digests and patterns: the brain's own writing
MIRRORED_SOURCES = ("notion",)  # synced in from elsewhere: that system owns them
PENDING_TAG = text.AWAITING_CONFIRMATION[0]
FIRST_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.DOTALL)


MAX_PATTERNS_PER_MEMORY = 3  # keeps the forget of any memory (which erases its patterns) one atomic append


@stored
@dataclass(frozen=True)
class MemoryDrawnInto:
    """On a member's own stream: the pattern `pattern_id` was written from its words (forgetting or unsharing it
    erases the pattern in the same append)."""

    pattern_id: str
    SCHEMA: ClassVar[int] = 1


shows(MemoryDrawnInto, "drawn_into", payload=lambda e: {"pattern_id": e.pattern_id},
      line=lambda e, other: f"drawn into the pattern {other(e.pattern_id)}")


def stream(workspace: str) -> str:
    """The workspace's record of every pattern proposed there, confirmed, dismissed or not."""
    return f"patterns-{workspace}"


@stored
@dataclass(frozen=True)
class PatternProposed:
    """The nightly patterns job proposed `pattern_id`, drawn from `members` (what novelty compares with)."""

    pattern_id: str
    members: tuple[str, ...]
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class Member:
    """What the pattern rules read of a memory (the fold's fields they need)."""

    id: str
    content: str
    tags: tuple[str, ...]
    source: str
    workspace: str
    created_at: int
    importance: int = 0
    version: int = 0  # of its stream when its text was read: the pattern is appended only if it is still there
    patterns: int = 0  # patterns already drawn from it


@dataclass(frozen=True)
class Cluster:
    seed: Member
    members: tuple[Member, ...]  # the seed and its recurring neighbours, oldest first
    score: float

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(m.id for m in self.members)


def may_seed(memory: Member) -> bool:
    """A memory patterns may be drawn from: long enough, written by a person here, not bookkeeping, not yet in
    MAX_PATTERNS_PER_MEMORY patterns."""
    source = memory.source.lower()
    return (len(memory.content) >= MIN_CHARS and source not in MACHINE_SOURCES
            and memory.patterns < MAX_PATTERNS_PER_MEMORY
            and not source.startswith(MIRRORED_SOURCES) and text.DEPRECATED not in memory.tags
            and not any(tag.lower() in text.PIPELINE_MARKERS for tag in memory.tags))


def pair_score(a: Member, b: Member, cosine: float) -> float | None:
    """How strongly two memories make a recurring theme (the reference's formula); None if they do not."""
    gap = abs(a.created_at - b.created_at)
    if cosine < MIN_COSINE or gap < MIN_GAP_MS:
        return None
    score = cosine * math.log1p(gap / DAY_MS) * (1 + 0.1 * max(a.importance, b.importance))
    if not shared_topics((a, b)):
        score *= 1.25  # the same thing found under different names says more
    if all("volatility:state" in m.tags for m in (a, b)):
        score *= 0.4  # two states of a thing that changes: more likely an update than a theme
    return score


def cluster(seed: Member, neighbours: Sequence[tuple[Member, float]]) -> Cluster | None:
    """The seed and the neighbours that recur with it, if any do."""
    scored = [(m, s) for m, cos in neighbours if m.id != seed.id and (s := pair_score(seed, m, cos)) is not None]
    if not scored:
        return None
    best = sorted(scored, key=lambda pair: -pair[1])[: MAX_MEMBERS - 1]
    members = sorted([seed, *(m for m, _ in best)], key=lambda m: (m.created_at, m.id))
    return Cluster(seed, tuple(members), sum(s for _, s in best))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def is_novel(ids: frozenset[str], earlier: Sequence[frozenset[str]]) -> bool:
    """Never a second pattern over mostly the same memories (dismissed ones count: they were answered)."""
    return all(overlap(ids, seen) < NOVELTY_OVERLAP for seen in earlier)


def shared_topics(members: Sequence[Member]) -> list[str]:
    """Topic tags every member carries (broad piles like `work` aside)."""
    common = set.intersection(*(set(m.tags) for m in members)) if members else set()
    return sorted(t for t in common if text.is_topic_tag(t) and t not in AXIS_TAGS)


def describe(found: Cluster, timezone: ZoneInfo) -> str:
    """A pattern's text without a model, all of it from the cluster: how many memories, over which dates, under
    which shared tags, and each member's own first sentence under its date."""
    members = found.members
    span = (members[-1].created_at - members[0].created_at) // DAY_MS
    topics = shared_topics(members)
    first, last = _day(members[0], timezone), _day(members[-1], timezone)
    head = (f"Recurring in {len(members)} memories over {span} days ({first} to {last})"
            + (f", tagged {', '.join(topics)}" if topics else "") + ":")
    return "\n".join([head, *(f"- {_day(m, timezone)}: {excerpt(m.content)}" for m in members)])


def _day(member: Member, timezone: ZoneInfo) -> str:
    """The date a member was written, in the brain's time zone."""
    return datetime.fromtimestamp(member.created_at / 1000, timezone).date().isoformat()


def excerpt(content: str, most: int = EXCERPT_CHARS) -> str:
    """A member's first sentence (its first `most` characters if that is longer)."""
    content = " ".join(content.split())
    match = FIRST_SENTENCE.match(content)
    first = match.group(1) if match else content
    return first if len(first) <= most else first[: most - 1].rstrip() + "…"


def model_messages(found: Cluster, timezone: ZoneInfo) -> list[dict[str, str]]:
    """The prompt for a model to name the theme these memories share, from the memories alone."""
    notes = "\n".join(f"- {_day(m, timezone)}: {m.content[:MODEL_EXCERPT_CHARS]}" for m in found.members)
    return [
        {"role": "system", "content": "These notes were written weeks or months apart and are about the same "
                                      "thing. In two or three sentences, say what keeps recurring, using only what "
                                      "the notes say (their dates, numbers and names). Answer with the sentences."},
        {"role": "user", "content": notes},
    ]


def proposal(content: str, workspace: str) -> list[object]:
    """The opening events of a proposed pattern's memory: the brain's own note, pending a person's review."""
    return [MemoryCaptured(content, (PENDING_TAG,), "system", workspace),
            MemoryClassified(3, "semantic", "", False, "rules")]
