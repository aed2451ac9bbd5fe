"""GET /brief: what the brain has been doing, in one answer, read from kept counts (a fixed number of reads at
any size: no model, no walk over the memories; the memory to re-read is checked against the few memories nearest
it, so that it is never one a newer memory replaced)."""

from collections.abc import Sequence
from typing import Any, Protocol

from ...domain import brief as rules
from ...domain import links, text
from ...domain.staleness import STALE_TAG
from ...ports.clock import Clock
from ...ports.read_model import BriefReads, EntryReads, EntryRow, Filters, HistoryReads, StatsReads
from ...ports.vector_index import VectorIndex
from ..handling import Context
from ..memories.triage import DuplicateConfig
from ..recall import history

RESURFACE_TRIES = 5  # picks passed over as outdated before the brief offers none
NEAR = 5  # the memories nearest a pick by meaning, as a capture's contradiction check takes them...
NEAR_COSINE = DuplicateConfig().candidate_threshold  # ...and as close


class BriefSources(BriefReads, EntryReads, StatsReads, HistoryReads, Protocol):
    """What the brief reads."""


class BriefService:
    def __init__(self, read_model: BriefSources, vectors: VectorIndex, clock: Clock, grace_ms: int) -> None:
        self.read_model = read_model
        self.vectors = vectors
        self.clock = clock
        self.grace_ms = grace_ms  # as /stats: a memory younger than this is not yet "unindexed"

    def brief(self, ctx: Context) -> dict[str, Any]:
        """Days are UTC days since the epoch (the spec's `day`), so the counts kept per day need no time zone."""
        now, scope = self.clock.now_ms(), ctx.identity.readable
        today = rules.day_of(now)
        first_day = today - rules.ACTIVITY_DAYS + 1
        activity = self.read_model.activity(scope, now - rules.WINDOW_HOURS * rules.HOUR_MS, first_day,
                                            today - rules.TOPIC_DAYS + 1, now)
        patterns = self.read_model.newest_tagged(rules.PATTERN_TAGS, scope, rules.PATTERNS_SHOWN)
        # Old enough by the start of today, so the pool, and the pick, only move with the day (or an edit).
        old = self._resurface(scope, today * rules.DAY_MS - rules.RESURFACE_MIN_AGE_MS, rules.day_seed(today))
        topics = [t for t in activity.topics if text.is_topic_tag(t.tag)][: rules.TOPICS_SHOWN]
        return {
            "ok": True,
            "window_hours": rules.WINDOW_HOURS,
            "captured": sum(s.count for s in activity.sources),
            "sources": [{"source": s.source, "count": s.count} for s in activity.sources],
            "patterns": [{"id": p.id, "content": p.content} for p in patterns],
            "resurface": {"id": old.id, "content": old.content, "created_at": old.created_at} if old else None,
            "activity": [{"day": day, "count": activity.days.get(day, 0)} for day in range(first_day, today + 1)],
            "topics": [{"tag": t.tag, "count": t.count} for t in topics],
            "total": self.read_model.count(scope),
            "attention": {
                "unindexed": self.vectors.pending_count(now - self.grace_ms, scope),
                "stale": self.read_model.tag_count(STALE_TAG, scope),  # flagged by the nightly staleness pass
                # The spec: "same count as the array above".
                "patterns": len(patterns),
            },
        }

    def _resurface(self, scope: Sequence[str], created_before: int, seed: int) -> EntryRow | None:
        """The day's pick, passing over outdated ones: worth re-reading is never what a newer memory replaced."""
        passed: list[str] = []
        for _ in range(RESURFACE_TRIES):
            pick = self.read_model.resurface(scope, created_before, seed, passed)
            if pick is None or not self._outdated(pick, scope):
                return pick
            passed.append(pick.id)
        return None

    def _outdated(self, pick: EntryRow, scope: Sequence[str]) -> bool:
        """Whether a newer memory superseded the pick, or one that the pick is a near-copy of (recall's rules,
        app/recall/history.py), among the memories near it by meaning or linked to it."""
        near = {pick.id}
        vector = self.vectors.vector_of(pick.id)
        if vector is not None:
            hits = self.vectors.search(vector, Filters(tuple(scope)), NEAR + 1)
            near.update(hit.entry_id for hit in hits if hit.score >= NEAR_COSINE)
        for pair in self.read_model.linked_pairs([pick.id], scope, tuple(links.LABELS)):
            near.update((pair.source.id, pair.target.id))
        replaced = history.replacements(self.read_model.linked_pairs(sorted(near), scope, (history.SUPERSEDES,)))
        return any(r.loser.id == pick.id or history.near_copy(pick, r) for r in replaced)
