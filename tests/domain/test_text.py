"""Hashtag and tag rules, including the reference's weaknesses we fix (URLs, code, whitespace)."""

import itertools

import pytest

from second_brain.domain.errors import InvalidInput
from second_brain.domain.text import (
    LETTERS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    extract_hashtags,
    is_topic_tag,
    normalize_tags,
    one_edit,
)


@pytest.mark.parametrize(
    ("content", "text", "tags"),
    [
        ("Deploy on Friday #Work", "Deploy on Friday", ["work"]),
        ("#idea build a #long-tag-name thing", "build a thing", ["idea", "long-tag-name"]),
        ("PR #4821 merged", "PR #4821 merged", []),
        ("See https://example.com/docs#install for setup", "See https://example.com/docs#install for setup", []),
        ("See www.example.com/#faq", "See www.example.com/#faq", []),
        ("Use `#define X` here", "Use `#define X` here", []),
        ("```c\n#include <stdio.h>\n```\n#c", "```c\n#include <stdio.h>\n```", ["c"]),
        ("a#b is not a tag", "a#b is not a tag", []),
        ("line one #x\n\n  indented line", "line one\n\n  indented line", ["x"]),
        ("#only", "#only", ["only"]),
        ("C# and F# are languages", "C# and F# are languages", []),
        ("Ünïcode #café", "Ünïcode", ["café"]),
    ],
)
def test_extract_hashtags(content, text, tags):
    assert extract_hashtags(content) == (text, tags)


def test_normalize_tags_trims_lowercases_and_dedupes():
    assert normalize_tags([" Work", "work", "", "  ", "Idea"]) == ["work", "idea"]


def test_tag_limits():
    with pytest.raises(InvalidInput, match="Too many tags"):
        normalize_tags([f"t{i}" for i in range(MAX_TAGS + 1)])
    with pytest.raises(InvalidInput, match="Tag too long"):
        normalize_tags(["x" * (MAX_TAG_CHARS + 1)])


@pytest.mark.parametrize("tag", ["kind:episodic", "status:canonical", "volatility:state", "stale:as-of",
                                 "synthesized", "rolled-up", "4821", "project:x"])
def test_bookkeeping_tags_are_not_topics(tag):
    assert not is_topic_tag(tag)


def test_plain_tags_are_topics():
    assert is_topic_tag("pricing")


def _slips(a: str, b: str) -> int:
    """Optimal string alignment distance: drops, additions, replacements and swaps of neighbours."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def test_one_edit_makes_every_single_slip_and_nothing_else():
    near = one_edit("flor")
    assert {"for", "flo", "floor", "flour", "flro", "lfor", "flow"} <= near
    assert all(_slips("flor", word) == 1 for word in near)
    # Every word over a small alphabet one slip away is made (the alphabet holds the word's letters and one more).
    words = {"".join(p) for n in (3, 4, 5) for p in itertools.product("florx", repeat=n)}
    assert {w for w in words if _slips("flor", w) == 1} == {w for w in near if set(w) <= set("florx")}
    assert one_edit("a") == set(LETTERS) - {"a"} | {a + b for a in LETTERS for b in "a"} | {"a" + b for b in LETTERS}
