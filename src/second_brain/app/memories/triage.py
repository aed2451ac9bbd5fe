"""What a new note means for the memories already stored: a repeat, a near-duplicate, a contradiction,
something to merge with or to replace, or simply new. What the verdict then does (and the protections that
soften it) is decided in domain/capture.py.

Similarity only finds the candidates. MiniLM scores a contradiction ("not allergic to peanuts") as high
as a paraphrase, so nothing is blocked unless the new note adds no word to the old one, and nothing is
merged, replaced or retired unless a language model or a contradiction rule says so.
"""

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...domain import contradictions
from ...domain.capture import STORE, Action, Verdict
from ...domain.classification import Classification
from ...domain.errors import LanguageModelUnavailable
from ...ports.llm import LanguageModel
from ...ports.read_model import EntryReads, EntryRow, Filters
from ...ports.vector_index import VectorIndex

log = logging.getLogger("second_brain.triage")

SAMPLE_WHOLE_CHARS = 1500
SAMPLE_PART_CHARS = 500
MODEL_EXCERPT_CHARS = 600


@dataclass(frozen=True)
class DuplicateConfig:
    """Thresholds on the local embedder's cosine (e5-small-v2, centred), calibrated by bench/duplicates.py."""

    block_threshold: float = 0.97  # and the new note adds no word: a repeat, not stored
    # Stored, tagged duplicate-candidate: from `flag_threshold` on, or from `restate_threshold` on when the note
    # restates a stored one (the same values, at least `restate_share` of the content words in common:
    # contradictions.restates_fact). The three were chosen by bench/duplicates.py over 191 labelled pairs
    # (tests/data/note_pairs.jsonl and the capture bench's development set): the share of repeats flagged less
    # the share of others flagged, at most 10% of others flagged. Chosen that way with each pair held out in
    # turn, the held-out pairs read: repeats 39/42 flagged, other pairs 3/134.
    flag_threshold: float = 0.95
    candidate_threshold: float = 0.45  # similar enough to be checked for a contradiction (e5: unrelated p99 0.41)
    candidates: int = 5
    restate_threshold: float = 0.57
    restate_share: float = 0.4


def duplicate_sample(content: str) -> str:
    """The text compared: the whole note up to 1,500 characters, else 500 each from start, middle and end."""
    if len(content) <= SAMPLE_WHOLE_CHARS:
        return content
    middle = len(content) // 2
    half = SAMPLE_PART_CHARS // 2
    return "\n...\n".join((content[:SAMPLE_PART_CHARS], content[middle - half : middle + half],
                           content[-SAMPLE_PART_CHARS:]))


class Triage:
    def __init__(self, read_model: EntryReads, vectors: VectorIndex, embed: Callable[[str], np.ndarray],
                 llm: LanguageModel, config: Callable[[], DuplicateConfig] = DuplicateConfig,
                 catch_up: Callable[[], object] = lambda: None,
                 prepare: Callable[[Sequence[str]], object] = lambda texts: None) -> None:
        self.read_model = read_model
        self.vectors = vectors
        self.embed = embed
        self.llm = llm
        self.config = config  # read once per capture: an admin's change applies to the next one
        self.catch_up = catch_up  # index the few memories still pending, so a note sent twice is caught
        self._prepare = prepare  # embed texts ahead, on every core (Indexer.prepare)

    def prepare(self, contents: Sequence[str]) -> None:
        """The texts of notes about to be assessed one by one, embedded ahead together (a sync's new mirrors)."""
        try:
            self._prepare([duplicate_sample(content) for content in contents])
        except Exception:  # each check embeds its own text then
            log.exception("embedding ahead failed")

    def assess(self, content: str, workspace: str) -> Verdict:
        """The verdict on a new note, before protections; any failure along the way means it is simply stored."""
        try:
            return self._assess(content, workspace)
        except Exception:  # the check is a service to the user, never a reason to lose the note
            log.exception("duplicate check skipped: the note is stored as new")
            return STORE

    def _assess(self, content: str, workspace: str) -> Verdict:
        self.catch_up()
        vector = self.embed(duplicate_sample(content))
        config = self.config()
        hits = [hit for hit in self.vectors.search(vector, Filters((workspace,)), config.candidates)
                if hit.score >= config.candidate_threshold]
        rows = self.read_model.many([hit.entry_id for hit in hits], (workspace,))  # one read, not one per hit
        similar = [(rows[hit.entry_id], hit.score) for hit in hits if hit.entry_id in rows]
        if not similar:
            return STORE
        top, top_score = similar[0]
        if (top_score >= config.block_threshold and contradictions.adds_nothing(top.content, content)
                and not contradictions.conflict(top.content, content)):
            return _verdict("block", top, top_score)
        repeat = _flag_or_store(similar, config, content)  # judged once: the rules' last word, and what the
        # model's "keep both" (or a bad merge) keeps
        return self._ask_model(content, similar, repeat) or self._apply_rules(content, similar, repeat)

    def _apply_rules(self, content: str, similar: list[tuple[EntryRow, float]], repeat: Verdict) -> Verdict:
        for row, score in similar:
            reason = contradictions.conflict(row.content, content)
            if reason:
                return _verdict("contradiction", row, score, reason)
        for row, score in similar:  # one detail changed where the subject stands, or a change announced: a person
            reason = contradictions.doubt(row.content, content) or contradictions.announced(row.content, content)
            if reason:  # decides, both notes kept
                return _verdict("doubt", row, score, reason)
        return repeat

    def _ask_model(self, content: str, similar: list[tuple[EntryRow, float]], repeat: Verdict) -> Verdict | None:
        """The model's verdict, or None when there is no model or its answer is unusable (rules decide). `repeat`:
        what the rules make of the note as a repeat (a flag, or simply stored)."""
        by_id = {row.id: (row, score) for row, score in similar}
        flagged = repeat.action == "flag"  # a repeat: merge, replace or keep both
        messages = verdict_messages(content, [row for row, _ in similar], full=flagged)
        try:
            answer = parse_json(self.llm.complete(messages, max_tokens=600 if flagged else 120))
        except LanguageModelUnavailable:
            return None
        if answer is None:
            log.warning("the language model's verdict was not JSON; the rules decide")
            return None
        if not flagged:
            target = by_id.get(str(answer.get("conflicting_id", "")))
            if answer.get("contradicts") is True and target:
                if not _about_one_subject(target[0].content, content):
                    return _verdict("doubt", *target, reason=OVERRULED)
                return _verdict("contradiction", *target, reason=_reason(answer))
            return STORE if answer.get("contradicts") is False else None
        action = answer.get("action")
        target = by_id.get(str(answer.get("target_id", "")))
        if action in ("contradiction", "replace", "merge") and target:
            merged = str(answer.get("merged_content") or "")
            if action == "merge" and not keeps_everything(merged, target[0].content, content):
                log.warning("the merged note the model wrote drops facts; both notes are kept")
                return repeat
            if action != "merge" and not _about_one_subject(target[0].content, content):
                return _verdict("doubt", *target, reason=OVERRULED)
            return _verdict(action, *target, reason=_reason(answer), merged=merged.strip())
        if action == "keep_both":
            return repeat
        return None


OVERRULED = ("The language model judged it a change, but the notes differ in more than one place: both are kept "
             "for you to review.")


def _about_one_subject(stored: str, content: str) -> bool:
    """Whether the model's verdict that would retire or overwrite `stored` passes the rules' test: the notes are
    about one subject (or the rules themselves see the contradiction). Else both notes are kept."""
    if contradictions.one_subject(stored, content) or contradictions.conflict(stored, content):
        return True
    log.warning("the language model's verdict would retire a note about another subject; both notes are kept")
    return False


def _flag_or_store(similar: list[tuple[EntryRow, float]], config: DuplicateConfig, content: str) -> Verdict:
    """A flag beside the closest memory when the note is that close to it, or says again what one of them says
    (worded otherwise: `restate_threshold`); else the note is simply stored."""
    top, score = similar[0]
    if score >= config.flag_threshold:
        return _verdict("flag", top, score)
    for row, score in similar:
        if score >= config.restate_threshold and contradictions.restates_fact(row.content, content,
                                                                              config.restate_share):
            return _verdict("flag", row, score)
    return STORE


def _verdict(action: Action, row: EntryRow, score: float, reason: str = "", merged: str = "") -> Verdict:
    return Verdict(action, row.id, score, reason, merged, match_content=row.content)


def keeps_everything(merged: str, *originals: str) -> bool:
    """Whether a merged note plausibly holds both originals: every number and most of their words."""
    if not merged.strip():
        return False
    merged_words = set(contradictions.words(merged))
    for original in originals:
        words = set(contradictions.words(original))
        numbers = {w for w in words if w[:1].isdigit()}
        content = contradictions.content_words(list(words))
        if not numbers <= merged_words:
            return False
        if content and len(content & contradictions.content_words(list(merged_words))) < 0.6 * len(content):
            return False
    return True


VERDICT_SYSTEM = (
    "You keep a personal memory store tidy. You compare a new note with similar stored notes and answer "
    "with a single JSON object and nothing else."
)


def verdict_messages(content: str, stored: Sequence[EntryRow], full: bool) -> list[dict[str, str]]:
    notes = "\n".join(f"[{row.id}] {row.content[:MODEL_EXCERPT_CHARS]}" for row in stored)
    if full:
        task = (
            'Choose one action:\n- "contradiction": the new note says something incompatible with a stored note, '
            'which is now outdated;\n- "replace": the new note is a newer, complete version of a stored note;\n'
            '- "merge": they overlap and one combined note is better (write it in merged_content, keeping every '
            'fact of both);\n- "keep_both": anything else.\n'
            'Answer {"action": "...", "target_id": "<id of the stored note>", "merged_content": "...", '
            '"reason": "<one sentence>"}'
        )
    else:
        task = ('Does the new note contradict one of the stored notes? Answer '
                '{"contradicts": true or false, "conflicting_id": "<id>", "reason": "<one sentence>"}')
    return [{"role": "system", "content": VERDICT_SYSTEM},
            {"role": "user", "content": f"New note:\n{content[:2000]}\n\nStored notes:\n{notes}\n\n{task}"}]


CLASSIFY_SYSTEM = "You classify notes for a personal memory store. Answer with a single JSON object and nothing else."
KIND_SYNONYMS = {"event": "episodic", "decision": "episodic", "milestone": "episodic", "episodic": "episodic",
                 "fact": "semantic", "preference": "semantic", "knowledge": "semantic", "belief": "semantic",
                 "semantic": "semantic"}


def classify_with_model(llm: LanguageModel, content: str,
                        fallback: Classification) -> tuple[Classification, bool] | None:
    """The model's importance and kind (the rules' volatility kept), and whether it calls the note canonical."""
    messages = [{"role": "system", "content": CLASSIFY_SYSTEM}, {"role": "user", "content": (
        f"Note:\n{content[:500]}\n\nAnswer {{\"importance\": 1-5, \"canonical\": true if it is a confirmed, "
        f"authoritative fact, \"kind\": \"episodic\" (something that happened) or \"semantic\" (a lasting fact)}}")}]
    try:
        answer = parse_json(llm.complete(messages, max_tokens=80))
    except LanguageModelUnavailable:
        return None
    if answer is None:
        return None
    importance = answer.get("importance")
    kind = KIND_SYNONYMS.get(str(answer.get("kind", "")).lower())
    if not isinstance(importance, int) or isinstance(importance, bool) or not 1 <= importance <= 5 or kind is None:
        return None
    return Classification(importance, kind, fallback.volatility), answer.get("canonical") is True


JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_json(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's answer (models like to wrap it in prose or code fences), or None."""
    match = JSON_OBJECT.search(text or "")
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _reason(answer: dict[str, Any]) -> str:
    return str(answer.get("reason") or "The new note supersedes the older one.")[:500]
