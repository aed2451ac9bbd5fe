"""The cross-encoder stage: when to call it, what it sees, and how its verdict blends in.

Whatever happens inside the model (an error, a timeout), the caller gets the order it passed in.
"""

import logging
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from ...ports.reranker import Reranker
from .config import RecallConfig

log = logging.getLogger("second_brain.rerank")

IDENTIFIER = re.compile(
    r"^#\d+$"  # issue and PR numbers
    r"|[_/]"  # snake_case, paths, units per unit
    r"|(?=.*[a-z])(?=.*\d)"  # letters with digits: v1.9, abc123, t2d, eng-1234
    r"|^\d+(?:[.-]\d+){2,}"  # dates, versions, addresses: 2026-09-24, 10.0.0.1
    r"|^\d{3,}-\d{3,}$"  # ranges of years: 1999-2005
    r"|^[a-z]{2,}\.[a-z]{2,}$",  # file names: config.yaml
    re.IGNORECASE,
)
EDGE = re.compile(r"^[^\w#]+|[^\w]+$")


def identifiers(query: str) -> list[str]:
    """The query's words that look like identifiers (lower-cased), where exact words beat any model."""
    words = (EDGE.sub("", word) for word in query.split())
    return [word.lower() for word in words if word and IDENTIFIER.search(word)]


def has_identifier(query: str) -> bool:
    """True if any word of the query looks like an identifier, where exact words beat any model."""
    return bool(identifiers(query))


def should_rerank(query: str, scores: Sequence[float], config: RecallConfig) -> bool:
    if config.rerank_mode == "off" or len(scores) < 3:
        return False
    if config.rerank_mode == "on":
        return True
    ambiguous = scores[1] >= (1 - config.rerank_ambiguity_margin) * scores[0]
    return ambiguous and not has_identifier(query)


def excerpt(content: str, terms: Sequence[str], limit: int = 400) -> str:
    """At most `limit` characters, centred on the first query word found."""
    if len(content) <= limit:
        return content
    lowered = content.lower()
    hits = [lowered.find(t) for t in terms if len(t) >= 3 and lowered.find(t) >= 0]
    start = max(0, min(hits) - limit // 4) if hits else 0
    return content[start : start + limit]


def blend(ranked: list[tuple[str, float]], model_scores: Sequence[float]) -> list[tuple[str, float]]:
    """Scale each scored candidate by its model percentile (0.25x to 2x) and keep the block above the rest."""
    n = len(model_scores)
    order = sorted(range(n), key=lambda i: (-model_scores[i], i))  # ties keep submission order
    percentile = {index: 0.5 if len(set(model_scores)) == 1 else 1 - rank / max(n - 1, 1)
                  for rank, index in enumerate(order)}
    block = [(key, score * max(0.25, 1 + (2 * percentile[i] - 1))) for i, (key, score) in enumerate(ranked[:n])]
    rest = ranked[n:]
    if rest:
        lift = rest[0][1] - min(score for _, score in block)
        if lift > 0:
            block = [(key, score + lift + 1e-9) for key, score in block]
    return sorted(block, key=lambda item: -item[1]) + list(rest)


MAX_CALLS = 2  # model calls running at once, timed-out ones included; beyond it a recall keeps its order


class RerankStage:
    def __init__(self, reranker: Reranker | None, max_calls: int = MAX_CALLS) -> None:
        self.reranker = reranker
        self.max_calls = max_calls
        # A call that timed out runs on and holds its slot until the model returns. The other slots stay free,
        # so no recall queues behind it, and when every slot is held a recall skips the model instead of waiting.
        self._slots = threading.BoundedSemaphore(max_calls)
        self._pool = ThreadPoolExecutor(max_calls, thread_name_prefix="reranker")  # starts no thread until used

    def apply(self, query: str, terms: Sequence[str], ranked: list[tuple[str, float]], contents: dict[str, str],
              config: RecallConfig) -> list[tuple[str, float]]:
        if self.reranker is None:
            return ranked
        if not should_rerank(query, [score for _, score in ranked], config):
            return ranked
        head = ranked[: config.rerank_candidates]
        passages = [excerpt(contents[key], terms) for key, _ in head]
        scores = self._score(self.reranker, query[:256], passages, config.rerank_timeout_ms)
        return ranked if scores is None else blend(ranked, scores)

    def _score(self, reranker: Reranker, query: str, passages: list[str], timeout_ms: int) -> list[float] | None:
        """The model's scores, or None if it failed, timed out or has every slot taken by calls still running."""
        if not self._slots.acquire(blocking=False):
            log.warning("reranker still busy with %d calls; keeping the order", self.max_calls)
            return None
        try:
            future = self._pool.submit(self._call, reranker, query, passages)
        except BaseException:
            self._slots.release()
            raise
        try:
            scores = future.result(timeout=timeout_ms / 1000)
            if len(scores) != len(passages):
                raise ValueError(f"reranker returned {len(scores)} scores for {len(passages)} passages")
        except FutureTimeout:
            log.warning("reranker timed out after %d ms; keeping the order", timeout_ms)
            return None
        except Exception:
            log.exception("reranker failed; keeping the order")
            return None
        return scores

    def _call(self, reranker: Reranker, query: str, passages: list[str]) -> list[float]:
        try:
            return reranker.rerank(query, passages)
        finally:
            self._slots.release()
