"""The read side: entries, lists, counts, tags, stats and the keyword recall, always scoped to the caller."""

import re
from dataclasses import dataclass, replace
from typing import Any

from ..domain.errors import NotFound
from ..domain.events import memory_stream
from ..ports.clock import Clock
from ..ports.event_store import EventStore
from ..ports.read_model import Filters, ReadModel
from .memories import Context
from .snippets import Budget, allowance, snippet
from .views import entry_view, full_entry_view

TAG_SYNTAX = re.compile(r"(?<!\S)tag:(\S+)", re.IGNORECASE)
EDGE_PUNCTUATION = "\"'“”‘’()[]{}<>,;:!?"
# Words that carry no topic of their own; dropped while anything else is left in the query.
STOPWORDS = frozenset(
    "a an and are as at be but by can could did do does for from had has have how i in is it its me my "
    "of on or our should so than that the their them then there these they this to was we were what when "
    "where which who why will with would you your about tell".split()
)


@dataclass(frozen=True)
class RecallRequest:
    query: str
    top_k: int = 5
    filters: Filters = Filters(())
    full: bool = False


@dataclass(frozen=True)
class ParsedQuery:
    terms: list[str]  # three characters or more: matched through the trigram index
    short_terms: list[str]
    tag: str | None

    @property
    def used(self) -> str:
        return " ".join([*self.terms, *self.short_terms])


def parse_query(query: str) -> ParsedQuery:
    """Take out `tag:` syntax, trim punctuation around words, drop stopwords while others remain."""
    tags = TAG_SYNTAX.findall(query)
    words = [w.strip(EDGE_PUNCTUATION).rstrip(".") for w in TAG_SYNTAX.sub(" ", query).split()]
    words = list(dict.fromkeys(w for w in words if w))
    content_words = [w for w in words if w.lower() not in STOPWORDS]
    words = content_words or words
    return ParsedQuery(
        terms=[w for w in words if len(w) >= 3],
        short_terms=[w for w in words if len(w) < 3],
        tag=tags[0].lower() if tags else None,
    )


class MemoryQueries:
    def __init__(self, read_model: ReadModel, store: EventStore, clock: Clock, grace_ms: int = 300_000) -> None:
        self.read_model = read_model
        self.store = store
        self.clock = clock
        self.grace_ms = grace_ms
        self.budget = Budget()

    def entry(self, ctx: Context, entry_id: str) -> dict[str, Any]:
        entry_id = entry_id.strip()
        row = self.read_model.get(entry_id, ctx.identity.readable)
        if row is None:
            raise NotFound(f"No entry found with ID: {entry_id}")
        return full_entry_view(row, ctx.identity, self.store.read_stream(memory_stream(entry_id)))

    def recent(self, ctx: Context, filters: Filters, limit: int) -> list[dict[str, Any]]:
        return [entry_view(row, ctx.identity) for row in self.read_model.recent(filters, limit)]

    def count(self, ctx: Context) -> int:
        return self.read_model.count(ctx.identity.readable)

    def tags(self, ctx: Context, counts: bool) -> list[Any]:
        tag_counts = self.read_model.tag_counts(ctx.identity.readable)
        return [{"tag": t.tag, "count": t.count} for t in tag_counts] if counts else [t.tag for t in tag_counts]

    def stats(self, ctx: Context) -> dict[str, Any]:
        stats = self.read_model.stats(ctx.identity.readable, self.clock.now_ms(), self.grace_ms)
        return {**stats, "vectorize_grace_ms": self.grace_ms}

    def recall(self, ctx: Context, request: RecallRequest) -> dict[str, Any]:
        """Keyword-only recall: trigram bm25, filters applied before the cut, scores normalized to 100."""
        parsed = parse_query(request.query)
        filters = request.filters
        if parsed.tag and not filters.tag:
            filters = replace(filters, tag=parsed.tag)
        hits = self.read_model.keyword_search(parsed.terms, parsed.short_terms, filters, request.top_k)
        response: dict[str, Any] = {"ok": True, "query_used": parsed.used, "results": []}
        top = max((h.score for h in hits), default=0.0)
        terms = [*parsed.terms, *parsed.short_terms]
        for index, hit in enumerate(hits):
            normalized = hit.score / top if top > 0 else 1.0
            limit = allowance(index, normalized, self.budget)
            content, truncated = (hit.entry.content, False) if request.full else snippet(hit.entry.content, limit, terms)
            view = entry_view(hit.entry, ctx.identity)
            response["results"].append({
                "id": hit.entry.id, "content": content, "truncated": truncated,
                "full_length": len(hit.entry.content), "score": round(normalized * 100, 1),
                "tags": view["tags"], "source": hit.entry.source, "created_at": hit.entry.created_at,
                "updated": False, "hop": 0, "workspace": view["workspace"], "actor_name": view["actor_name"],
                "via_provenance": None, "via_type": None, "linked_at": None, "related_to": None,
            })
        response["insight"] = None
        # This build has no vector side yet: every answer is keyword matches only, and says so.
        response["semantic_unavailable"] = True
        if not hits:
            response["message"] = (
                "Nothing found matching that query. Semantic search is unavailable (no embedder is configured), "
                "so only exact-word matches were searched."
            )
        return response
