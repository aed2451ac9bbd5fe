"""The cross-encoder stage: the auto rule, the blend, and the promise that any failure keeps the order."""

import time

import pytest

from second_brain.app.recall.config import RecallConfig
from second_brain.app.recall.rerank import (
    RerankStage,
    blend,
    excerpt,
    has_identifier,
    should_rerank,
)

RANKED = [("a", 1.0), ("b", 0.95), ("c", 0.9), ("d", 0.5)]
CONTENTS = {"a": "alpha", "b": "beta", "c": "gamma", "d": "delta"}


@pytest.mark.parametrize("word", ["#149", "v1.9", "abc123", "err_tls_90412", "config.yaml", "10.0.0.1", "40mg/day",
                                  "t2d", "2026-09-24", "eng-1234", "pr-42", "1999-2005", "1.88.4-beta.3",
                                  "hosts/paths"])
def test_identifiers(word):
    assert has_identifier(f"what about {word}?")


@pytest.mark.parametrize("word", ["cells.", "2026", "32%", "1.5", "e.g.", "state-of-the-art", "pricing"])
def test_not_identifiers(word):
    assert not has_identifier(f"what about {word}")


def test_auto_runs_only_on_an_ambiguous_top_two_without_identifiers():
    auto = RecallConfig(rerank_mode="auto")
    assert should_rerank("pricing plans", [1.0, 0.9, 0.5], auto)
    assert not should_rerank("pricing plans", [1.0, 0.8, 0.5], auto)
    assert not should_rerank("pricing v1.9", [1.0, 0.9, 0.5], auto)
    assert not should_rerank("pricing", [1.0, 0.99], auto)  # needs three candidates
    assert should_rerank("x", [1.0, 0.1, 0.1], RecallConfig(rerank_mode="on"))
    assert not should_rerank("x", [1.0, 1.0, 1.0], RecallConfig(rerank_mode="off"))


def test_blend_reorders_the_block_and_keeps_it_above_the_rest():
    result = blend(RANKED, [0.1, 0.2, 5.0])
    assert [k for k, _ in result] == ["c", "b", "a", "d"]  # 1.0x0.25, 0.95x1, 0.9x2
    assert min(s for _, s in result[:3]) > result[3][1]
    tied = blend(RANKED[:3], [1.0, 1.0, 1.0])
    assert [k for k, _ in tied] == ["a", "b", "c"]


def test_excerpt_centres_on_the_query_words():
    text = "x" * 1000 + " the pricing decision " + "y" * 1000
    assert "pricing" in excerpt(text, ["pricing"]) and len(excerpt(text, ["pricing"])) == 400


class Scripted:
    model_id = "scripted"

    def __init__(self, scores=None, error=None, delay=0.0):
        self.scores, self.error, self.delay, self.seen = scores, error, delay, []

    def rerank(self, query, passages):
        self.seen.append((query, list(passages)))
        time.sleep(self.delay)
        if self.error:
            raise self.error
        return self.scores(passages) if callable(self.scores) else self.scores


ON = RecallConfig(rerank_mode="on", rerank_timeout_ms=200)


def test_a_working_model_reorders():
    model = Scripted(scores=[0.0, 0.0, 9.0, 0.0])
    result = RerankStage(model).apply("q", ["q"], RANKED, CONTENTS, ON)
    assert result[0][0] == "c" and model.seen == [("q", ["alpha", "beta", "gamma", "delta"])]


@pytest.mark.parametrize("model", [Scripted(error=RuntimeError("boom")), Scripted(scores=[1.0]),
                                   Scripted(scores=[0.0, 0.0, 9.0, 0.0], delay=1.0)])
def test_any_failure_or_timeout_returns_the_order_exactly(model):
    assert RerankStage(model).apply("q", ["q"], RANKED, CONTENTS, ON) == RANKED


def test_no_model_means_no_change():
    assert RerankStage(None).apply("q", ["q"], RANKED, CONTENTS, ON) == RANKED
