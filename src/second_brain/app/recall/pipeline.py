"""GET /recall: both arms, fusion, ranking signals, diversity and bounded snippets."""

import logging
import os
from collections.abc import Callable, Sequence, Set
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol
from zoneinfo import ZoneInfo

import numpy as np

from ...ports.clock import Clock
from ...ports.embedder import Embedder, is_loading, is_ready
from ...ports.read_model import Connection, EntryRow, Filters, GraphReads, KeywordHit, KeywordSearch, TermStats
from ...ports.reranker import Reranker
from ...ports.vector_index import VectorHit
from ..memories.service import Context
from ..memories.views import entry_view
from . import history, keyword, query, ranking, rerank, spelling, temporal
from .config import RecallConfig
from .rerank import RerankStage
from .snippets import Budget, allowance, snippet

log = logging.getLogger("second_brain.recall")
WEAK_ANSWER = ("Nothing strong found: these are the closest memories, but none holds the query's words or comes "
               "close to its meaning.")
UNHELD_NAMED = 3  # words nothing holds that a weak answer names
UTC = ZoneInfo("UTC")
# Where queries are embedded while the keyword arm reads: the model and SQLite both let go of the GIL, so on two
# cores a recall waits for the longer arm instead of both (one per process: its threads start on first use).
EMBEDDING = ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="query-embedding")


class RecallReads(KeywordSearch, GraphReads, Protocol):
    """What recall reads of the read model: keyword hits, entries by id, their neighbours and links."""


class RecallSearch(Protocol):
    """What the pipeline reads: the read model's (RecallReads), or the past's (app/past/recall.py PastReads)."""

    def term_stats(self, terms: Sequence[str], workspaces: Sequence[str]) -> TermStats: ...

    def keyword_search(self, terms: Sequence[str], filters: Filters, limit: int, require_all: bool = False,
                       newest_first: bool = False) -> list[KeywordHit]: ...

    def scan_search(self, terms: Sequence[str], filters: Filters, limit: int) -> list[KeywordHit]: ...

    def spellings(self, words: Sequence[str], workspaces: Sequence[str]) -> dict[str, dict[str, int]]: ...

    def hydrate(self, ids: Sequence[str], filters: Filters) -> dict[str, EntryRow]: ...

    def neighbours(self, entries: Sequence[EntryRow], reach: int,
                   window_ms: int) -> dict[str, list[tuple[str, int]]]: ...

    def connections(self, entry_id: str, workspaces: Sequence[str], link_type: str | None, limit: int,
                    superseded: bool = False, deprecated: bool = False) -> list[Connection]: ...


class VectorSearch(Protocol):
    """What the pipeline reads of the vectors: the VectorIndex's, or the past's (app/past/recall.py PastVectors)."""

    def search(self, query: np.ndarray, filters: Filters, limit: int) -> list[VectorHit]: ...

    def scores_for(self, query: np.ndarray, entry_ids: Sequence[str]) -> dict[str, VectorHit]: ...

    def vectors_of(self, entry_ids: Sequence[str]) -> dict[str, np.ndarray]: ...


@dataclass(frozen=True)
class RecallRequest:
    query: str
    top_k: int = 5
    filters: Filters = Filters(())
    full: bool = False
    hops: int | None = None  # None: the configured default


@dataclass(frozen=True)
class Via:
    """How a graph-expanded result was reached."""

    hop: int
    type: str
    provenance: str
    linked_at: int
    related_to: str


@dataclass
class Candidates:
    """What the two arms found, before ranking."""

    entries: dict[str, EntryRow] = field(default_factory=dict)
    keyword: dict[str, float] = field(default_factory=dict)
    dense: dict[str, float] = field(default_factory=dict)
    updated: set[str] = field(default_factory=set)
    via: dict[str, Via] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # the ranked candidates diversity chose the results from
    conflicts: dict[str, set[str]] = field(default_factory=dict)  # near-copies of a replaced memory and its winner
    strength: float = 1.0  # how strong the best result's own evidence is (ranking.strength)
    unheld: list[str] = field(default_factory=list)  # the query's words no memory in scope holds
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # read for diversity, kept for the history pass
    evidence: dict[str, float] = field(default_factory=dict)  # each picked result's own (ranking.strength)
    semantic_unavailable: bool = False
    model_loading: bool = False  # semantic_unavailable because the model is still loading


def weak_answer(unheld: Sequence[str]) -> str:
    """What a weak answer says: which of the query's words no memory holds, when some are held by none."""
    if not unheld:
        return WEAK_ANSWER
    named = ", ".join(f"'{word}'" for word in unheld[:UNHELD_NAMED])
    return f"Nothing strong found: no memory holds {named}; these are the closest memories."


class RecallService:
    def __init__(self, read_model: RecallSearch, vectors: VectorSearch | None, embedder: Embedder | None, clock: Clock,
                 config: Callable[[], RecallConfig] = RecallConfig, reranker: Reranker | None = None,
                 lexicon: Set[str] = frozenset()) -> None:
        self.read_model = read_model
        self.lexicon = frozenset(lexicon)  # words of English: never read as slips of other words (spelling.py)
        self.vectors = vectors
        self.embedder = embedder
        self.clock = clock
        self.config = config
        self.rerank = RerankStage(reranker)

    def recall(self, ctx: Context, request: RecallRequest, log: history.Streams | None = None) -> dict[str, Any]:
        """With `log`, results also name the memories a capture flagged beside them (read from their streams)."""
        config = self.config()  # read once: every setting this recall uses comes from this one read
        hops = config.default_hops if request.hops is None else request.hops
        text, filters = request.query, request.filters
        zone = ZoneInfo(config.timezone) if config.timezone else UTC
        window = None
        if filters.after is None and filters.before is None:  # "last week", "yesterday": a window, unless one is given
            window = temporal.time_window(text, self.clock.now_ms(), zone)
            if window:
                text, filters = window.query, replace(filters, after=window.after, before=window.before)
        dates = None if window else temporal.named_dates(text, zone)  # "on October 13, 2023": written then ranks up
        parsed = query.parse(dates.query if dates else text)
        # A word no readable memory holds, one slip from words some do, is searched as the likeliest of them.
        correction = spelling.correct(parsed.text, parsed.tokens,
                                      lambda words: self.read_model.spellings(words, filters.workspaces),
                                      self.lexicon)
        typed = None
        if correction:
            typed, parsed = parsed, replace(query.parse(correction.text), tags=parsed.tags)
        ranked, found = self.rank(parsed, filters, request.top_k, config, dates, typed)
        if hops > 0 and ranked:
            ranked = self._expand(ctx, ranked, found, filters, request, hops, config)
        notes = self._history(ctx, ranked, found, config, log)
        ranked = history.newer_first(ranked, found.entries, notes.conflicts_with, config.announced_reach,
                                     self._near(found, [key for key, _ in ranked[: config.announced_reach]],
                                                config.announced_cosine))
        response: dict[str, Any] = {
            "ok": True,
            "query_used": " ".join(parsed.tokens) or parsed.text,
            # What the caller typed, each misspelt word read (a time phrase or tag syntax in it stays).
            "did_you_mean": spelling.rewrite(request.query, correction.words) if correction else None,
            "results": self._render(ctx, ranked, found, parsed, request.full, config, notes),
            "insight": None,
            "semantic_unavailable": found.semantic_unavailable,
        }
        if ranked and ranking.match(found.strength) == "weak":
            response["message"] = weak_answer(found.unheld)
        if not ranked:
            response["message"] = (
                "Nothing found matching that query. The embedding model is still loading, so only exact-word "
                "matches were searched; ask again in a moment." if found.model_loading else
                "Nothing found matching that query. Semantic search is unavailable, so only exact-word matches "
                "were searched; check the server log for the embedder's error."
                if found.semantic_unavailable else "Nothing found matching that query."
            )
        return response

    def rank(self, parsed: query.ParsedQuery, filters: Filters, top_k: int, config: RecallConfig,
             dates: temporal.NamedDates | None = None,
             typed: query.ParsedQuery | None = None) -> tuple[list[tuple[str, float]], Candidates]:
        """The ordered (id, score) results and the candidates they came from. `typed`: the query as typed, when
        `parsed` reads a slip in it: the dense arm embeds both and keeps each memory's better cosine, so a wrong
        reading of a word no memory holds cannot hide what the words as typed meant."""
        found = Candidates()
        early = self._dense_early([q.text for q in (parsed, typed) if q is not None], filters, config)
        plan = self._keyword_arm(parsed, filters, config, found)
        # Who said each line, for a query that names a speaker: the keyword arm's candidates show who speaks here.
        said = {key: ranking.speaker(entry.content) for key, entry in found.entries.items()}
        speakers = ranking.named_speakers(parsed.words, said.values())
        texts = [query.without_speakers(q.text, speakers) for q in (parsed, typed) if q is not None]
        vectors = self._dense_arm(texts, filters, config, found, early)
        found.entries.update(self.read_model.hydrate([k for k in found.dense if k not in found.entries], filters))
        self._complete(found, plan, vectors, config)
        now = self.clock.now_ms()
        model_floor = self.embedder.query_floor if self.embedder else 0.0
        weight = plan.weight if plan else 0.0
        fused = ranking.fuse(found.keyword, found.dense, config, model_floor, weight)
        # Signals move a score by a bounded factor: past the best few hundred by relevance nothing reaches the top.
        contenders = sorted((k for k in fused if fused[k] > 0 and k in found.entries), key=fused.__getitem__,
                            reverse=True)[: config.rank_pool]
        said.update({key: ranking.speaker(found.entries[key].content) for key in contenders if key not in said})
        speakers |= ranking.named_speakers(parsed.words, (said[key] for key in contenders))
        # Read once each: the named date's lift and the speaker's weight serve the ranking and the embedder's guard.
        lift = {key: _dated(dates, found.entries[key], config) for key in contenders}
        voice = {key: ranking.speaker_weight(said[key], speakers, config) for key in contenders}
        own = {key: fused[key] * ranking.signal_multiplier(found.entries[key], now, parsed.tags, config) * lift[key]
               for key in contenders}
        scored = ranking.with_context(own, self._neighbours(own, config, found), config)
        scored = {key: score * voice[key] for key, score in scored.items()}
        # On a tie, what earned more on its own comes first (a neighbour lifted to its seed's score stays behind it).
        ordered = sorted(scored.items(),
                         key=lambda item: (-item[1], -own[item[0]], -found.entries[item[0]].created_at))
        if ordered:
            floor = ordered[0][1] * config.relevance_floor
            ordered = [item for item in ordered if item[1] >= floor]
        # What the meaning alone ranks best (among the lines of the speaker asked about, and written on the day
        # named) keeps its place near the top: words matched elsewhere, recency or context may step in front of it,
        # never bury it.
        under = ranking.dense_floor(found.dense, config, model_floor)
        # A memory still waiting for its vectors (just imported or captured) has no cosine: its meaning is unknown,
        # not nil, so no lead is measured against it.
        weighed = {key: found.dense[key] * voice[key] * lift[key] for key, _ in ordered if key in found.dense}
        meant = {key: cosine for key, cosine in weighed.items() if found.dense[key] > under}
        ordered = ranking.embedder_guard(ordered, meant, 0.0, config.embedder_places, config.embedder_slack)
        named = rerank.identifiers(parsed.text)

        def holds_as_many(best: str, first: str) -> bool:  # of the query's identifiers, as many as the first holds
            held = [found.entries[key].content.lower() for key in (best, first)]
            return all(word in held[0] for word in named if word in held[1])

        ordered = ranking.meaning_lead(ordered, meant, weighed, config.meaning_lead, holds_as_many)
        contents = {key: found.entries[key].content for key, _ in ordered[: config.rerank_candidates]}
        ordered = self.rerank.apply(parsed.text, parsed.tokens, ordered, contents, config)
        ordered = self._below_winners(ordered, filters, config, found)
        found.order = [key for key, _ in ordered]
        def vectors_of(keys: Sequence[str]) -> dict[str, np.ndarray]:  # kept: the history pass compares some
            if self.vectors is not None:
                found.vectors.update(self.vectors.vectors_of(keys))
            return found.vectors

        picked = ranking.in_order(ranking.mmr(ordered, vectors_of, top_k, config.mmr_lambda, config.mmr_redundancy))
        for key, _ in picked:
            held = keyword.coverage(found.entries[key].content, plan, config) if plan else 0.0
            found.evidence[key] = ranking.strength(held, found.dense.get(key), model_floor, config,
                                                   bool(found.unheld))
        if picked:
            found.strength = found.evidence[picked[0][0]]
        return picked, found

    def _near(self, found: Candidates, keys: list[str], cosine: float) -> Callable[[str, str], bool]:
        """Whether two of these memories are about one thing: their vectors' cosine is `cosine` or more. The
        vectors diversity read are used again; only a memory it did not see (one a graph hop brought) is read."""
        missing = [key for key in keys if key not in found.vectors]
        if self.vectors is not None and len(keys) > 1 and missing:
            found.vectors.update(self.vectors.vectors_of(missing))
        vectors = found.vectors
        return lambda a, b: a in vectors and b in vectors and float(vectors[a] @ vectors[b]) >= cosine

    def _below_winners(self, ordered: list[tuple[str, float]], filters: Filters, config: RecallConfig,
                       found: Candidates) -> list[tuple[str, float]]:
        """Near-copies of what a candidate replaced in a contradiction rank just below it (see history.py)."""
        winners = [key for key, _ in ordered if found.entries[key].contradiction_wins > 0][: history.WINNERS_READ]
        if not winners:
            return ordered
        pairs = history.linked(self.read_model, winners, filters.workspaces, (history.SUPERSEDES,), found.entries,
                               config.graph_fanout)
        replaced = [r for r in history.replacements(pairs) if r.winner.id in found.entries]
        return history.below_winners(ordered, found.entries, replaced, found.conflicts)

    def _history(self, ctx: Context, ranked: list[tuple[str, float]], found: Candidates, config: RecallConfig,
                 log: history.Streams | None) -> history.Notes:
        """What superseded each result and what it may conflict with: one batched read of the page's history edges,
        and the streams of the few candidates a capture flagged."""
        page = [key for key, _ in ranked]
        if not page:
            return history.Notes()
        readable = ctx.identity.readable
        pairs = history.linked(self.read_model, page, readable, history.LINKS, found.entries, config.graph_fanout)
        flags: list[history.Flag] = []
        if log is not None:
            rows = [found.entries[key] for key in dict.fromkeys([*page, *found.order])]
            flags = history.flagged(log, rows, self.clock.now_ms())
        named = ({key for flag in flags for key in (flag.newer, flag.older)} | {p.source.id for p in pairs}
                 | {p.target.id for p in pairs})
        elsewhere = [key for key in named if key not in found.entries]  # candidates are readable and current
        current = set(self.read_model.hydrate(elsewhere, Filters(readable))) if elsewhere else set()
        current |= named - set(elsewhere)
        return history.notes(page, pairs, found.conflicts, flags, current)

    def _keyword_arm(self, parsed: query.ParsedQuery, filters: Filters, config: RecallConfig,
                     found: Candidates) -> keyword.KeywordPlan | None:
        if not parsed.tokens:
            return None
        stats = self.read_model.term_stats(list(set(keyword.forms_of(parsed.tokens).values())), filters.workspaces)
        plan = keyword.plan(parsed.tokens, stats, config)
        # A word of English nothing holds is most often the question's own wording ("describe", "activity"); a
        # name or term nothing holds ("Zendesk", "orthodontist") is what it asks about, missing from the brain.
        found.unheld = [word for word in keyword.unheld(plan, stats)
                        if not spelling.of_english_family(word, self.lexicon)]
        limit = config.keyword_candidate_limit
        if plan.search_terms:
            # Ranking costs grow with matches: words that match too many memories are fetched newest first,
            # which stops at the limit, while the rare ones (together within the budget) are ranked by bm25.
            hits = []
            common = config.common_word_limit
            if plan.require_all_first:
                hits = self.read_model.keyword_search(plan.search_terms, filters, common, require_all=True,
                                                      newest_first=True)
            rare = keyword.within_budget(plan.search_terms, stats, config.fts_match_budget)
            if rare:
                hits += self.read_model.keyword_search(rare, filters, limit)
            elif not plan.require_all_first:
                rarest = min(plan.search_terms, key=lambda t: stats.df.get(t, 0))
                hits += self.read_model.keyword_search([rarest], filters, common, newest_first=True)
        else:
            hits = self.read_model.scan_search(plan.short_terms, filters, limit)
        for rank, hit in enumerate(hits):
            if hit.entry.id in found.keyword:
                continue
            score = keyword.keyword_score(hit.entry.content, plan, config)
            if score > 0:
                found.entries[hit.entry.id] = hit.entry
                found.keyword[hit.entry.id] = score + 1e-6 / (rank + 1)  # bm25 order breaks ties
        return plan

    def _dense_early(self, texts: list[str], filters: Filters,
                     config: RecallConfig) -> dict[str, Future[tuple[np.ndarray, list[VectorHit]]]]:
        """The query's texts, embedded and their nearest memories found on the embedding threads while the keyword
        arm runs: the model, SQLite and the vectors' arithmetic all let go of the GIL, so on two cores a recall waits
        for the longer arm instead of both. The meaning side may still ask for another text (a query naming a
        speaker is searched without the name): that one is embedded and searched when asked."""
        if self.embedder is None or self.vectors is None or not is_ready(self.embedder):
            return {}
        return {text: EMBEDDING.submit(self._nearest, text, filters, config.vector_pool)
                for text in dict.fromkeys(texts)}

    def _nearest(self, text: str, filters: Filters, limit: int) -> tuple[np.ndarray, list[VectorHit]]:
        """A text's vector and the memories nearest it."""
        assert self.embedder is not None and self.vectors is not None
        vector = self.embedder.embed_query(text)
        return vector, self.vectors.search(vector, filters, limit)

    def _dense_arm(self, texts: list[str], filters: Filters, config: RecallConfig, found: Candidates,
                   early: dict[str, Future[tuple[np.ndarray, list[VectorHit]]]]) -> list[np.ndarray]:
        """Each text's nearest memories; a memory near more than one keeps its best cosine. `early`: the texts
        already being embedded and searched."""
        if self.embedder is None or self.vectors is None:
            found.semantic_unavailable = True
            return []
        if not is_ready(self.embedder):  # the model is loading (a server just started), or failed to: keywords answer
            found.semantic_unavailable = True
            found.model_loading = is_loading(self.embedder)
            return []
        try:
            searched = [early[text].result() if text in early else self._nearest(text, filters, config.vector_pool)
                        for text in texts]
        except Exception:  # the keyword arm still answers
            log.exception("semantic search failed; answering from keywords only")
            found.semantic_unavailable = True
            return []
        vectors = [vector for vector, _ in searched]
        hits = [hit for _, nearest in searched for hit in nearest]
        for hit in hits:
            _keep_best(found, hit.entry_id, hit)
        return vectors

    def _complete(self, found: Candidates, plan: keyword.KeywordPlan | None, vectors: list[np.ndarray],
                  config: RecallConfig) -> None:
        """Score every candidate on both arms, so a memory found by one is not zero on the other."""
        if plan is not None:
            for key in found.dense.keys() - found.keyword.keys():
                score = keyword.keyword_score(found.entries[key].content, plan, config) if key in found.entries else 0
                if score > 0:
                    found.keyword[key] = score
        if vectors and self.vectors is not None:
            missing = list(found.keyword.keys() - found.dense.keys())
            for vector in vectors:
                for key, hit in self.vectors.scores_for(vector, missing).items():
                    _keep_best(found, key, hit)

    def _neighbours(self, own: dict[str, float], config: RecallConfig,
                    found: Candidates) -> dict[str, list[tuple[str, int]]]:
        """The memories written beside the strongest matches."""
        if config.context_weight <= 0:
            return {}
        seeds = sorted(own, key=own.__getitem__, reverse=True)[: config.context_seeds]
        return self.read_model.neighbours([found.entries[k] for k in seeds], config.context_reach,
                                          config.context_window_ms)

    def _expand(self, ctx: Context, ranked: list[tuple[str, float]], found: Candidates, filters: Filters,
                request: RecallRequest, hops: int, config: RecallConfig) -> list[tuple[str, float]]:
        """Breadth-first over links from the direct matches; a linked memory scores its seed's score times
        decay^hop times the edge weight, so a strong seed's neighbour can outrank a weak direct match."""
        scores = dict(ranked)
        frontier = [key for key, _ in ranked]
        seen = set(frontier)
        for hop in range(1, hops + 1):
            reached: list[str] = []
            for seed in frontier:
                for link in self.read_model.connections(seed, ctx.identity.readable, None, config.graph_fanout):
                    key = link.entry.id
                    if key in seen or len(seen) >= config.graph_max_nodes:
                        continue
                    seen.add(key)
                    found.entries[key] = link.entry
                    found.via[key] = Via(hop, link.type, link.provenance, link.linked_at, seed)
                    scores[key] = scores[seed] * config.graph_hop_decay * link.weight
                    reached.append(key)
            frontier = reached
        allowed = set(self.read_model.hydrate(list(found.via), filters))  # filters and exclusions hold for them too
        merged = [(k, s) for k, s in scores.items() if k not in found.via or k in allowed]
        return sorted(merged, key=lambda item: -item[1])[: request.top_k]

    def _render(self, ctx: Context, ranked: list[tuple[str, float]], found: Candidates,
                parsed: query.ParsedQuery, full: bool, config: RecallConfig,
                notes: history.Notes) -> list[dict[str, Any]]:
        budget = Budget(config.snippet_chars, config.full_match_chars, config.full_matches, config.strong_match_ratio)
        top = ranked[0][1] if ranked else 1.0
        results = []
        shown = 100.0
        for index, (key, score) in enumerate(ranked):
            entry = found.entries[key]
            via = found.via.get(key)
            normalized = score / top if top > 0 else 1.0
            limit = allowance(index, normalized, budget)
            # Its rank's share of the best, times its own evidence; never above the result before it.
            evidence = found.evidence.get(key, found.strength)  # a linked memory (hops) has none of its own
            normalized *= evidence
            shown = min(shown, round(normalized * 100, 1))
            content, truncated = (entry.content, False) if full else snippet(entry.content, limit, parsed.tokens)
            view = entry_view(entry, ctx.identity)
            results.append({
                "id": entry.id, "content": content, "truncated": truncated, "full_length": len(entry.content),
                "score": shown, "match": ranking.match(evidence), "tags": view["tags"], "source": entry.source,
                "created_at": entry.created_at, "updated": key in found.updated,
                "hop": via.hop if via else 0, "workspace": view["workspace"], "actor_name": view["actor_name"],
                "via_provenance": via.provenance if via else None, "via_type": via.type if via else None,
                "linked_at": via.linked_at if via else None, "related_to": via.related_to if via else None,
                "superseded_by": notes.superseded_by.get(key), "conflicts_with": notes.conflicts_with.get(key, []),
                # Ours: the review items (GET /conflicts) that settle what it conflicts with.
                "review": notes.review.get(key, []),
            })
        return results


def _dated(dates: temporal.NamedDates | None, entry: EntryRow, config: RecallConfig) -> float:
    """The lift of a memory written in, or naming, a period the query names ("in October")."""
    return config.named_date_boost if dates and dates.match(entry.content, entry.created_at) else 1.0


def _keep_best(found: Candidates, key: str, hit: VectorHit) -> None:
    if key not in found.dense or hit.score > found.dense[key]:
        found.dense[key] = hit.score
        if hit.is_update:
            found.updated.add(key)
        else:
            found.updated.discard(key)
