"""Extraction: recent captures that came without `when` are read for a time anchor or a commitment, by the model
when one is configured (its answer checked) else by the rules of `domain/extraction.py`, and the verdict is
appended to the memory's stream as the system actor (`TimeAnchorSet`, plus `TagsChanged` adding `task` for a
commitment).

Candidates come from the log, not a read model: the `MemoryCaptured` events after the job's cursor (a log
position) and within the last `WINDOW_MS`, so the search costs the same on every backend and a run resumes
exactly where the last one stopped. A memory is judged only while nobody has touched it: no anchor (set or
cleared), no edit, tag or status change, not deprecated, not forgotten, not written by the system itself nor
a machine transcript. Applying re-reads the stream and appends at the version read, so a person's edit racing
the job wins and the memory is left alone.
"""

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from typing import Any
from zoneinfo import ZoneInfo

from ...domain import commands as c
from ...domain.capture import TRANSCRIPT_SOURCES
from ...domain.errors import BrainError, LanguageModelUnavailable
from ...domain.events import (
    MemoryAppended,
    MemoryCaptured,
    MemoryRevised,
    StatusChanged,
    TagsChanged,
    TimeAnchorCleared,
    TimeAnchorSet,
    memory_of,
    memory_stream,
)
from ...domain.extraction import Anchor, find_anchor
from ...domain.memory import Memory, decide, evolve, fold
from ...ports.clock import Clock
from ...ports.event_store import EventStore, settled_pages
from ...ports.llm import LanguageModel
from ..handling import envelopes, retrying
from ..handling import system as system_context
from ..memories.triage import parse_json
from .time_anchors import parse_when

log = logging.getLogger("second_brain.extraction")
WINDOW_MS = 14 * 24 * 3600 * 1000  # "recent": older captures are not read (a first run does not judge the past)
PAGE = 500  # log events read at a time
SYSTEM_MADE = frozenset({"synthesized", "auto-pattern", "auto-insight"})
TOUCHED = (MemoryAppended, MemoryRevised, TagsChanged, StatusChanged, TimeAnchorSet, TimeAnchorCleared)
MAX_EVIDENCE = 120
EXCERPT = 160  # characters of a memory a dry run shows
EXTRACT_SYSTEM = (
    "You read one note a person wrote and find the single future time it commits them to or schedules, if any. "
    "Answer with JSON only.")


@dataclass(frozen=True)
class Judged:
    """One capture and what extraction makes of it: the anchor found (or None), and whether it would be applied."""

    memory: Memory
    captured_at: int
    anchor: Anchor | None
    reason: str = ""  # why a found anchor is not applied ("the event is already past")

    @property
    def applies(self) -> bool:
        return self.anchor is not None and not self.reason


class Extractor:
    def __init__(self, store: EventStore, clock: Clock, timezone: Callable[[], ZoneInfo],
                 llm: LanguageModel | None = None, window_ms: int = WINDOW_MS) -> None:
        self.store = store
        self.clock = clock
        self.timezone = timezone
        self.llm = llm  # None: the rules alone
        self.window_ms = window_ms

    def candidates(self, after: int, scan_limit: int | None = None) -> Iterator[tuple[int, Memory | None, int]]:
        """(log position, memory or None, capture time) for each capture after `after` within the window, in log
        order; the memory is None when it is not to be judged. Yields (position, None, 0) at the end of each page,
        so a caller can record how far it read even when a page held no capture."""
        position = max(after, self._window_start())
        cutoff = self.clock.now_ms() - self.window_ms
        scanned = 0
        pages = settled_pages(self.store, position, PAGE)  # the cursor is kept: no further than the log is settled
        while scan_limit is None or scanned < scan_limit:
            page = next(pages, [])
            for envelope in page:
                position = envelope.position
                if isinstance(envelope.event, MemoryCaptured):
                    recent = envelope.at >= cutoff  # a clock that stepped back can put an old one past the start
                    yield position, self.eligible(envelope.stream_id) if recent else None, envelope.at
            scanned += len(page)
            yield position, None, 0
            if len(page) < PAGE:
                return

    def eligible(self, stream_id: str) -> Memory | None:
        """The memory, if extraction may judge it now (see the module's docstring); else None."""
        memory_id = memory_of(stream_id)
        if memory_id is None:  # not a memory's stream
            return None
        events = self.store.read_stream(stream_id)
        state = fold(events, Memory(memory_id))
        if (not state.exists or state.when_at is not None or state.deprecated or state.actor == "system"
                or state.source in TRANSCRIPT_SOURCES or SYSTEM_MADE.intersection(state.tags)):
            return None
        if any(isinstance(e.event, TOUCHED) for e in events):
            return None
        return state

    def judge(self, memory: Memory, captured_at: int) -> Judged:
        """What the model (or, without one or after a bad answer, the rules) finds in the memory's text."""
        tz = self.timezone()
        anchor = self._ask_model(self.llm, memory.content, captured_at, tz) if self.llm else _UNANSWERED
        if anchor is _UNANSWERED:
            anchor = find_anchor(memory.content, captured_at, tz)
        reason = ""
        if isinstance(anchor, Anchor) and anchor.when_kind == "event" and anchor.when_at <= self.clock.now_ms():
            reason = "the event is already past"  # a due date that passed is still owed: it is set, overdue
        return Judged(memory, captured_at, anchor if isinstance(anchor, Anchor) else None, reason)

    def apply(self, judged: Judged) -> str:
        """Append the verdict as the system actor: "anchored", "committed", or "left" if the memory changed."""
        anchor = judged.anchor
        if anchor is None or judged.reason:
            return "none"
        memory_id = judged.memory.id
        system = system_context(judged.memory.workspace, f"extract-{memory_id}")

        def attempt() -> str:
            state = self.eligible(memory_stream(memory_id))
            if state is None:
                return "left"  # a person anchored, edited or retired it since it was judged
            events = decide(c.SetTimeAnchor(anchor.when_at, anchor.when_kind, judged.captured_at), state)
            if anchor.commitment and not {"task", "done"}.intersection(state.tags):
                after = reduce(evolve, events, state)
                events += decide(c.ChangeTags((*state.tags, "task")), after)
            self.store.append(envelopes(system, memory_stream(memory_id), state.version, events, state.workspace,
                                        self.clock.now_ms()))
            return "committed" if anchor.commitment else "anchored"

        return retrying(attempt)

    def preview(self, after: int, workspaces: Sequence[str], limit: int, scan_limit: int) -> list[Judged]:
        """The next `limit` captures in these workspaces a run from `after` would judge, judged; nothing written."""
        found: list[Judged] = []
        for _, memory, captured_at in self.candidates(after, scan_limit):
            if memory is not None and memory.workspace in workspaces:
                found.append(self.judge(memory, captured_at))
                if len(found) >= limit:
                    break
        return found

    def _window_start(self) -> int:
        """A log position before the first event of the window (the store's time index; a position it cannot
        place exactly only adds captures that `candidates` then finds too old)."""
        return self.store.cut(self.clock.now_ms() - self.window_ms - 1)

    @staticmethod
    def _ask_model(llm: LanguageModel, content: str, captured_at: int, tz: ZoneInfo) -> "Anchor | None | object":
        """The model's verdict, checked: the evidence must be words of the note and the time must parse and come
        after the note was written. `_UNANSWERED` when the model failed or answered something else."""
        written = datetime.fromtimestamp(captured_at / 1000, tz)
        messages = [{"role": "system", "content": EXTRACT_SYSTEM}, {"role": "user", "content": (
            f"Written: {written:%A %Y-%m-%d %H:%M} ({tz.key})\nNote:\n{content[:2000]}\n\n"
            "If the note names a future date or time the writer must act by or attend, answer {\"anchor\": true, "
            "\"when\": \"YYYY-MM-DDTHH:MM\" (local time), \"when_kind\": \"due\" (a deadline or commitment) or "
            "\"event\" (an appointment or meeting), \"evidence\": the exact words of the note that name the time, "
            "\"commitment\": true if the writer promises or needs to do something}. Otherwise answer "
            "{\"anchor\": false}. Past events, questions, conditions, habits, code and version numbers are no "
            "anchor.")}]
        try:
            answer = parse_json(llm.complete(messages, max_tokens=120))
        except LanguageModelUnavailable:
            return _UNANSWERED
        return _checked(answer, content, captured_at, tz)


_UNANSWERED = object()


def _checked(answer: dict[str, Any] | None, content: str, captured_at: int, tz: ZoneInfo) -> "Anchor | None | object":
    if answer is None or not isinstance(answer.get("anchor"), bool):
        return _UNANSWERED
    if answer["anchor"] is False:
        return None
    evidence, when, kind = answer.get("evidence"), answer.get("when"), answer.get("when_kind")
    commitment = answer.get("commitment", False)
    if (not isinstance(evidence, str) or not evidence.strip() or len(evidence) > MAX_EVIDENCE
            or " ".join(evidence.lower().split()) not in " ".join(content.lower().split())
            or not isinstance(when, str) or kind not in ("event", "due") or not isinstance(commitment, bool)):
        return _UNANSWERED
    try:
        when_at = parse_when(when, tz)
    except BrainError:
        return _UNANSWERED
    if when_at <= captured_at:
        return _UNANSWERED
    return Anchor(when_at, kind, " ".join(evidence.split()), commitment and kind == "due")


def verdict_view(judged: Judged, tz: ZoneInfo) -> dict[str, object]:
    """One verdict as GET /extract/dry-run shows it."""
    anchor = judged.anchor if judged.applies else None
    content = " ".join(judged.memory.content.split())
    view: dict[str, object] = {
        "id": judged.memory.id,
        "content": content if len(content) <= EXCERPT else content[: EXCERPT - 1].rstrip() + "…",
        "verdict": "none" if anchor is None else "commitment" if anchor.commitment else "anchor",
        "when": None if anchor is None else datetime.fromtimestamp(anchor.when_at / 1000, tz).isoformat(),
        "when_at": None if anchor is None else anchor.when_at,
        "when_kind": None if anchor is None else anchor.when_kind,
        "evidence": judged.anchor.evidence if judged.anchor else None,
    }
    if judged.reason:
        view["reason"] = judged.reason
    return view
