"""The keyword arm's pure parts: which words to search on, how much each counts, how a memory scores."""

import math
import re
from dataclasses import dataclass

from ...ports.read_model import TermStats
from .config import RecallConfig


@dataclass(frozen=True)
class KeywordPlan:
    search_terms: list[str]  # what the trigram index is asked for
    short_terms: list[str]  # under three characters: scored, and searched by scan only when alone
    idf: dict[str, float]  # weight of every query word, rare words heaviest
    require_all_first: bool  # many matches: rank memories holding every word first, then any


def plan(tokens: list[str], stats: TermStats, config: RecallConfig) -> KeywordPlan:
    """Drop words too common to tell memories apart, keep the rarest, and decide how to fetch."""
    total = max(stats.total, 1)
    idf = {t: math.log(1 + total / (stats.df.get(t, 0) + 1)) for t in tokens}
    long_terms = [t for t in tokens if len(t) >= 3 and stats.df.get(t, 0) > 0]
    distinctive = [t for t in long_terms if stats.df[t] / total <= config.query_saturation_fraction]
    chosen = distinctive or long_terms
    rarest = sorted(chosen, key=lambda t: stats.df[t])[: config.max_query_terms]
    search_terms = [t for t in chosen if t in rarest]  # keep the query's own order
    over_budget = sum(stats.df[t] for t in search_terms) > config.fts_match_budget
    return KeywordPlan(
        search_terms=search_terms,
        short_terms=[t for t in tokens if len(t) < 3],
        idf=idf,
        require_all_first=over_budget and len(search_terms) > 1,
    )


def within_budget(terms: list[str], stats: TermStats, budget: int) -> list[str]:
    """The rarest terms whose match counts fit the budget (at least the rarest one)."""
    kept: list[str] = []
    spent = 0
    for term in sorted(terms, key=lambda t: stats.df.get(t, 0)):
        if kept and spent + stats.df.get(term, 0) > budget:
            break
        kept.append(term)
        spent += stats.df.get(term, 0)
    return kept


def term_weight(content: str, term: str, idf: float, substring_weight: float) -> float:
    """Full weight for a whole-word match, a share of it for a match inside a longer word, else nothing."""
    lowered = content.lower()
    if term not in lowered:
        return 0.0
    if re.search(rf"(?<!\w){re.escape(term)}(?!\w)", lowered):
        return idf
    return idf * substring_weight


def keyword_score(content: str, plan: KeywordPlan, substring_weight: float) -> float:
    """Sum of the query words' weights found in the memory."""
    return sum(term_weight(content, t, w, substring_weight) for t, w in plan.idf.items())
