"""Conflicts to review: pairs of memories a capture judged to say different things about one subject, and what a
person answers about each: keep both, keep the newer, keep the older.

An item is named by the event that made it, `<memory id>@<version>` on that memory's stream:

- `retired`: a `ContradictionLost` on the older memory (capture deprecated it; the newer won);
- `kept_canonical`: a `ContradictionLost` on the newer memory (kept as a draft beside a canonical one);
- `similar`: a `DuplicateSuspected` on the newer memory (stored tagged duplicate-candidate);
- `possible_update`: a `ConflictSuspected` on the newer memory (the rules could not tell a new value from another
  subject, so both were kept);
- `merged` / `replaced`: a `MemoryRevised` a capture made of the older memory's text.

The answer is decided here from the memories' states (`answer`), as events per memory; "keep both" of an
automatic outcome is its undo: the older memory gets back exactly the tags, text, importance and reminder it had
before the capture, and a note folded into it is stored as its own memory.
"""

from dataclasses import dataclass
from typing import ClassVar

from . import text
from .envelope import stored
from .errors import InvalidInput
from .events import MemoryClassified, MemoryRevised, TagsChanged, TimeAnchorCleared, TimeAnchorSet
from .memory import Memory, counted_only
from .shown import shows

KEEPS = ("both", "newer", "older")
KINDS = ("retired", "kept_canonical", "similar", "possible_update", "merged", "replaced")
REVIEW_DAYS = 30  # how far back the list reaches
POSSIBLE_UPDATE = "possible-update"  # a newer memory that may change a fact of an older one, until answered
FLAG_TAGS = ("duplicate-candidate", POSSIBLE_UPDATE)  # what a flagged newer memory carries until answered


@counted_only
@stored
@dataclass(frozen=True)
class ConflictSuspected:
    """This (newer) memory may change a fact of `other_id`: the rules could not tell a new value from another
    subject, so both are kept and the pair waits for a person."""

    other_id: str
    reason: str
    SCHEMA: ClassVar[int] = 1


shows(ConflictSuspected, "conflict_suspected", payload=lambda e: {"other_id": e.other_id, "reason": e.reason},
      line=lambda e, other: f"may update {other(e.other_id)}: both kept for review")


@counted_only
@stored
@dataclass(frozen=True)
class ConflictAnswered:
    """A person's answer to an item of the review list, on each memory of the pair."""

    item: str  # the item's name: `<memory id>@<version>` of the event that made it
    kind: str  # one of KINDS
    keep: str  # one of KEEPS
    other_id: str  # the other memory of the pair: for a folded note, the memory it was split out as ("" if none)
    SCHEMA: ClassVar[int] = 1


shows(ConflictAnswered, "conflict_answered",
      payload=lambda e: {"item": e.item, "kind": e.kind, "keep": e.keep, "other_id": e.other_id or None},
      line=lambda e, other: f"{e.kind.replace('_', ' ')} answered: keep {e.keep}"
                            + (f" (with {other(e.other_id)})" if e.other_id else ""))


def item_name(memory_id: str, version: int) -> str:
    return f"{memory_id}@{version}"


def parse_item(name: str) -> tuple[str, int]:
    """The memory id and stream version an item's name points at; InvalidInput if it is not one."""
    memory_id, _, version = name.strip().rpartition("@")
    if not memory_id or not version.isdigit() or int(version) < 1:
        raise InvalidInput("conflict must be an item of GET /conflicts, such as 6f1c…@3")
    return memory_id, int(version)


def check_keep(keep: str | None) -> str:
    if keep not in KEEPS:
        raise InvalidInput("keep must be one of: both, newer, older")
    return keep


@dataclass(frozen=True)
class Answer:
    """What an answer appends: events per memory id (in order), and a note to store as its own memory."""

    events: dict[str, list[object]]
    note: str = ""  # the text a merge folded in, stored again on its own (keep both)


def answer(kind: str, keep: str, item: str, older: Memory, newer: Memory | None, before: Memory | None,
           folded: str = "") -> Answer:
    """The events answering an item: `older` and `newer` as they are now, `before` the older memory as it was just
    before the capture changed it (retired, merged and replaced), `folded` the note a merge or replacement took in.
    Tags are set whole, so a restore is exact."""

    def said(other: str) -> object:
        return ConflictAnswered(item, kind, keep, other)

    def retagged(memory: Memory, tags: tuple[str, ...]) -> list[object]:
        return [TagsChanged(tags)] if tags != memory.tags else []

    def status(memory: Memory, value: str | None) -> tuple[str, ...]:
        return tuple(text.with_prefixed(list(memory.tags), "status:", value)) if value else tuple(
            t for t in memory.tags if not t.startswith("status:"))

    if kind in ("merged", "replaced"):
        if before is None:
            raise ValueError("a merge or replacement is answered from the state before it")
        if keep == "newer":
            return Answer({older.id: [said("")]})
        restore: list[object] = [MemoryRevised(before.content, "restored"),
                                 MemoryClassified(before.importance, _kind(before), "", False, "restored")]
        if before.when_at != older.when_at:
            restore.append(TimeAnchorSet(before.when_at, before.when_kind or "wake") if before.when_at is not None
                           else TimeAnchorCleared())
        restore.append(TagsChanged(before.tags))
        return Answer({older.id: [*restore, said("")]}, note=folded if keep == "both" else "")
    if newer is None:
        raise ValueError(f"a {kind} item is a pair")
    older_tags, newer_tags = older.tags, newer.tags
    older_time: list[object] = []  # the older memory's reminder: back with an undone retirement, gone when retired
    if kind == "retired":  # the older was deprecated by the capture; the newer won
        if keep in ("both", "older"):
            if before is None:
                raise ValueError("a retirement is undone from the state before it")
            older_tags = before.tags
            newer_tags = tuple(t for t in newer.tags if t != "contradiction-resolved")
            if before.when_at is not None and (before.when_at, before.when_kind) != (older.when_at, older.when_kind):
                older_time = [TimeAnchorSet(before.when_at, before.when_kind or "wake")]
        if keep == "older":
            newer_tags = status(newer, "deprecated")
    elif kind == "kept_canonical":  # the newer was kept as a draft beside a canonical older one
        if keep == "both":
            newer_tags = status(newer, None)
        elif keep == "newer":
            newer_tags, older_tags = status(newer, None), status(older, "deprecated")
        else:
            newer_tags = status(newer, "deprecated")
    else:  # similar, possible_update: both were kept
        newer_tags = tuple(t for t in newer.tags if t not in FLAG_TAGS)
        if keep == "newer":
            older_tags = status(older, "deprecated")
        elif keep == "older":
            newer_tags = tuple(text.with_prefixed(list(newer_tags), "status:", "deprecated"))
    if kind in ("kept_canonical", "similar", "possible_update") and keep == "newer" and older.when_at is not None:
        older_time = [TimeAnchorCleared()]
    return Answer({older.id: [*retagged(older, older_tags), *older_time, said(newer.id)],
                   newer.id: [*retagged(newer, newer_tags), said(older.id)]})


def split_out(decided: Answer, item: str, kind: str, older_id: str, note_id: str) -> Answer:
    """The answer once the note a merge (or replacement) took in is stored again as `note_id`: each side's
    `ConflictAnswered` names the other, so forgetting that memory finds the revision that held its words."""
    events = {memory_id: [ConflictAnswered(e.item, e.kind, e.keep, note_id) if isinstance(e, ConflictAnswered) else e
                          for e in evs] for memory_id, evs in decided.events.items()}
    events[note_id] = [ConflictAnswered(item, kind, "both", older_id)]
    return Answer(events, decided.note)


def _kind(memory: Memory) -> str:
    return next((t.removeprefix("kind:") for t in memory.tags if t.startswith("kind:")), "semantic")
