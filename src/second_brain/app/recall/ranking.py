"""Ranking signals as small pure functions: fusion, time decay, importance, tag boost, diversity."""

import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from ...domain import text
from ...ports.read_model import EntryRow
from .config import RecallConfig

DAY_MS = 86_400_000
RELATIVE_FLOOR_POOL = 10  # candidates the pool needs before its own cosines can lower the floor


def normalize(scores: dict[str, float], sharpness: float = 1.0, at_least: float = 0.0) -> dict[str, float]:
    """Scale to [0, 1] by the best score, so neither arm's units decide the mix; a power > 1 sharpens. With
    `at_least`, a best score under it is not stretched to 1: a field of weak scores stays weak."""
    best = max(max(scores.values(), default=0.0), at_least)
    return {k: (v / best) ** sharpness for k, v in scores.items()} if best > 0 else {k: 0.0 for k in scores}


def fuse(keyword: dict[str, float], dense: dict[str, float], config: RecallConfig,
         floor: float = 0.3, query_weight: float = 0.0) -> dict[str, float]:
    """Weighted sum of both arms, each normalised within the query; cosines under the floor (the configured one,
    else the embedder's `query_floor`) count zero, and the semantic side counts fully only when its best cosine
    clears the floor by `dense_scale_min`: otherwise the closest of some unrelated memories would tie with an exact
    match of the query's words (an identifier). The keyword side counts fully only for a memory holding
    `keyword_scale_min` of the query's word weight (`query_weight`, Σ idf): one common word shared out of several
    rarer ones is a hint, not a match."""
    kw = normalize(keyword, config.keyword_sharpness, config.keyword_scale_min * query_weight)
    under = dense_floor(dense, config, floor)  # once: it reads every candidate's cosine
    lifted = {k: max(0.0, v - under) for k, v in dense.items()}
    dn = normalize(lifted, config.dense_sharpness, config.dense_scale_min)
    return {
        key: config.keyword_weight * kw.get(key, 0.0) + config.dense_weight * dn.get(key, 0.0)
        for key in {*kw, *dn}
    }


def dense_floor(dense: dict[str, float], config: RecallConfig, floor: float) -> float:
    """The cosine under which a memory is no semantic evidence for this query: the model's floor, or, when no
    candidate clears it, this query's typical candidate (the pool's `dense_floor_quantile`). A meaning match the
    model scores weakly but clearly above the rest still ranks, instead of the answer coming back empty; a query
    with real matches keeps the model's floor, so its answer gains no weak neighbours."""
    floor = model_floor(floor, config)
    quantile = config.dense_floor_quantile
    # Under ten candidates a tenth of them is at most one: the quantile would only say which of a few is best.
    if quantile is None or len(dense) < RELATIVE_FLOOR_POOL or max(dense.values()) > floor:
        return floor
    return min(floor, float(np.quantile(np.fromiter(dense.values(), float), quantile)))


def model_floor(floor: float, config: RecallConfig) -> float:
    """The cosine floor in force: the configured `dense_floor`, else the embedder's own."""
    return floor if config.dense_floor is None else config.dense_floor


def strength(coverage: float, cosine: float | None, floor: float, config: RecallConfig,
             unheld: bool = False) -> float:
    """How strong a result's own evidence is, 0-1: the share of the query's words it holds, or how far its
    cosine clears the model's floor against `dense_scale_min` (the same measure of a weak field fusion uses).
    Scores are shown relative to the best result, scaled by this: a nearest memory that only the relative floor let
    through (a query about nothing the brain holds) says it is weak instead of showing 100. With `unheld` (the
    query names something no memory holds: a word found in none), every result is scaled by `unheld_share`: it
    answers the rest of the query at best ("the Zendesk trial" where only other trials are written down)."""
    floor = model_floor(floor, config)
    meaning = min(1.0, max(0.0, cosine - floor) / config.dense_scale_min) if cosine is not None else 0.0
    return max(coverage, meaning) * (config.unheld_share if unheld else 1.0)


def embedder_guard(ordered: Sequence[tuple[str, float]], dense: Mapping[str, float], under: float, places: int,
                   slack: int) -> list[tuple[str, float]]:
    """The fused order, with the embedder's own best `places` candidates (by cosine, those above the floor in force)
    each kept within `slack` places of where the embedder alone ranks it: words matched elsewhere, recency or a
    named date may put a result in front of the embedder's best, never bury it. A kept candidate takes the score of
    the one it steps in front of, so scores still fall down the list."""
    present = {key for key, _ in ordered}
    best = heapq.nlargest(max(0, places), (k for k in dense if k in present and dense[k] > under),
                          key=dense.__getitem__)
    if not best:
        return list(ordered)
    deadline = {key: rank + slack for rank, key in enumerate(best)}  # 0-based: the last place each may take
    out: list[tuple[str, float]] = []
    placed: set[str] = set()
    upcoming = (item for item in ordered)  # the fused order, each taken once
    following: tuple[str, float] | None = None
    while deadline:  # at most places + slack rounds: the rest keep their order untouched
        if following is None or following[0] in placed:
            following = next((item for item in upcoming if item[0] not in placed), None)
        due = [key for key, last in deadline.items() if last <= len(out)]
        if due or following is None:  # the one due soonest, in front of the next of the fused order, at its score
            key = min(due or deadline, key=deadline.__getitem__)
            own = next(score for k, score in ordered if k == key)
            out.append((key, max(own, following[1]) if following else own))
        else:
            out.append(following)
        placed.add(out[-1][0])
        deadline.pop(out[-1][0], None)
    return out + [item for item in ordered if item[0] not in placed]


def meaning_lead(ordered: Sequence[tuple[str, float]], meant: Mapping[str, float], closeness: Mapping[str, float],
                 lead: float, may_pass: Callable[[str, str], bool] = lambda best, first: True
                 ) -> list[tuple[str, float]]:
    """The fused order, with the embedder's best (by `meant`) first when its cosine beats that of the result the
    fusion put first by `lead` or more (`closeness`: the candidates' cosines, weighed as `meant` is; a first with
    none, still waiting for its vectors, keeps its place): a clear
    difference in meaning is not overturned by words matched elsewhere or by recency. It takes the first score.
    `may_pass(best, first)`: whether the exact words allow it (an identifier the first holds and the best does
    not keeps the first in place: exact words decide there)."""
    if not ordered or not meant:
        return list(ordered)
    best = max(meant, key=meant.__getitem__)
    first = ordered[0][0]
    if (best == first or first not in closeness or meant[best] - closeness[first] < lead
            or not may_pass(best, first)):
        return list(ordered)
    return [(best, ordered[0][1]), *((key, score) for key, score in ordered if key != best)]


def match(evidence: float) -> str:
    """A result's evidence in a word: "strong" when it holds every word of the query or its cosine clears the
    model's floor by `dense_scale_min` (evidence 1), "partial" from half of that, else "weak"."""
    return "strong" if evidence >= 1.0 else "partial" if evidence >= 0.5 else "weak"


def in_order(ranked: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """Scores that never rise down the list: diversity and history move a memory below one that scored less, and
    a score shown above a higher one reads as a mistake. Each is capped at the score of the result above it."""
    shown: list[tuple[str, float]] = []
    for key, score in ranked:
        shown.append((key, min(score, shown[-1][1]) if shown else score))
    return shown


def with_context(scores: dict[str, float], neighbours: dict[str, list[tuple[str, int]]],
                 config: RecallConfig) -> dict[str, float]:
    """A relevant memory also earns a share of its strongest neighbour's score, divided by the steps between them,
    but never more than that neighbour's own score.

    A conversation's answer often sits one turn from the words that match the question. Only memories
    with some relevance of their own gain: context ranks evidence, it never adds unrelated results, and it never
    puts a look-alike written next to the exact match of an identifier above that match.
    """
    lifted: dict[str, float] = {}
    for seed, near in neighbours.items():
        for key, distance in near:
            if scores.get(key, 0.0) > 0:
                share = scores[key] + scores[seed] * config.context_weight / distance
                lifted[key] = max(lifted.get(key, 0.0), min(share, max(scores[seed], scores[key])))
    return {key: lifted.get(key, score) for key, score in scores.items()}


def recency(entry: EntryRow, now: int, config: RecallConfig) -> float:
    """floor + (1 - floor)·e^(-age/half-life): an old strong match is outranked, never buried."""
    tags = set(entry.tags)
    half_life = next((config.half_life_days[t] for t in ("task", "context", "work") if t in tags),
                     config.half_life_days["default"])
    age_days = max(0, now - entry.created_at) / DAY_MS
    floor = recency_floor(entry, config)
    return floor + (1 - floor) * math.exp(-age_days / half_life)


def recency_floor(entry: EntryRow, config: RecallConfig) -> float:
    tags = set(entry.tags)
    if text.CANONICAL in tags or entry.importance_score >= text.PROTECTED_IMPORTANCE or "volatility:durable" in tags:
        return config.recency_floor_durable
    if "volatility:volatile" in tags or "task" in tags:
        return config.recency_floor_volatile
    return config.recency_floor


def frequency(entry: EntryRow) -> float:
    """1 + ln(1 + days someone opened it). Being returned by a recall does not count: a result that promoted
    itself would outrank, on the next recall, what the query now asks for (the reference's feedback loop)."""
    return 1 + math.log1p(entry.use_count)


def importance(entry: EntryRow, config: RecallConfig) -> float:
    """0.88–1.2: importance, nudged up by contradictions won and down by contradictions lost."""
    net = entry.contradiction_wins - entry.contradiction_losses
    if entry.importance_score == 0 and net == 0:
        return 1.0
    base = entry.importance_score or 3
    shift = math.copysign(math.log1p(abs(net)), net) * config.contradiction_importance_step
    effective = min(5.0, max(1.0, base + shift))
    return 0.8 + 0.4 * effective / 5


def tag_boost(entry: EntryRow, query_tags: Sequence[str], config: RecallConfig) -> float:
    overlap = len(set(entry.tags) & set(query_tags))
    return min(config.tag_boost_max, 1 + config.tag_boost_step * overlap)


def signal_multiplier(entry: EntryRow, now: int, query_tags: Sequence[str], config: RecallConfig) -> float:
    """Everything but relevance, in one factor."""
    weight = min(1.0, recency(entry, now, config) * frequency(entry))
    weight *= importance(entry, config) * tag_boost(entry, query_tags, config)
    if "rolled-up" in entry.tags:
        weight *= config.rolled_up_weight
    return weight


# A line of a conversation begins with who said it: "Melanie: …", "Dr. Ortiz: …", "assistant: …"; a name has no
# digits ("INC-2310: …" is a label).
SPEAKER = re.compile(r"\s*([^\W\d_](?:[^\W\d_]|['’.-])*(?: [^\W\d_](?:[^\W\d_]|['’.-])*){0,2}):\s")
LINES_OF_A_SPEAKER = 2  # a label heading one note ("Pricing decision: …") is nobody speaking
NAME_WORD = re.compile(r"[^\W_](?:[\w'’-]*[^\W_])?")


def speaker(content: str) -> str | None:
    """Who a memory written as a conversation line quotes, as lowercased words; None for any other memory."""
    found = SPEAKER.match(content)
    return " ".join(NAME_WORD.findall(found.group(1).lower())) if found else None


def named_speakers(words: Sequence[str], speakers: Iterable[str | None]) -> set[str]:
    """The speakers (of these memories) that the query names: "What did Melanie paint?" names Melanie. Someone
    speaks in more than one line: the label of a single note ("Pricing decision: …") is not a speaker, and a query
    naming it ("pricing decision") is about that note, not about what someone said."""
    said = set(words)
    lines = Counter(who for who in speakers if who)
    return {who for who, count in lines.items() if count >= LINES_OF_A_SPEAKER and set(who.split()) <= said}


def speaker_weight(who: str | None, named: set[str], config: RecallConfig) -> float:
    """When the query names who spoke, a line someone else said weighs less: the question is about that person,
    and what the other side of the conversation said to them ("Thanks, Melanie!") is rarely the answer."""
    return config.other_speaker_weight if named and who is not None and who not in named else 1.0


def mmr(ranked: Sequence[tuple[str, float]], vectors_of: Callable[[Sequence[str]], Mapping[str, np.ndarray]],
        k: int, lam: float, redundancy: float = 0.0) -> list[tuple[str, float]]:
    """Maximal marginal relevance: trade a little relevance for not repeating what is already picked.

    Only similarity above `redundancy` counts against a candidate, so near-repeats are pushed down
    while memories that are merely on the same topic keep their place. `vectors_of` gives the vectors of the
    candidates that have one, asked once for all of them.
    """
    if not ranked:
        return []
    best = ranked[0][1] or 1.0
    pool = list(ranked[: max(k * 4, k)])
    known_vectors = vectors_of([key for key, _ in pool])
    vectors = [known_vectors.get(key) for key, _ in pool]
    known = np.array([v is not None for v in vectors])
    dimension = next((len(v) for v in vectors if v is not None), 1)
    matrix = np.stack([v if v is not None else np.zeros(dimension, np.float32) for v in vectors])
    similar = matrix @ matrix.T  # every pair once, instead of each pick against each candidate
    relevance = lam * np.array([score for _, score in pool]) / best
    closest = np.full(len(pool), -np.inf)  # each candidate's similarity to the nearest pick with a vector
    open_ = np.ones(len(pool), dtype=bool)
    picked: list[tuple[str, float]] = []
    while open_.any() and len(picked) < k:
        nearest = np.where(np.isfinite(closest), closest, 0.0)
        penalty = np.where(known, np.maximum(0.0, nearest - redundancy) / (1.0 - redundancy), 0.0)
        value = np.where(open_, relevance - (1 - lam) * penalty, -np.inf)
        choice = int(np.argmax(value))  # the first of equals, in ranked order
        open_[choice] = False
        picked.append(pool[choice])
        if known[choice]:
            closest = np.maximum(closest, similar[:, choice])
    return picked
