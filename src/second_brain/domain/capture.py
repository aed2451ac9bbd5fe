"""What a capture does, as data: from the triage's verdict, the new note and the memory it matched, the
events each stream receives. The application only gathers the inputs and appends the result."""

import hashlib
import hmac
from dataclasses import dataclass, replace
from functools import reduce
from typing import Literal

from . import links, text
from .classification import classify
from .conflicts import ConflictSuspected
from .events import (
    ContradictionLost,
    ContradictionWon,
    DuplicateSuspected,
    MemoryCaptured,
    MemoryClassified,
    MemoryRevised,
    StatusChanged,
    TagsChanged,
    TimeAnchorCleared,
    TimeAnchorSet,
    memory_stream,
)
from .memory import Memory, evolve

Action = Literal["store", "block", "flag", "doubt", "merge", "replace", "contradiction", "keep_canonical"]
# Session logs: "we decided X... actually Y" in a transcript is no evidence that a stored memory is wrong.
TRANSCRIPT_SOURCES = frozenset({"claude-code", "codex-session", "cursor-session"})


@dataclass(frozen=True)
class Verdict:
    """What a new note is, next to the memory it most resembles (`match_id`, as it read when judged)."""

    action: Action
    match_id: str = ""
    score: float = 0.0
    reason: str = ""
    merged_content: str = ""  # a merge: the combined note
    match_content: str = ""  # the matched memory's text when judged: if it changed since, judge again


STORE = Verdict("store")


@dataclass(frozen=True)
class Change:
    """Events for one stream, decided against the stream at `version`."""

    stream_id: str
    version: int
    workspace: str
    events: tuple[object, ...]


@dataclass(frozen=True)
class CaptureDecision:
    memory_id: str  # the new memory, or the one the note was merged into, replaced or blocked by
    tags: tuple[str, ...]  # that memory's tags afterwards
    verdict: Verdict  # as carried out: protections may have softened the triage's
    changes: tuple[Change, ...] = ()


def content_stream(workspace: str, content: str, key: bytes | None = None) -> str:
    """The stream every capture of this text in this workspace appends to, so identical twins cannot both win.

    With the brain's `key` its id is a keyed hash (HMAC-SHA-256) of the text: a copy of the log tells nobody
    without the key whether a given text was ever stored. Without one (a brain built for a test), a plain hash."""
    same = _same_text(content).encode()
    digest = hmac.new(key, same, hashlib.sha256) if key else hashlib.sha256(same)
    return f"content-{workspace}-{digest.hexdigest()[:40]}"


def request_digest(request: object, key: bytes | None = None) -> str:
    """What an idempotency key's answer remembers of its request (to refuse the key on another one): keyed like
    the content stream, as the request holds the note's text."""
    said = repr(request).encode()
    return (hmac.new(key, said, hashlib.sha256) if key else hashlib.sha256(said)).hexdigest()


def exact_repeat(claimed: Memory, content: str) -> Verdict | None:
    """A block when the memory that last claimed this text still holds it (not forgotten, retired or rewritten)."""
    if not claimed.exists or claimed.deprecated or _same_text(claimed.content) != _same_text(content):
        return None
    return Verdict("block", claimed.id, 1.0, match_content=claimed.content)


def _same_text(content: str) -> str:
    return " ".join(content.casefold().split())


def is_protected(memory: Memory) -> bool:
    """Important or confirmed memories are never merged into or replaced without the user."""
    return memory.importance >= text.PROTECTED_IMPORTANCE or text.CANONICAL in memory.tags


def protect(verdict: Verdict, source: str, matched: Memory, may_change: bool = True) -> Verdict:
    """The verdict after the protections: a transcript never overrides another source, a protected memory is
    never rewritten, a canonical one never retired, and a memory the author may not change (another member's
    company memory) is only pointed at, never merged into, replaced or deprecated; nor is a managed mirror (its
    integration owns it: the next sync would undo the change)."""
    if (not may_change or matched.mirror) and verdict.action in ("merge", "replace", "contradiction",
                                                                 "keep_canonical"):
        return Verdict("flag", matched.id, verdict.score)
    transcript = source in TRANSCRIPT_SOURCES and matched.source != source
    if verdict.action in ("merge", "replace") and (is_protected(matched) or transcript):
        return Verdict("flag", matched.id, verdict.score)
    if verdict.action == "contradiction" and text.CANONICAL in matched.tags:
        return Verdict("keep_canonical", matched.id, verdict.score, "Conflicts with a confirmed canonical memory.")
    if verdict.action == "contradiction" and transcript:
        return Verdict("keep_canonical", matched.id, verdict.score,
                       "A session transcript never overrides a memory from another source.")
    return verdict


def for_mirror(verdict: Verdict) -> Verdict:
    """A managed mirror's verdict: it is stored whatever it resembles (its system holds it, and the next sync would
    bring it back), so a repeat or a near-duplicate is flagged beside what it resembles; and a contradiction
    settles nothing: both are kept and the pair flagged for review, since a synced mail or page is nobody's word
    that the older note is wrong (nor is an older note a reason to mark the synced one a draft)."""
    if verdict.action in ("block", "merge", "replace"):
        return Verdict("flag", verdict.match_id, verdict.score or 1.0)
    if verdict.action in ("contradiction", "keep_canonical"):
        return Verdict("doubt", verdict.match_id, verdict.score, verdict.reason or "May contradict a stored memory.")
    return verdict


def decide_capture(new_id: str, captured: MemoryCaptured, anchor: tuple[int, str] | None, verdict: Verdict,
                   matched: Memory | None, may_change: bool = True) -> CaptureDecision:
    """The events a capture appends, per stream; `matched` is the current state of the verdict's memory, which
    the capturing identity may change or not (`may_change`)."""
    if matched is None:
        return _store(new_id, captured, anchor, STORE, None)
    verdict = protect(verdict, captured.source, matched, may_change)
    if verdict.action == "block":
        return CaptureDecision(matched.id, matched.tags, verdict)
    if verdict.action in ("merge", "replace"):
        return _fold_into(matched, captured, anchor, verdict)
    return _store(new_id, captured, anchor, verdict, matched)


def _store(new_id: str, captured: MemoryCaptured, anchor: tuple[int, str] | None, verdict: Verdict,
           matched: Memory | None) -> CaptureDecision:
    """A new memory, with what the verdict does to the one it matched."""
    tags = list(captured.tags)
    events: list[object] = []
    others: list[Change] = []
    if verdict.action == "flag":
        tags.append("duplicate-candidate")
        events.append(DuplicateSuspected(verdict.match_id, round(verdict.score, 4)))
    elif verdict.action == "doubt":  # may change a fact of the matched memory: both kept, the pair flagged
        tags.append("possible-update")
        events.append(ConflictSuspected(verdict.match_id, verdict.reason))
    elif verdict.action == "contradiction":
        assert matched is not None, "a contradiction verdict comes with the memory it matched"
        old = matched
        tags.append("contradiction-resolved")
        events.append(ContradictionWon(old.id, verdict.reason))
        # A retired memory's reminder goes with it: the meeting moved, its old time is no longer due.
        unset = (TimeAnchorCleared(),) if old.when_at is not None else ()
        others.append(Change(memory_stream(old.id), old.version, old.workspace,
                             (StatusChanged("deprecated"), ContradictionLost(new_id, verdict.reason), *unset)))
        edge = links.Edge(new_id, old.id, "supersedes")
        others.append(Change(links.edge_stream(new_id, old.id, "supersedes"), 0, old.workspace,
                             tuple(links.decide_link(edge, 1.0, "system"))))
    elif verdict.action == "keep_canonical":
        assert matched is not None, "a keep_canonical verdict comes with the memory it matched"
        kept = matched
        tags = text.with_prefixed(tags, "status:", "draft")
        events.append(ContradictionLost(kept.id, verdict.reason))
        others.append(Change(memory_stream(kept.id), kept.version, kept.workspace,
                             (ContradictionWon(new_id, verdict.reason),)))
    judged = classify(captured.content, tuple(tags))
    events[:0] = [replace(captured, tags=tuple(text.dedupe(tags))),
                  MemoryClassified(judged.importance, judged.kind, judged.volatility, False, "rules")]
    if anchor is not None:
        events.append(TimeAnchorSet(*anchor))
    own = Change(memory_stream(new_id), 0, captured.workspace, tuple(events))
    return CaptureDecision(new_id, reduce(evolve, events, Memory(new_id)).tags, verdict, (own, *others))


def _fold_into(state: Memory, captured: MemoryCaptured, anchor: tuple[int, str] | None,
               verdict: Verdict) -> CaptureDecision:
    """Merge the note into the memory it matched, or replace that memory's text with it."""
    content = verdict.merged_content if verdict.action == "merge" else captured.content
    content, hashtags = text.extract_hashtags(content)
    # The newer note's word on how long it stays true wins; staleness is judged afresh.
    incoming = next((t for t in captured.tags if t.startswith("volatility:")), None)
    tags = [t for t in text.dedupe([*state.tags, *captured.tags, *hashtags])
            if not t.startswith("volatility:") and t != "stale:as-of"]
    tags = text.normalize_tags(tags + ([incoming] if incoming else []))
    judged = classify(content, tuple(tags))
    merged = verdict.action == "merge"  # the note as sent is kept on the revision, so the merge can be undone
    events: list[object] = [
        MemoryRevised(content, "merged" if merged else "replaced", captured.content if merged else "")]
    if tuple(tags) != state.tags:
        events.append(TagsChanged(tuple(tags)))
    events.append(MemoryClassified(judged.importance, judged.kind, judged.volatility, False, "rules"))
    if anchor is not None:  # the newer note's reminder goes with it
        events.append(TimeAnchorSet(*anchor))
    change = Change(memory_stream(state.id), state.version, state.workspace, tuple(events))
    return CaptureDecision(state.id, reduce(evolve, events, state).tags, verdict, (change,))
