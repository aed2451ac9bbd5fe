"""GET /recall: both arms, fusion, ranking signals, diversity and bounded snippets."""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...ports.clock import Clock
from ...ports.embedder import Embedder
from ...ports.read_model import EntryRow, Filters, ReadModel
from ...ports.vector_index import VectorIndex
from ..memories import Context
from ..views import entry_view
from . import keyword, query, ranking
from .config import RecallConfig
from .snippets import Budget, allowance, snippet

log = logging.getLogger("second_brain.recall")


@dataclass(frozen=True)
class RecallRequest:
    query: str
    top_k: int = 5
    filters: Filters = Filters(())
    full: bool = False


@dataclass
class Candidates:
    """What the two arms found, before ranking."""

    entries: dict[str, EntryRow] = field(default_factory=dict)
    keyword: dict[str, float] = field(default_factory=dict)
    dense: dict[str, float] = field(default_factory=dict)
    updated: set[str] = field(default_factory=set)
    semantic_unavailable: bool = False


class RecallService:
    def __init__(self, read_model: ReadModel, vectors: VectorIndex | None, embedder: Embedder | None, clock: Clock,
                 config: Callable[[], RecallConfig] = RecallConfig) -> None:
        self.read_model = read_model
        self.vectors = vectors
        self.embedder = embedder
        self.clock = clock
        self.config = config

    def recall(self, ctx: Context, request: RecallRequest) -> dict[str, Any]:
        config = self.config()
        parsed = query.parse(request.query)
        ranked, found = self.rank(parsed, request.filters, request.top_k, config)
        response: dict[str, Any] = {
            "ok": True,
            "query_used": " ".join(parsed.tokens) or parsed.text,
            "results": self._render(ctx, ranked, found, parsed, request.full, config),
            "insight": None,
            "semantic_unavailable": found.semantic_unavailable,
        }
        if not ranked:
            response["message"] = (
                "Nothing found matching that query. Semantic search is unavailable, so only exact-word matches "
                "were searched; check the server log for the embedder's error."
                if found.semantic_unavailable else "Nothing found matching that query."
            )
        return response

    def rank(self, parsed: query.ParsedQuery, filters: Filters, top_k: int, config: RecallConfig
             ) -> tuple[list[tuple[str, float]], Candidates]:
        """The ordered (id, score) results and the candidates they came from."""
        found = Candidates()
        self._keyword_arm(parsed, filters, config, found)
        self._dense_arm(parsed, filters, config, found)
        missing = [key for key in found.dense if key not in found.entries]
        found.entries.update(self.read_model.hydrate(missing, filters))
        now = self.clock.now_ms()
        fused = ranking.fuse(found.keyword, found.dense, config)
        scored = sorted(
            ((key, score * ranking.signal_multiplier(found.entries[key], now, parsed.tags, config))
             for key, score in fused.items() if key in found.entries and score > 0),
            key=lambda item: (-item[1], -found.entries[item[0]].created_at),
        )
        if scored:
            floor = scored[0][1] * config.relevance_floor
            scored = [item for item in scored if item[1] >= floor]
        vector_of = self.vectors.vector_of if self.vectors else (lambda _: None)
        return ranking.mmr(scored, vector_of, top_k, config.mmr_lambda), found

    def _keyword_arm(self, parsed: query.ParsedQuery, filters: Filters, config: RecallConfig,
                     found: Candidates) -> None:
        if not parsed.tokens:
            return
        stats = self.read_model.term_stats(parsed.tokens, filters.workspaces)
        plan = keyword.plan(parsed.tokens, stats, config)
        limit = config.keyword_candidate_limit
        if plan.search_terms:
            hits = []
            if plan.require_all_first:  # many matches: memories holding every word first, then the rarest
                hits = self.read_model.keyword_search(plan.search_terms, filters, limit, require_all=True)
            rare = keyword.within_budget(plan.search_terms, stats, config.fts_match_budget)
            hits += self.read_model.keyword_search(rare, filters, limit)
        else:
            hits = self.read_model.scan_search(plan.short_terms, filters, limit)
        for rank, hit in enumerate(hits):
            if hit.entry.id in found.keyword:
                continue
            score = keyword.keyword_score(hit.entry.content, plan, config.substring_match_weight)
            if score > 0:
                found.entries[hit.entry.id] = hit.entry
                found.keyword[hit.entry.id] = score + 1e-6 / (rank + 1)  # bm25 order breaks ties

    def _dense_arm(self, parsed: query.ParsedQuery, filters: Filters, config: RecallConfig,
                   found: Candidates) -> None:
        if self.embedder is None or self.vectors is None:
            found.semantic_unavailable = True
            return
        try:
            vector = self.embedder.embed_batch([parsed.text])[0]
            hits = self.vectors.search(vector, filters, config.vector_pool)
        except Exception:  # the keyword arm still answers
            log.exception("semantic search failed; answering from keywords only")
            found.semantic_unavailable = True
            return
        for hit in hits:
            found.dense[hit.entry_id] = hit.score
            if hit.is_update:
                found.updated.add(hit.entry_id)

    def _render(self, ctx: Context, ranked: list[tuple[str, float]], found: Candidates,
                parsed: query.ParsedQuery, full: bool, config: RecallConfig) -> list[dict[str, Any]]:
        budget = Budget(config.snippet_chars, config.full_match_chars, config.full_matches, config.strong_match_ratio)
        top = ranked[0][1] if ranked else 1.0
        results = []
        for index, (key, score) in enumerate(ranked):
            entry = found.entries[key]
            normalized = score / top if top > 0 else 1.0
            limit = allowance(index, normalized, budget)
            content, truncated = (entry.content, False) if full else snippet(entry.content, limit, parsed.tokens)
            view = entry_view(entry, ctx.identity)
            results.append({
                "id": entry.id, "content": content, "truncated": truncated, "full_length": len(entry.content),
                "score": round(normalized * 100, 1), "tags": view["tags"], "source": entry.source,
                "created_at": entry.created_at, "updated": key in found.updated, "hop": 0,
                "workspace": view["workspace"], "actor_name": view["actor_name"],
                "via_provenance": None, "via_type": None, "linked_at": None, "related_to": None,
            })
        return results
