"""Chunking: short notes are one passage, long ones overlap, every update block stands alone."""

import itertools

from second_brain.app.memories.chunking import Chunk, chunk_memory, windows


def test_a_short_note_is_one_chunk():
    assert chunk_memory("short note") == [Chunk("short note", False)]


def test_long_text_is_cut_at_sentence_ends_with_overlap():
    text = "".join(f"Sentence number {n} is here. " for n in range(200))
    parts = windows(text, 1600, 200)
    assert all(len(p) <= 1600 for p in parts) and len(parts) > 3
    assert all(p.endswith(".") for p in parts[:-1])
    for before, after in itertools.pairwise(parts):
        assert before[-150:] in text and after.startswith(text[text.index(after):][:10])
        assert text.index(after) < text.index(before) + len(before)  # overlapping
    assert "".join(p for p in parts).count("Sentence number 199") >= 1


def test_text_without_boundaries_is_cut_hard():
    parts = windows("x" * 4000, 1600, 200)
    assert [len(p) for p in parts] == [1600, 1600, 1200]


def test_each_update_block_is_its_own_chunk():
    content = "Original.\n\n[Update Jan 2, 2026]: first\n\n[Update Feb 3, 2026]: second"
    assert chunk_memory(content) == [
        Chunk("Original.", False), Chunk("[Update Jan 2, 2026]: first", True),
        Chunk("[Update Feb 3, 2026]: second", True)]
