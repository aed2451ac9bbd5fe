"""Semantic compression as pure functions: which memories a digest may roll up, the digest's text when no model
writes it (every number, date and name of the sources kept), and the events of one digest across streams."""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from . import text
from .capture import Change
from .classification import classify
from .events import DigestComposed, MemoryCaptured, MemoryClassified, MemoryRolledUp, memory_stream
from .memory import Memory, digest_eligible

# The reference took the 50 newest. A digest and its roll-ups are one atomic append, and so is forgetting one of
# its sources (the source, the digest and the patterns drawn from it erased, every other source released): 30
# keeps both inside one DynamoDB transaction (100 items, counting a version check per stream) with room to spare.
MAX_SOURCES = 30
COOLDOWN_MS = 24 * 3600 * 1000  # no second digest of a tag in a workspace within a day of the last
MODEL_SOURCE_CHARS = 400  # of each source, in the model's prompt
SOURCE = text.SYSTEM_SOURCE
REFUSED = "Could not create digest — tag may have fewer than 10 eligible entries or was recently compressed"

SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")  # 1,200.50 · 2025-03-14 · 3/14 · 10:30 · v1.9's 1.9
WORD = re.compile(r"[^\W\d_][\w'’-]*")
# Capitalised only because a sentence starts with them: not names.
COMMON = frozenset({"a", "an", "and", "as", "at", "but", "by", "for", "from", "he", "her", "his", "i", "if", "in",
                    "it", "its", "my", "no", "not", "of", "on", "or", "our", "she", "so", "that", "the", "their",
                    "then", "there", "these", "they", "this", "those", "to", "we", "what", "when", "where", "which",
                    "who", "why", "you", "your", "also", "after", "before"})
REPEAT_COVERAGE = 0.8  # a sentence whose words another kept sentence already holds (and no new fact) is a repeat
COMPARED = 200  # kept sentences a new one is compared with: bounded work for long sources


@dataclass(frozen=True)
class Scope:
    """What one digest compresses: a tag, or a project (its tag and aliases), in one workspace."""

    workspace: str
    match: tuple[str, ...]  # a memory with any of these tags belongs
    label: str  # the tag, or the project's slug
    project: bool = False
    actor: str | None = None  # only this author's memories: a member in a company workspace

    @property
    def tags(self) -> tuple[str, ...]:
        """The digest's own tags: it lands back inside what it summarises."""
        return (text.SYNTHESIZED, self.match[0])

    def header(self, count: int) -> str:
        where = f'in project "{self.label}"' if self.project else f'tagged "{self.label}"'
        return f"[Synthesized from {count} entries {where}]\n\n"


def sources(memories: Sequence[Memory], scope: Scope, now: int) -> list[Memory]:
    """The memories a digest may roll up, as their streams make them now: eligible, in the scope's workspace
    (and author), holding one of its tags; newest first, at most MAX_SOURCES."""
    found = [m for m in memories
             if m.exists and m.workspace == scope.workspace and (scope.actor is None or m.actor == scope.actor)
             and any(tag in m.tags for tag in scope.match) and digest_eligible(m, now)]
    return sorted(found, key=lambda m: (m.created_at, m.position), reverse=True)[:MAX_SOURCES]


def roll_up(digest_id: str, content: str, scope: Scope, rolled: Sequence[Memory]) -> list[Change]:
    """The digest's capture and each source's roll-up: one atomic append across streams, so a run killed
    halfway leaves either all of it or none."""
    judged = classify(content, scope.tags)
    digest = Change(memory_stream(digest_id), 0, scope.workspace, (
        MemoryCaptured(content, scope.tags, SOURCE, scope.workspace),
        MemoryClassified(judged.importance, "semantic", judged.volatility, False, "rules"),
        DigestComposed(tuple(m.id for m in rolled)),
    ))
    return [digest, *(Change(memory_stream(m.id), m.version, m.workspace, (MemoryRolledUp(digest_id),))
                      for m in rolled)]


def facts(content: str) -> set[str]:
    """The numbers, dates and names a text states: what a digest of it must keep."""
    found = set(NUMBER.findall(content))
    for sentence in SENTENCE_END.split(content):
        for position, word in enumerate(WORD.findall(sentence)):
            if word[0].isupper() and not (position == 0 and word.lower() in COMMON):
                found.add(word)
    return found


def missing_facts(digest: str, rolled: Sequence[Memory]) -> set[str]:
    """Facts of the sources a digest's text does not hold."""
    return {fact for m in rolled for fact in facts(m.content) if fact not in digest}


def extractive(rolled: Sequence[Memory], scope: Scope, timezone: ZoneInfo) -> str:
    """The digest without a model: the sources oldest first, each under its date, with sentences that repeat an
    earlier one left out; a sentence is left out only when every fact it states is already kept."""
    kept_keys: set[str] = set()
    kept_facts: set[str] = set()
    kept_words: list[set[str]] = []
    lines = []
    for memory in sorted(rolled, key=lambda m: (m.created_at, m.position)):
        chosen = []
        for sentence in (s.strip() for s in SENTENCE_END.split(memory.content)):
            if not sentence:
                continue
            stated, words = facts(sentence), _words(sentence)
            key = " ".join(sorted(words))
            repeated = key in kept_keys or any(_covered(words, earlier) for earlier in kept_words[-COMPARED:])
            if repeated and stated <= kept_facts:
                continue
            chosen.append(sentence)
            kept_keys.add(key)
            kept_facts |= stated
            kept_words.append(words)
        if chosen:
            day = datetime.fromtimestamp(memory.created_at / 1000, timezone).date().isoformat()
            lines.append(f"- {day}: {' '.join(chosen)}")
    return scope.header(len(rolled)) + "\n".join(lines)


def model_messages(rolled: Sequence[Memory], scope: Scope) -> list[dict[str, str]]:
    """The prompt for one paragraph over the sources (each cut to MODEL_SOURCE_CHARS), oldest first."""
    notes = "\n".join(f"- {m.content[:MODEL_SOURCE_CHARS]}" for m in sorted(rolled, key=lambda m: m.created_at))
    subject = f'the project "{scope.label}"' if scope.project else f'the tag "{scope.label}"'
    return [
        {"role": "system", "content": "You condense notes into one cohesive paragraph describing the current state "
                                      "of an area. Keep every number, date and proper name exactly as written. "
                                      "Answer with the paragraph only."},
        {"role": "user", "content": f"Notes under {subject}:\n{notes}"},
    ]


def _words(sentence: str) -> set[str]:
    return {w.lower() for w in WORD.findall(sentence) if len(w) > 2} | set(NUMBER.findall(sentence))


def _covered(words: set[str], earlier: set[str]) -> bool:
    return not words or len(words & earlier) / len(words) >= REPEAT_COVERAGE
