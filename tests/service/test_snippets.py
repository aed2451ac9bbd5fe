"""Snippet budgets: strong leading results get room, long notes keep their newest update."""

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
    assert truncated and text.startswith("Original decision.") and text.endswith("[Update Feb 3, 2026]: the newest fact")
    assert len(text) <= 400 + 10


def test_without_updates_the_tail_is_the_window_holding_the_query_words():
    note = "Filler sentence here. " * 100 + "The rollback plan uses blue green deploys. " + "More filler. " * 50
    text, truncated = snippet(note, 400, ["rollback", "green"])
    assert truncated and "rollback plan" in text
