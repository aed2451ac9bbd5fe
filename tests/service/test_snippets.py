"""Snippet budgets: strong leading results get room, long notes keep their newest update."""

import pytest

from second_brain.app.recall.snippets import Budget, allowance, snippet


def test_the_large_allowance_needs_both_rank_and_strength():
    budget = Budget()
    assert allowance(0, 1.0, budget) == 4000
    assert allowance(1, 0.8, budget) == 4000
    assert allowance(1, 0.5, budget) == 400  # second, but much weaker than the first
    assert allowance(2, 1.0, budget) == 400


def test_short_notes_come_back_whole():
    note = "a" * 480
    assert snippet(note, 400, []) == (note, False)  # within the allowance plus the cost of a cut


def test_long_notes_keep_a_head_and_their_latest_update():
    note = "Original decision. " * 100 + "\n\n[Update Jan 2, 2026]: old\n\n[Update Feb 3, 2026]: the newest fact"
    text, truncated = snippet(note, 400, ["decision"])
    assert truncated and text.startswith("Original decision.")
    assert text.endswith("[Update Feb 3, 2026]: the newest fact")
    assert len(text) <= 400 + 10


def test_without_updates_the_tail_is_the_window_holding_the_query_words():
    note = "Filler sentence here. " * 100 + "The rollback plan uses blue green deploys. " + "More filler. " * 50
    text, truncated = snippet(note, 400, ["rollback", "green"])
    assert truncated and "rollback plan" in text


MIDDLE = ("filler. " * 600 + "Constants: RETENTION_MS 180d and MAX_OCCURRENCES 200. " + "filler. " * 600
          + "\n\n[Update Jul 24, 2026]: An unrelated later note.")


@pytest.mark.parametrize("limit", [400, 4000])
def test_a_match_in_the_middle_beats_an_unrelated_latest_update(limit):
    text, truncated = snippet(MIDDLE, limit, ["retention_ms", "constants"])
    assert truncated and text.startswith("filler.") and "RETENTION_MS 180d" in text
    assert len(text) <= limit + 10


def test_the_window_covers_the_most_distinct_query_words():
    note = ("Filler sentence here. " * 60 + "The rollback was discussed. " + "Filler sentence here. " * 60
            + "The rollback plan uses blue green deploys. " + "More filler. " * 50)
    text, _ = snippet(note, 400, ["rollback", "green"])
    assert "rollback plan uses blue green" in text


def test_long_links_and_invisible_characters_do_not_spend_the_budget():
    url = "https://example.com/" + "a" * 60
    note = f"Read\u200b {url} first.&zwnj;\n\n\n\nThen " + "more words. " * 100
    text, _ = snippet(note, 400, [])
    assert text.startswith("Read [link] first.\n\nThen more words.")
