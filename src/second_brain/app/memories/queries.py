"""The read side: entries, lists, counts, tags and stats, always scoped to the caller."""

from dataclasses import replace
from typing import Any, Protocol

from ...domain import text
from ...domain.errors import NotFound
from ...domain.events import memory_stream
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.read_model import EntryReads, Filters, GraphReads, KeywordSearch, StatsReads
from ...ports.vector_index import VectorIndex
from .service import Context
from .views import entry_view, full_entry_view, referenced_ids

TOP_TAGS_SHOWN = 5
DIGEST_CANDIDATES_SHOWN = 10

class QueryReads(EntryReads, StatsReads, KeywordSearch, GraphReads, Protocol):
    """What the read side of the API reads; the answers as of a past moment (app/past/as_of.py) read recall's
    reads through it too."""


class MemoryQueries:
    def __init__(self, read_model: QueryReads, store: EventStore, vectors: VectorIndex, clock: Clock,
                 grace_ms: int = 300_000) -> None:
        self.read_model = read_model
        self.store = store
        self.vectors = vectors
        self.clock = clock
        self.grace_ms = grace_ms

    def entry(self, ctx: Context, entry_id: str) -> dict[str, Any]:
        entry_id = entry_id.strip()
        row = self.read_model.get(entry_id, ctx.identity.readable)
        if row is None:
            raise NotFound(f"No entry found with ID: {entry_id}")
        row = replace(row, indexed=self.vectors.is_indexed(entry_id))
        events = self.store.read_stream(memory_stream(entry_id))
        others = referenced_ids(events)
        unreadable = others - set(self.read_model.many([o for o in others if o], ctx.identity.readable))
        return full_entry_view(row, ctx.identity, events, unreadable)

    def recent(self, ctx: Context, filters: Filters, limit: int, order: str = "newest", offset: int = 0,
               ) -> list[dict[str, Any]]:
        return [entry_view(row, ctx.identity) for row in self.read_model.recent(filters, limit, order, offset)]

    def due(self, ctx: Context, horizon_ms: int) -> dict[str, Any]:
        """Anchored memories: overdue ones, and those coming up within the horizon."""
        now = self.clock.now_ms()
        rows = self.read_model.anchored(ctx.identity.readable, now + horizon_ms)
        overdue = [entry_view(r, ctx.identity) for r in rows if r.when_at is not None and r.when_at < now]
        upcoming = [entry_view(r, ctx.identity) for r in rows if r.when_at is not None and r.when_at >= now]
        return {"overdue": overdue, "upcoming": upcoming,
                "counts": {"overdue": len(overdue), "upcoming": len(upcoming)}}

    def loops(self, ctx: Context, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
        rows, total = self.read_model.loops(ctx.identity.readable, limit, offset)
        return [entry_view(r, ctx.identity) for r in rows], total

    def count(self, ctx: Context) -> int:
        return self.read_model.count(ctx.identity.readable)

    def tags(self, ctx: Context, counts: bool) -> list[Any]:
        tag_counts = self.read_model.tag_counts(ctx.identity.readable)
        return [{"tag": t.tag, "count": t.count} for t in tag_counts] if counts else [t.tag for t in tag_counts]

    def stats(self, ctx: Context) -> dict[str, Any]:
        now = self.clock.now_ms()
        stats = self.read_model.stats(ctx.identity.readable, now)
        topics = sorted((tc for tc in stats.tags if text.is_topic_tag(tc.tag)), key=lambda tc: (-tc.count, tc.tag))
        candidates = [tc for tc in stats.digest_candidates if text.is_topic_tag(tc.tag)][:DIGEST_CANDIDATES_SHOWN]
        return {
            "count": stats.count, "avg_importance": stats.avg_importance,
            "top_tags": [tc.tag for tc in topics[:TOP_TAGS_SHOWN]],
            "digest_candidates": [{"tag": tc.tag, "count": tc.count} for tc in candidates],
            "unclassified": stats.unclassified,
            "unvectorized": self.vectors.pending_count(now - self.grace_ms, ctx.identity.readable),
            "vectorize_grace_ms": self.grace_ms,
        }
