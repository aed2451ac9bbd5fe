"""A reranker call that timed out and runs on never makes a later recall wait for it."""

import threading
import time

from second_brain.app.recall.config import RecallConfig
from second_brain.app.recall.rerank import RerankStage
from second_brain.ports.reranker import Reranker

RANKED = [("a", 1.0), ("b", 0.95), ("c", 0.9), ("d", 0.5)]
CONTENTS = {"a": "alpha", "b": "beta", "c": "gamma", "d": "delta"}
RERANKED = ["c", "a", "b", "d"]  # what the model's verdict makes of RANKED
FAST = RecallConfig(rerank_mode="on", rerank_timeout_ms=100)
PATIENT = RecallConfig(rerank_mode="on", rerank_timeout_ms=5_000)


class Hanging(Reranker):
    """The first `stuck` calls hang until `release` is set; the others answer at once, putting "gamma" first."""

    model_id = "hanging"

    def __init__(self, stuck: int) -> None:
        self.stuck, self.calls, self.lock = stuck, 0, threading.Lock()
        self.release = threading.Event()

    def rerank(self, query, passages):
        with self.lock:
            self.calls += 1
            hang = self.calls <= self.stuck
        if hang:
            self.release.wait(30)
        return [9.0 if p == "gamma" else 1.0 for p in passages]


def order(stage: RerankStage, config: RecallConfig = PATIENT) -> list[str]:
    return [key for key, _ in stage.apply("q", ["q"], RANKED, CONTENTS, config)]


def test_a_recall_after_a_timeout_gets_the_model_at_once():
    model = Hanging(stuck=1)
    stage = RerankStage(model)
    try:
        assert order(stage, FAST) == ["a", "b", "c", "d"]  # timed out: the order as it came
        started = time.monotonic()
        assert order(stage) == RERANKED  # not queued behind the call still hanging
        assert time.monotonic() - started < 2.5 and model.calls == 2  # far below the patient 5 s
    finally:
        model.release.set()


def test_with_every_slot_held_by_a_hanging_call_a_recall_keeps_its_order_without_waiting():
    model = Hanging(stuck=2)
    stage = RerankStage(model, max_calls=2)
    try:
        for _ in range(2):
            assert order(stage, FAST) == ["a", "b", "c", "d"]
        started = time.monotonic()
        assert order(stage) == ["a", "b", "c", "d"]  # would otherwise wait the patient 5 s
        assert time.monotonic() - started < 2.5 and model.calls == 2  # far below the patient 5 s
    finally:
        model.release.set()
    deadline = time.monotonic() + 10
    while (result := order(stage)) != RERANKED and time.monotonic() < deadline:  # the slots come back
        time.sleep(0.01)
    assert result == RERANKED
