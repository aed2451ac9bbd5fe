"""Each recall stage on its own: query parsing, keyword planning, fusion, signals, context, diversity."""

import random
import re

import numpy as np
import pytest

from second_brain.app.recall import keyword, query, ranking
from second_brain.app.recall.config import RecallConfig
from second_brain.ports.read_model import EntryRow, TermStats

CONFIG = RecallConfig()
DAY = 86_400_000
NOW = 1_800_000_000_000


def entry(tags=(), importance=0, wins=0, losses=0, age_days=0.0, recall_count=0, use_count=0) -> EntryRow:
    created = NOW - int(age_days * DAY)
    return EntryRow("id", "text", tuple(tags), "api", "ws", "owner", created, created, importance_score=importance,
                    recall_count=recall_count, use_count=use_count, contradiction_wins=wins,
                    contradiction_losses=losses)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("What is ERR_TLS_90412?", ["err_tls_90412"]),
        ("where is DATABASE_URL set", ["database_url", "set"]),
        ("changes in v1.9", ["changes", "v1.9"]),
        ("who fixed #149", ["fixed", "#149"]),
        ("open config.yaml.", ["open", "config.yaml"]),
        ("SB-024の決定", ["sb-024", "決定"]),
        ("会議室はどこですか", ["会議室", "どこ"]),
        ("the user wants to know about pricing", ["pricing"]),
        ("tell me about Kubernetes", ["kubernetes"]),
        ("help", ["help"]),
        ("what is it", ["what", "is", "it"]),
        ("Caroline's garden", ["caroline", "garden"]),
        ("io scheduler on k8", ["io", "scheduler", "k8"]),
    ],
)
def test_tokens(text, tokens):
    assert query.parse(text).tokens == tokens


def test_tag_syntax_and_hashtags_become_query_tags():
    parsed = query.parse("tag:Work pricing #Finance floor")
    assert parsed.tags == ["work", "finance"] and parsed.text == "pricing #Finance floor"


@pytest.mark.parametrize(("word", "form"), [("adopting", "adopt"), ("researched", "research"), ("paints", "paint"),
                                            ("parties", "part"), ("quickly", "quick"), ("go", "go"), ("cats", "cats"),
                                            ("err_tls", "err_tls"), ("決定", "決定")])
def test_stem(word, form):
    assert keyword.stem(word) == form


def test_plan_drops_saturated_words_and_keeps_the_rarest():
    stats = TermStats(total=1000, df={"meet": 600, "budget": 40, "quartz": 2, "ledger": 9, "note": 100})
    plan = keyword.plan(["meetings", "budget", "quartz", "ledger", "notes"], stats, RecallConfig(max_query_terms=3))
    assert plan.forms["meetings"] == "meet"  # words are searched by their stems
    assert plan.search_terms == ["budget", "quartz", "ledger"]  # rarest three, in query order; "meet" saturates
    assert plan.idf["quartz"] > plan.idf["budget"] > plan.idf["meet"]
    assert not plan.require_all_first


def test_plan_keeps_saturated_words_when_nothing_else_is_left_and_ranks_all_words_first_when_costly():
    stats = TermStats(total=10_000, df={"team": 6000, "update": 5000})
    plan = keyword.plan(["team", "update"], stats, CONFIG)
    assert plan.search_terms == ["team", "update"] and plan.require_all_first
    assert keyword.within_budget(plan.search_terms, stats, 2000) == []
    assert keyword.within_budget(plan.search_terms, stats, 5500) == ["update"]


def test_words_absent_from_the_index_are_not_searched():
    plan = keyword.plan(["zyzzyva", "budget"], TermStats(100, {"budget": 3}), CONFIG)
    assert plan.search_terms == ["budget"]


@pytest.mark.parametrize(
    ("content", "form", "expected"),
    [("We adopt it", "adopt", 2.0), ("Adoption papers", "adopt", 2.0), ("a concatenated cat", "cat", 2.0),
     ("concatenate", "cat", 0.5), ("nothing here", "cat", 0.0)],
)
def test_term_weight(content, form, expected):
    assert keyword.term_weight(content.lower(), form, 2.0, CONFIG) == expected


def test_term_weight_finds_word_starts_as_the_regex_does():
    """The hot loop's str.find scan answers what `(?<!\\w)form` would, on text of every kind of character."""
    rng = random.Random(7)
    alphabet = "ab _-.1é中ß\u0301'"
    for _ in range(5000):
        lowered = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        form = "".join(rng.choice("ab1é") for _ in range(rng.randint(1, 2)))
        expected = 0.0 if form not in lowered else 2.0 if re.search(rf"(?<!\w){re.escape(form)}", lowered) else 0.5
        assert keyword.term_weight(lowered, form, 2.0, CONFIG) == expected, (lowered, form)


def test_fusion_normalises_each_arm_so_neither_swamps_the_other():
    fused = ranking.fuse({"a": 800.0, "b": 400.0}, {"b": 0.9, "c": 0.9},
                         RecallConfig(keyword_sharpness=1.0, dense_weight=0.3))
    assert fused["a"] == pytest.approx(0.7)
    assert fused["b"] == pytest.approx(0.35 + 0.3)
    assert fused["c"] == pytest.approx(0.3)
    assert ranking.fuse({}, {"x": 0.25}, CONFIG) == {"x": 0.0}  # under the dense floor: no evidence


def test_an_exact_match_of_the_words_outranks_the_closest_meaning_alone():
    """A memory holding the query's identifier but not yet embedded must not tie with a look-alike found by
    meaning only (END-2-7-END against END-2-8-END)."""
    fused = ranking.fuse({"exact": 3.0}, {"look-alike": 0.95}, CONFIG)
    assert fused["exact"] > fused["look-alike"]


def test_a_field_of_weak_cosines_is_not_stretched_to_full_weight():
    weak = ranking.fuse({}, {"a": 0.35, "b": 0.32}, CONFIG)  # 0.05 over the floor: a quarter of dense_scale_min
    assert weak["a"] == pytest.approx(CONFIG.dense_weight * 0.05 / 0.2)
    strong = ranking.fuse({}, {"a": 0.8, "b": 0.55}, CONFIG)
    assert strong["a"] == pytest.approx(CONFIG.dense_weight)


def test_recency_decays_towards_a_floor_that_depends_on_the_memory():
    assert ranking.recency(entry(age_days=0), NOW, CONFIG) == pytest.approx(1.0)
    assert ranking.recency(entry(age_days=3650), NOW, CONFIG) == pytest.approx(0.6)
    assert ranking.recency(entry(["status:canonical"], age_days=3650), NOW, CONFIG) == pytest.approx(0.9)
    assert ranking.recency(entry(importance=4, age_days=3650), NOW, CONFIG) == pytest.approx(0.9)
    assert ranking.recency(entry(["volatility:volatile"], age_days=3650), NOW, CONFIG) == pytest.approx(0.15)
    # work memories fade over 90 days, tasks over 7
    assert ranking.recency(entry(["work"], age_days=30), NOW, CONFIG) > ranking.recency(entry(age_days=30), NOW, CONFIG)
    assert ranking.recency(entry(["task"], age_days=7), NOW, CONFIG) == pytest.approx(0.15 + 0.85 * np.exp(-1))


def test_importance_and_contradiction_history():
    assert ranking.importance(entry(), CONFIG) == 1.0
    assert ranking.importance(entry(importance=5), CONFIG) == pytest.approx(1.2)
    assert ranking.importance(entry(importance=1), CONFIG) == pytest.approx(0.88)
    assert ranking.importance(entry(wins=2), CONFIG) > ranking.importance(entry(importance=3), CONFIG)
    assert ranking.importance(entry(losses=2), CONFIG) < ranking.importance(entry(importance=3), CONFIG)


def test_tag_boost_is_capped():
    assert ranking.tag_boost(entry(["a", "b"]), ["a", "b"], CONFIG) == pytest.approx(1.3)
    assert ranking.tag_boost(entry([f"t{i}" for i in range(9)]), [f"t{i}" for i in range(9)], CONFIG) == 1.5


def test_use_can_undo_decay_but_never_exceed_one_and_being_returned_is_not_use():
    assert ranking.signal_multiplier(entry(use_count=50), NOW, [], CONFIG) == 1.0
    assert ranking.signal_multiplier(entry(age_days=365, use_count=3), NOW, [], CONFIG) > \
        ranking.signal_multiplier(entry(age_days=365), NOW, [], CONFIG)
    assert ranking.signal_multiplier(entry(age_days=365, recall_count=30), NOW, [], CONFIG) == \
        ranking.signal_multiplier(entry(age_days=365), NOW, [], CONFIG)
    assert ranking.signal_multiplier(entry(["rolled-up"]), NOW, [], CONFIG) == pytest.approx(0.4)


def test_context_gives_relevant_neighbours_a_share_of_the_strongest_seed():
    scores = {"q": 1.0, "other": 0.2, "answer": 0.1, "far": 0.05}
    near = {"q": [("answer", 1), ("far", 2), ("unrelated", 1)], "other": [("answer", 1)]}
    result = ranking.with_context(scores, near, RecallConfig(context_weight=0.5))
    assert result == pytest.approx({"q": 1.0, "other": 0.2, "answer": 0.6, "far": 0.3})  # "unrelated" stays out


def test_context_never_lifts_a_neighbour_above_the_memory_it_borrows_from():
    scores = {"exact": 0.7, "look-alike": 0.65}
    result = ranking.with_context(scores, {"exact": [("look-alike", 1)]}, RecallConfig(context_weight=0.5))
    assert result == pytest.approx({"exact": 0.7, "look-alike": 0.7})  # level at most; the pipeline's tie-break
    # puts what earned more on its own first


@pytest.mark.parametrize(
    ("content", "who"),
    [("Melanie: I painted that lake sunrise", "melanie"), ("Dr. Ortiz: take two a day", "dr ortiz"),
     ("assistant: run make test", "assistant"), ("  Jean-Luc: engage", "jean-luc"),
     ("We met at 10:30 about pricing", None), ("see https://example.com for the spec", None),
     ("The plan for Q3: ship it", None), ("Melanie:no space after the colon", None),
     ("INC-2310: calendar push failing", None)],  # a label with digits is not a name
)
def test_a_conversation_line_names_its_speaker(content, who):
    assert ranking.speaker(content) == who


def test_the_speakers_a_query_names_are_those_of_the_lines_it_ranks():
    lines = [ranking.speaker(text) for text in ("Melanie: I painted a sunrise", "Caroline: Thanks, Melanie!",
                                                 "Melanie: the lake again", "Caroline: Lovely.",
                                                 "Sunrise at the lake, a note")]
    assert ranking.named_speakers(query.parse("What did Melanie paint?").words, lines) == {"melanie"}
    assert ranking.named_speakers(query.parse("paintings of sunrises").words, lines) == set()
    assert ranking.named_speakers(query.parse("Did Caroline and Melanie paint?").words, lines) == {"caroline",
                                                                                                   "melanie"}


def test_the_label_of_one_note_is_no_speaker():
    """ "Pricing decision: …" heads one note: a query saying "pricing decision" is about it, and must keep its words
    for the meaning side."""
    lines = [ranking.speaker(text) for text in ("Pricing decision: per-technician pricing at $39",
                                                 "Melanie: I painted a sunrise", "Melanie: the lake again")]
    assert ranking.named_speakers(query.parse("pricing decision").words, lines) == set()
    assert ranking.named_speakers(query.parse("what did Melanie paint").words, lines) == {"melanie"}


def test_lines_by_someone_the_query_does_not_name_weigh_less():
    config = RecallConfig(other_speaker_weight=0.6)
    by_melanie, by_caroline = ranking.speaker("Melanie: I painted it"), ranking.speaker("Caroline: Thanks, Melanie!")
    prose = ranking.speaker("Melanie paints sunrises")
    assert ranking.speaker_weight(by_melanie, {"melanie"}, config) == 1.0
    assert ranking.speaker_weight(by_caroline, {"melanie"}, config) == 0.6
    assert ranking.speaker_weight(prose, {"melanie"}, config) == 1.0  # not a conversation line
    assert ranking.speaker_weight(by_caroline, set(), config) == 1.0  # the query names no speaker


@pytest.mark.parametrize(
    ("text", "speakers", "meant"),
    [("What did Melanie paint?", {"melanie"}, "What did they paint?"),
     ("What do Melanie's kids like?", {"melanie"}, "What do they kids like?"),
     ("Did Dr. Ortiz prescribe it", {"dr ortiz"}, "Did they prescribe it"),
     ("Melanieland trip", {"melanie"}, "Melanieland trip"), ("no names here", set(), "no names here"),
     ("Melanie?", {"melanie"}, "Melanie?"), ("tell me about Melanie", {"melanie"}, "tell me about Melanie")],
)
def test_the_meaning_side_searches_what_was_said_not_who_said_it(text, speakers, meant):
    assert query.without_speakers(text, speakers) == meant


def test_mmr_pushes_down_near_repeats_only():
    vectors = {"a": np.array([1.0, 0.0]), "a2": np.array([0.999, 0.0447]), "b": np.array([0.6, 0.8])}
    ranked = [("a", 1.0), ("a2", 0.99), ("b", 0.9)]
    asked = []

    def vectors_of(keys):
        asked.append(list(keys))
        return {key: vectors[key] for key in keys if key in vectors}

    assert [k for k, _ in ranking.mmr(ranked, vectors_of, 3, 0.7, 0.7)] == ["a", "b", "a2"]
    assert [k for k, _ in ranking.mmr(ranked, vectors_of, 3, 1.0, 0.8)] == ["a", "a2", "b"]
    assert asked == [["a", "a2", "b"]] * 2  # every candidate's vector asked for at once
    assert ranking.mmr(ranked, lambda _: {}, 2, 0.7, 0.8) == ranked[:2]  # keyword-only: no penalty


def test_the_embedders_best_stay_within_their_slack():
    fused = [("a", 1.0), ("b", 0.9), ("c", 0.8), ("d", 0.7), ("e", 0.6), ("g", 0.5)]
    meant = {"g": 0.5, "e": 0.45, "a": 0.3}  # by cosine alone: g, e, a
    assert ranking.embedder_guard(fused, meant, 0.2, 2, 1) == [
        ("a", 1.0), ("g", 0.9), ("e", 0.9), ("b", 0.9), ("c", 0.8), ("d", 0.7)]
    assert [k for k, _ in ranking.embedder_guard(fused, meant, 0.2, 2, 0)][:2] == ["g", "e"]
    assert ranking.embedder_guard(fused, meant, 0.2, 0, 1) == fused  # off
    assert ranking.embedder_guard(fused, meant, 0.6, 2, 1) == fused  # nothing clears the floor: nothing guarded
    already = [("g", 1.0), ("e", 0.9), ("a", 0.8)]
    assert ranking.embedder_guard(already, meant, 0.2, 2, 1) == already


def test_a_clear_lead_in_meaning_puts_the_embedders_best_first():
    fused = [("a", 1.0), ("b", 0.9), ("g", 0.8)]
    meant = {"g": 0.5, "b": 0.48}  # by cosine alone: g first
    assert ranking.meaning_lead(fused, meant, {"a": 0.44}, 0.05) == [("g", 1.0), ("a", 1.0), ("b", 0.9)]
    assert ranking.meaning_lead(fused, meant, {"a": 0.46}, 0.05) == fused  # a near tie: the fused order stands
    assert ranking.meaning_lead(fused, meant, {}, 1.0) == fused  # off
    assert ranking.meaning_lead(fused, {}, {}, 0.05) == fused  # nothing clears the floor: nothing to lead


def test_an_identifier_only_the_first_holds_keeps_it_first_whatever_the_meaning():
    fused = [("exact", 1.0), ("alike", 0.9)]
    meant = {"alike": 0.6}
    holds = {"exact": "bulk END-2-13-END lorem ipsum", "alike": "bulk END-2-0-END"}
    named = ["end-2-13-end"]

    def may_pass(best, first):
        return all(word in holds[best].lower() for word in named if word in holds[first].lower())

    assert ranking.meaning_lead(fused, meant, {"exact": 0.3}, 0.05, may_pass) == fused
    holds["alike"] = "bulk END-2-13-END too"  # both hold it: the meaning decides between them
    assert [k for k, _ in ranking.meaning_lead(fused, meant, {"exact": 0.3}, 0.05, may_pass)] == ["alike", "exact"]
