"""Recall's spelling step on its own: which words it reads as slips, and as what."""

import pytest

from second_brain.adapters.lexicon import english_words
from second_brain.app.recall import query
from second_brain.app.recall.spelling import correct, correctable, is_english, likeliest

ENGLISH = english_words()


def held(memories: dict[str, int]):
    """A brain holding these words (word -> how many memories hold it): what read_model.spellings answers."""
    from second_brain.domain.text import one_edit

    def spellings(words):
        return {w: {n: memories[n] for n in one_edit(w) if n in memories} for w in words
                if not any(m.startswith(w) for m in memories)}
    return spellings


def corrected(text, memories):
    return correct(text, query.parse(text).tokens, held(memories), ENGLISH)


def test_a_slip_in_every_word_is_read_as_the_words_the_brain_holds():
    fix = corrected("pricng flor", {"pricing": 3, "floor": 2, "flow": 1})
    assert fix is not None and fix.text == "pricing floor" and fix.words == {"pricng": "pricing", "flor": "floor"}


def test_the_rest_of_the_query_keeps_its_words_and_case():
    fix = corrected("What did we say about the databse, Ada?", {"database": 4})
    assert fix is not None and fix.text == "What did we say about the database, Ada?"


def test_a_word_the_brain_holds_or_begins_a_word_with_is_never_touched():
    assert corrected("adopt", {"adoption": 2, "adapt": 5}) is None
    assert corrected("flor", {"flor": 1, "floor": 9}) is None


@pytest.mark.parametrize("text", ["ERR_TLS_90412", "v1.9", "#149", "SB-024", "config.yaml", "会議室", "x9", "io"])
def test_identifiers_numbers_cjk_and_short_words_keep_their_exact_match(text):
    assert corrected(text, {"err_tls_90413": 1, "v1.8": 1, "#148": 1, "sb-025": 1, "config.yml": 1, "会議": 1,
                            "x8": 1, "in": 1, "ion": 1}) is None


@pytest.mark.parametrize(("word", "brain"), [
    ("now", {"new": 3}), ("full", {"fell": 1}), ("quit", {"quiz": 1}), ("plans", {"plants": 2}),
    ("home", {"come": 4}), ("mailing", {"sailing": 1}), ("staffing", {"stuffing": 1}),
])
def test_a_word_of_english_the_brain_does_not_hold_is_searched_as_written(word, brain):
    assert is_english(word, ENGLISH)
    assert corrected(f"romantic {word}", brain) is None


def test_slips_are_not_words_of_english():
    assert not any(is_english(w, ENGLISH) for w in ["pricng", "databse", "eamil", "chcekout", "reservatiom"])


def test_the_first_letter_is_trusted_then_the_commoner_word_wins():
    assert likeliest("wek", {"week": 1, "eek": 40}) == "week"
    assert likeliest("flor", {"floor": 2, "flow": 7}) == "flow"
    assert likeliest("flor", {"floor": 7, "flow": 2}) == "floor"


def test_another_ending_of_the_same_word_is_no_slip():
    assert likeliest("standups", {"standup": 3}) is None  # the keyword arm finds it by its stem already
    assert likeliest("gx", {}) is None


def test_the_reading_is_written_as_the_caller_wrote_the_word():
    assert corrected("Zanzibr ofsite DATABSE", {"zanzibar": 1, "offsite": 1, "database": 1}).text == \
        "Zanzibar offsite DATABASE"


def test_a_word_longer_than_any_slip_worth_reading_is_searched_as_written():
    """A word of n letters has ~54n neighbours, each n letters long: an 8,000-letter query word would mean 430,000
    strings of 8,000 characters. Past 24 letters nothing is read as a slip."""
    assert correctable("qwertyuiopasdfghjklzxcvb", ENGLISH) and not correctable("qwertyuiopasdfghjklzxcvbn", ENGLISH)
    asked = []
    assert correct("q" * 8000, ["q" * 8000], lambda words: asked.append(words) or {}, ENGLISH) is None
    assert asked == []  # the port was not even asked


def test_a_query_of_many_made_up_words_looks_up_only_the_first_few():
    words = [f"zq{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(1000)]
    asked = []
    correct(" ".join(words), words, lambda ws: asked.append(list(ws)) or {}, ENGLISH)
    assert asked == [words[:8]]


def test_a_word_of_the_family_of_an_english_word_is_english_and_a_name_is_not():
    from second_brain.adapters.lexicon import english_words
    from second_brain.app.recall.spelling import of_english_family

    words = english_words()
    assert "allergy" not in words and of_english_family("allergy", words)  # beside "allergic"
    assert of_english_family("antibiotic", words)  # beside "antibiotics"
    assert not any(of_english_family(name, words) for name in ("zendesk", "orthodontist", "gdpr", "wifi"))
