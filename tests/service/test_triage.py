"""Triage with fakes of its ports: any failure of the duplicate check means the note is simply stored."""

from zoneinfo import ZoneInfo

import numpy as np
import pytest

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.adapters.llm.none import NoLanguageModel
from second_brain.app.memories.service import MemoryService
from second_brain.app.memories.triage import DuplicateConfig, Triage
from second_brain.domain.capture import STORE, Verdict
from second_brain.domain.errors import ConcurrencyConflict, StoreUnavailable
from second_brain.ports.read_model import EntryRow, ReadModel
from second_brain.ports.vector_index import VectorHit, VectorIndex

WS = "personal-owner"
STORED = EntryRow("old", "The pricing floor is $6k", ("pricing",), "api", WS, "owner", 1, 1)


class OneRow(ReadModel):
    def get(self, entry_id, workspaces):
        return STORED if entry_id == STORED.id else None

    def many(self, entry_ids, workspaces):
        return {STORED.id: STORED} if STORED.id in entry_ids else {}


class OneHit(VectorIndex):
    def search(self, query, filters, limit):
        return [VectorHit(STORED.id, 0.99, False)]


class Down:
    """Whatever is asked of it, the backend is unreachable."""

    def __call__(self, *args, **kwargs):
        raise StoreUnavailable("the backend is down")


class DownReadModel(ReadModel):
    get = Down()
    many = Down()


class DownVectors(VectorIndex):
    search = Down()


def embed(text: str) -> np.ndarray:
    return np.ones(4, dtype=np.float32) / 2


def triage(**broken) -> Triage:
    ports = dict(read_model=OneRow(), vectors=OneHit(), embed=embed, llm=NoLanguageModel(), config=DuplicateConfig,
                 catch_up=lambda: None)
    return Triage(**(ports | broken))


def test_a_repeat_is_blocked_when_every_port_answers():
    verdict = triage().assess(STORED.content, WS)
    assert (verdict.action, verdict.match_id, verdict.match_content) == ("block", "old", STORED.content)


@pytest.mark.parametrize("broken", ["read_model", "vectors", "embed", "config", "catch_up"])
def test_a_failing_port_means_the_note_is_stored(broken):
    failing = {"read_model": DownReadModel(), "vectors": DownVectors()}.get(broken, Down())
    assert triage(**{broken: failing}).assess(STORED.content, WS) == STORE


def test_a_capture_survives_a_failing_check(ctx, clock):
    store = InMemoryEventStore()
    memories = MemoryService(store, clock, ZoneInfo("UTC"), new_id=lambda: "new",
                             triage=triage(vectors=DownVectors()))
    outcome = memories.capture(ctx, STORED.content, [], "api")
    assert (outcome.id, outcome.verdict) == ("new", STORE)
    assert memories.load(ctx, "new")[0].content == STORED.content


class Judged(Triage):
    """A triage whose read model showed the matched memory as it was before its last append."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict

    def assess(self, content, workspace):
        return self.verdict


@pytest.mark.parametrize("action, outcome", [("block", "block"), ("flag", "flag"), ("merge", "conflict")])
def test_only_a_verdict_that_rewrites_its_match_needs_the_text_it_judged(ctx, clock, action, outcome):
    store = InMemoryEventStore()
    ids = iter(["old", "new", "newer"])
    memories = MemoryService(store, clock, ZoneInfo("UTC"), new_id=lambda: next(ids))
    memories.capture(ctx, "The pricing floor is $6k", [], "api")
    memories.append(ctx, "old", "Raised to $7k.")  # the read model the triage saw had not caught up with this
    judged = Verdict(action, "old", 0.99, merged_content="merged", match_content="The pricing floor is $6k")
    memories.triage = Judged(judged)
    if outcome == "conflict":
        with pytest.raises(ConcurrencyConflict):
            memories.capture(ctx, "The pricing floor is $6k", [], "api")
    else:
        assert memories.capture(ctx, "The pricing floor is $6k", [], "api").verdict.action == outcome


class Near(VectorIndex):
    """The stored note, found at a cosine below the flag threshold."""

    def __init__(self, score: float) -> None:
        self.score = score

    def search(self, query, filters, limit):
        return [VectorHit(STORED.id, self.score, False)]


@pytest.mark.parametrize(("content", "score", "action"), [
    ("Pricing floor: $6k", 0.80, "flag"),  # the same fact in note form, below the flag threshold: flagged
    ("The pricing floor is $7k", 0.80, "contradiction"),  # another value: the rules decide, not the repeat check
    ("Pricing floor: $6k", 0.50, "store"),  # too far to be called a repeat
    ("The pricing floor was lowered, it is $6k for agencies", 0.80, "doubt"),  # a change announced: a person decides
])
def test_a_restated_note_is_flagged_below_the_flag_threshold(content, score, action):
    verdict = triage(vectors=Near(score)).assess(content, WS)
    assert verdict.action == action and (action == "store" or verdict.match_id == STORED.id)
