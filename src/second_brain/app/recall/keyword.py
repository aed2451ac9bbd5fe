"""The keyword arm's pure parts: which words to search on, how much each counts, how a memory scores."""

import math
from dataclasses import dataclass

from ...domain.text import stem
from ...ports.read_model import TermStats
from .config import RecallConfig

MIN_COUNTED = 3  # a word this long is counted exactly (a shorter one's count is sampled)
RARITY_POPULATION = 10  # memories a brain needs before a word's document frequency says how rare it is


@dataclass(frozen=True)
class KeywordPlan:
    forms: dict[str, str]  # query word -> the form searched and matched (its stem)
    search_terms: list[str]  # forms the trigram index is asked for
    short_terms: list[str]  # under three characters: scored, and searched by scan only when alone
    idf: dict[str, float]  # weight of every query word's form, rare words heaviest
    require_all_first: bool  # many matches: rank memories holding every word first, then any
    weight: float = 0.0  # the query's word weight (Σ idf), once the brain is big enough for idf to mean rarity


def forms_of(tokens: list[str]) -> dict[str, str]:
    return {t: stem(t) for t in tokens}


def plan(tokens: list[str], stats: TermStats, config: RecallConfig) -> KeywordPlan:
    """Drop words too common to tell memories apart, keep the rarest, and decide how to fetch."""
    forms = forms_of(tokens)
    total = max(stats.total, 1)
    terms = list(dict.fromkeys(forms.values()))
    idf = {f: math.log(1 + total / (stats.df.get(f, 0) + 1)) for f in terms}
    long_terms = [f for f in terms if len(f) >= 3 and stats.df.get(f, 0) > 0]
    distinctive = [f for f in long_terms if stats.df[f] / total <= config.query_saturation_fraction]
    chosen = distinctive or long_terms
    rarest = sorted(chosen, key=lambda f: stats.df[f])[: config.max_query_terms]
    search_terms = [f for f in chosen if f in rarest]  # keep the query's own order
    over_budget = sum(stats.df[f] for f in search_terms) > config.fts_match_budget
    return KeywordPlan(
        forms=forms,
        search_terms=search_terms,
        short_terms=[f for f in terms if len(f) < 3],
        idf=idf,
        require_all_first=over_budget and len(search_terms) > 1,
        weight=sum(idf.values()) if stats.total >= RARITY_POPULATION else 0.0,
    )


def unheld(plan: KeywordPlan, stats: TermStats) -> list[str]:
    """The query's words (three letters or more) that no memory in scope holds, even inside a longer word: what the
    query names that the brain has never been told about (counts of shorter words are sampled, never exact)."""
    return [word for word, form in plan.forms.items() if len(form) >= MIN_COUNTED and not stats.df.get(form, 0)]


def within_budget(terms: list[str], stats: TermStats, budget: int) -> list[str]:
    """The rarest terms whose match counts together fit the budget (possibly none)."""
    kept: list[str] = []
    spent = 0
    for term in sorted(terms, key=lambda t: stats.df.get(t, 0)):
        if spent + stats.df.get(term, 0) > budget:
            break
        kept.append(term)
        spent += stats.df.get(term, 0)
    return kept


def term_weight(lowered: str, form: str, idf: float, config: RecallConfig) -> float:
    """Full weight for the word itself or a word it begins (adopt → adoption); a share for a match inside a word."""
    at = lowered.find(form)
    if at < 0:
        return 0.0
    while at >= 0:  # what `(?<!\w)form` finds, without the regex engine trying every position (recall's hot loop)
        if at == 0 or not _is_word_char(lowered[at - 1]):
            return idf
        at = lowered.find(form, at + 1)
    return idf * config.substring_match_weight


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"  # the regex \w on str


def keyword_score(content: str, plan: KeywordPlan, config: RecallConfig) -> float:
    """Sum of the query words' weights found in the memory."""
    lowered = content.lower()
    return sum(term_weight(lowered, form, weight, config) for form, weight in plan.idf.items())


def coverage(content: str, plan: KeywordPlan, config: RecallConfig) -> float:
    """The share of the query's words the memory holds, whole or inside a longer word (CJK runs have no spaces).
    Unlike the idf sum it needs no term counts, so a memory covers a query alike in any view of the brain (as_of)."""
    lowered = content.lower()
    held = sum(term_weight(lowered, form, 1.0, config) > 0 for form in plan.idf)
    return held / len(plan.idf) if plan.idf else 0.0
