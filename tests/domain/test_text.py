"""Hashtag and tag rules, including the reference's weaknesses we fix (URLs, code, whitespace)."""

import pytest

from second_brain.domain.errors import InvalidInput
from second_brain.domain.text import (
    MAX_TAG_CHARS,
    MAX_TAGS,
    extract_hashtags,
    is_topic_tag,
    normalize_tags,
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
