"""Fusion that cannot bury what the meaning finds (issue 61): words matched in other memories may step in front of
the embedder's best few results, never push them out of sight."""

from dataclasses import replace

import numpy as np
import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app.recall.config import RecallConfig
from second_brain.app.recall.pipeline import RecallRequest
from second_brain.ports.read_model import Filters
from tests.support.brains import sqlite_brain

WS = ("personal-owner",)
QUERY = "how much do we pay for the office"
MEANT = "Commonground coworking: 12 dedicated desks at $450 a desk each month"
WORDY = [f"Office party {n}: who will pay for the pizza, and the office plants" for n in range(5)]


class MeaningEmbedder(FakeEmbedder):
    """The query and the coworking note point the same way; the notes sharing the query's words point elsewhere."""

    def embed_batch(self, texts):
        out = super().embed_batch(texts)  # any other text: hashed words, as the fake embedder does
        for row, text in enumerate(texts):
            if text in (QUERY, MEANT, *WORDY):
                out[row] = 0.0
            if text in (QUERY, MEANT):
                out[row, 0] = 1.0 if text == QUERY else 0.9
                out[row, 1] = 0.0 if text == QUERY else 0.436
            elif text in WORDY:
                out[row, 2 + WORDY.index(text)] = 1.0
                out[row, 0] = 0.05
            out[row] /= np.linalg.norm(out[row])
        return out


@pytest.fixture
def brain(tmp_path, clock):
    brain = sqlite_brain(tmp_path, clock, MeaningEmbedder())
    yield brain
    brain.close()


def seed(brain, ctx) -> None:
    """The coworking note, the notes sharing the query's words, and twenty unrelated ones."""
    for note in [MEANT, *WORDY, *(f"Unrelated note number {n} about gardening" for n in range(20))]:
        brain.memories.capture(ctx, note, [], "api")
    brain.indexer.run_once(100)


def ranked(brain, ctx, config):
    brain.recall.config = lambda: config
    answer = brain.recall.recall(ctx, RecallRequest(QUERY, 6, Filters(WS)))
    return [r["content"] for r in answer["results"]], [r["score"] for r in answer["results"]]


def test_the_embedders_best_keeps_a_place_near_the_top(brain, ctx):
    seed(brain, ctx)
    unguarded, _ = ranked(brain, ctx, replace(RecallConfig(), embedder_places=0, meaning_lead=1.0))
    assert unguarded.index(MEANT) >= 2  # the notes holding the words come first, as fused
    guarded, scores = ranked(brain, ctx, replace(RecallConfig(), meaning_lead=1.0))
    assert guarded.index(MEANT) == 1  # within one place of the embedder's own first
    assert scores == sorted(scores, reverse=True)  # and the scores still fall down the list


def test_a_clear_lead_in_meaning_is_not_overturned_by_words_matched_elsewhere(brain, ctx):
    seed(brain, ctx)
    led, scores = ranked(brain, ctx, RecallConfig())
    assert led[0] == MEANT and scores == sorted(scores, reverse=True)


def test_a_memory_still_waiting_for_its_vectors_is_not_passed_by_a_lead_it_cannot_answer(brain, ctx):
    """Right after an import, a note holding the query's rare word has no vector yet: its meaning is unknown, not
    nil, so a note only near in meaning (the coworking note, weak on the words) must not pass it (it did: the
    lead read the waiting note's cosine as 0, and put a weak result above the strong one)."""
    seed(brain, ctx)
    waiting = "Zygomorphic orchids: how much do we pay for the office plants"
    brain.memories.capture(ctx, waiting, [], "api")  # not indexed: the background indexer has not got to it
    assert brain.indexer.index.pending_count() == 1
    brain.recall.config = RecallConfig
    answer = brain.recall.recall(ctx, RecallRequest(QUERY + " zygomorphic", 6, Filters(WS)))
    assert answer["results"][0]["content"] == waiting
    assert answer["results"][0]["match"] == "strong"


def test_each_result_says_how_strong_its_evidence_is(brain, ctx):
    seed(brain, ctx)
    brain.recall.config = RecallConfig
    answer = brain.recall.recall(ctx, RecallRequest(QUERY, 8, Filters(WS)))
    by_content = {r["content"]: r for r in answer["results"]}
    assert by_content[MEANT]["match"] == "strong"  # its cosine clears the floor by the full margin
    assert all(by_content[note]["match"] == "strong" for note in WORDY if note in by_content)  # every word held
    assert "message" not in answer
    scores = [r["score"] for r in answer["results"]]
    assert scores == sorted(scores, reverse=True) and scores[0] == 100.0


def test_an_answer_about_nothing_the_brain_holds_says_it_is_weak(brain, ctx):
    for n in range(20):
        brain.memories.capture(ctx, f"Unrelated note number {n} about gardening", [], "api")
    brain.indexer.run_once(100)
    brain.recall.config = RecallConfig
    answer = brain.recall.recall(ctx, RecallRequest("zebra xylophone quantum", 5, Filters(WS)))
    # The closest memory is still shown (the floor drops to the pool's best), labelled weak, and the answer says so.
    assert answer["results"] and answer["message"].startswith("Nothing strong found")
    assert all(r["match"] == "weak" and r["score"] < 50 for r in answer["results"])


def test_a_query_naming_what_no_memory_holds_is_answered_weakly_and_says_which_word(brain, ctx):
    """"did we sign up for the Zendesk trial" in a brain that never mentions Zendesk: the notes holding the other
    words are the closest, never a strong or partial answer, and the message names the word nothing holds."""
    for note in WORDY:  # the office-party notes, nothing else
        brain.memories.capture(ctx, note, [], "api")
    brain.indexer.run_once(100)
    brain.recall.config = RecallConfig
    answer = brain.recall.recall(ctx, RecallRequest("zendesk office pizza", 5, Filters(WS)))
    assert answer["results"][0]["content"] in WORDY  # two of its three words: the closest there is
    assert all(r["match"] == "weak" for r in answer["results"])
    assert answer["message"].startswith("Nothing strong found") and "'zendesk'" in answer["message"]
    held = brain.recall.recall(ctx, RecallRequest("office pizza", 5, Filters(WS)))  # every word held somewhere
    assert "message" not in held and held["results"][0]["match"] == "strong"
