"""Recall by meaning alone (issue 42), on the real SQLite brain with an embedder whose cosines are written down: a weak
but clearly best meaning match still answers and says it is weak, and the scores shown read in order."""

from dataclasses import replace

import numpy as np
import pytest

from second_brain.app.recall import ranking
from second_brain.app.recall.config import RecallConfig
from second_brain.app.recall.pipeline import RecallRequest
from second_brain.ports.read_model import Filters
from tests.support.brains import sqlite_brain

WS = ("personal-owner",)
DIMENSION = 32
FREE = DIMENSION - 1  # the axis no note uses: a query's cosine to every note is what the table says
APART = 11 * 60_000  # notes written further apart than episodic context reaches


def axis(index: int) -> np.ndarray:
    vector = np.zeros(DIMENSION, np.float32)
    vector[index] = 1.0
    return vector


def towards(cosines: dict[int, float]) -> np.ndarray:
    """A unit query vector with the given cosine to each note's axis and the rest of its length on the free axis."""
    vector = np.zeros(DIMENSION, np.float32)
    for index, cosine in cosines.items():
        vector[index] = cosine
    vector[FREE] = np.sqrt(max(0.0, 1.0 - float(vector @ vector)))
    return vector


# Twelve notes, each on its own axis (no two alike), then the queries: none shares a word with any note.
NOTES = ["Booked the dentist for Thursday morning", "Swapped the winter tyres at the garage",
         "Quarterly invoices filed in the blue binder", "Sourdough starter needs feeding twice daily",
         "Renewed the passport at the consulate", "Printer on floor three jams on glossy paper",
         "Lena prefers tea over coffee in meetings", "Kept the receipts for the conference hotel",
         "The ficus by the window lost half its leaves", "Gym membership lapses in April",
         "Chess club meets on Wednesdays", "Backups rotate every Sunday night"]
ROWS = {f"{i}": axis(i) for i in range(len(NOTES))}
TABLE = {note: axis(i) for i, note in enumerate(NOTES)}
# The dentist note is the best match, but under e5's floor (0.2): weak, yet well above every other note.
TABLE["health visits soon"] = towards({0: 0.15, **{i: 0.03 for i in range(1, len(NOTES))}})
# Two near-copies (cosine 0.85 to each other: repetition to diversity, not yet a duplicate to capture) and a distinct
# note a little further from the query.
NEAR = ("Tomato seedlings moved to the greenhouse", "Tomato seedlings were moved to the greenhouse")
OTHER = "Watered the basil on the balcony"
TABLE[NEAR[0]] = axis(20)
TABLE[NEAR[1]] = (0.85 * axis(20) + np.sqrt(1 - 0.85**2) * axis(21)).astype(np.float32)
TABLE[OTHER] = axis(22)
TABLE["gardening progress"] = towards({20: 0.7, 21: 0.18, 22: 0.62})  # cosines 0.7, 0.69 and 0.62
# "figma" is in no note, and one slip from "sigma", which is: recall reads it as "sigma" (and says so), yet the note
# closest in meaning to "figma" as typed must still answer.
SLIP = ("Wireframes live in the shared design tool", "The sigma rule flags outliers in the metrics")
TABLE[SLIP[0]] = axis(23)
TABLE[SLIP[1]] = axis(24)
TABLE["figma"] = towards({23: 0.8})
TABLE["sigma"] = towards({24: 0.8})


class TableEmbedder:
    """Vectors looked up in TABLE: the test decides every cosine."""

    model_id = "table-v1"
    dimension = DIMENSION
    query_floor = 0.2  # e5-small-v2's

    def embed_batch(self, texts):
        return np.stack([TABLE[text] for text in texts]) if texts else np.zeros((0, DIMENSION), np.float32)

    def embed_query(self, text):
        return TABLE[text]


@pytest.fixture
def brain(tmp_path, clock):
    brain = sqlite_brain(tmp_path, clock, TableEmbedder())
    yield brain
    brain.close()


def capture_all(brain, ctx, clock, notes):
    ids = []
    for note in notes:
        ids.append(brain.memories.capture(ctx, note, [], "api").id)
        clock.advance(APART)
    brain.indexer.run_once(10_000)
    return ids


def ask(brain, ctx, text, config=None):
    if config is not None:
        brain.recall.config = lambda: config
    return brain.recall.recall(ctx, RecallRequest(text, 5, Filters(WS)))["results"]


def test_a_weak_but_clearly_best_meaning_match_answers_and_says_it_is_weak(brain, ctx, clock):
    ids = capture_all(brain, ctx, clock, NOTES)
    results = ask(brain, ctx, "health visits soon")
    assert [r["id"] for r in results] == [ids[0]]
    assert results[0]["score"] < 50  # under the model's floor: shown as weak, not 100
    # The guarantee is the relative floor's: with the fixed floor alone the same question finds nothing.
    assert ask(brain, ctx, "health visits soon", replace(RecallConfig(), dense_floor_quantile=None)) == []


def test_scores_shown_never_rise_down_the_list_when_diversity_reorders(brain, ctx, clock):
    first, copy, other = capture_all(brain, ctx, clock, [NEAR[0], NEAR[1], OTHER])
    results = ask(brain, ctx, "gardening progress")
    assert [r["id"] for r in results] == [first, other, copy]  # the near-copy goes below the distinct note
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True) and scores[0] == 100.0


def test_the_relative_floor_needs_a_pool_and_never_rises_above_the_models():
    config = RecallConfig()
    few = {"a": 0.15, "b": 0.03}
    assert ranking.dense_floor(few, config, 0.2) == 0.2  # two candidates say nothing about this query's typical one
    many = {f"n{i}": 0.03 for i in range(11)} | {"best": 0.15}
    assert ranking.dense_floor(many, config, 0.2) == pytest.approx(0.03)
    assert ranking.dense_floor({f"n{i}": 0.5 for i in range(12)}, config, 0.2) == 0.2


def test_one_common_word_of_several_does_not_outrank_a_strong_meaning_match():
    """"family celebration weekend": a chore note holding "weekend" (idf 1 of the query's 6) against a birthday note
    sharing no word but close in meaning."""
    fused = ranking.fuse({"weekend-chore": 1.0}, {"birthday": 0.6, "weekend-chore": 0.1}, RecallConfig(), 0.2, 6.0)
    assert fused["birthday"] > fused["weekend-chore"]
    # Without the rule the lone word counts as a full match and wins.
    fused = ranking.fuse({"weekend-chore": 1.0}, {"birthday": 0.6, "weekend-chore": 0.1},
                         RecallConfig(keyword_scale_min=0.0), 0.2, 6.0)
    assert fused["weekend-chore"] > fused["birthday"]


def test_a_word_read_as_a_slip_cannot_hide_what_the_word_as_typed_means(brain, ctx, clock):
    design, sigma = capture_all(brain, ctx, clock, list(SLIP))
    answer = brain.recall.recall(ctx, RecallRequest("figma", 5, Filters(WS)))
    assert answer["did_you_mean"] == "sigma" and answer["query_used"] == "sigma"
    assert {r["id"] for r in answer["results"]} == {design, sigma}
