"""GET /brief: what the brain has been doing, in one answer, read from kept counts (a fixed number of reads at
any size: no model, no vectors, no walk over the memories)."""

from typing import Any, Protocol

from ...domain import brief as rules
from ...domain import text
from ...domain.staleness import STALE_TAG
from ...ports.clock import Clock
from ...ports.read_model import BriefReads, EntryReads, StatsReads
from ...ports.vector_index import VectorIndex
from ..handling import Context


class BriefSources(BriefReads, EntryReads, StatsReads, Protocol):
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
        old = self.read_model.resurface(scope, today * rules.DAY_MS - rules.RESURFACE_MIN_AGE_MS,
                                        rules.day_seed(today))
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
