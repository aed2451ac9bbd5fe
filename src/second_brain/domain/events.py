"""The events of a memory's stream, and the bookkeeping events of capture and settings, each registered where it
is defined (`@stored`) with how it shows (`shows`, see shown.py). The envelope, the registry of stored type names and
reading a payload back live in envelope.py; they are importable from here too, where the code has always found them.
"""

from dataclasses import dataclass
from typing import Any, ClassVar

from .envelope import REGISTRY as REGISTRY
from .envelope import UPCASTERS as UPCASTERS
from .envelope import Envelope as Envelope
from .envelope import Erased as Erased
from .envelope import Upcaster as Upcaster
from .envelope import erased_by as erased_by
from .envelope import from_data as from_data
from .envelope import is_tombstone as is_tombstone
from .envelope import stored, upcasts
from .envelope import to_data as to_data
from .shown import shows


@stored
@dataclass(frozen=True)
class MemoryCaptured:
    content: str
    tags: tuple[str, ...]
    source: str
    workspace: str
    SCHEMA: ClassVar[int] = 1


shows(MemoryCaptured, "created", payload=lambda e: {"source": e.source, "tags": list(e.tags)},
      line=lambda e, other: _origin("captured", e), revision=lambda e: "captured")


@stored
@dataclass(frozen=True)
class MemoryImported:
    """A memory restored from an export, with the times and counters it had there."""

    content: str
    tags: tuple[str, ...]
    source: str
    workspace: str
    created_at: int
    updated_at: int
    recall_count: int
    importance_score: int
    contradiction_wins: int
    contradiction_losses: int
    use_count: int  # since schema 2; schema 1 had no such field (see _imported_gains_use_count)
    SCHEMA: ClassVar[int] = 2


shows(MemoryImported, "imported", payload=lambda e: {"source": e.source, "tags": list(e.tags)},
      line=lambda e, other: _origin("imported", e), revision=lambda e: "imported")


@upcasts("MemoryImported", 1)
def _imported_gains_use_count(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 counts how often the restored memory had been used; schema 1's exports did not say: none."""
    return {"use_count": 0, **data}


def _origin(verb: str, event: "MemoryCaptured | MemoryImported") -> str:
    """How a memory came to be, in the audit feed: captured or imported, from where, with which tags."""
    return f"{verb} from {event.source}" + (f", tags: {', '.join(event.tags)}" if event.tags else "")


@stored
@dataclass(frozen=True)
class MemoryAppended:
    addition: str
    dated: str  # the "[Update <date>]" label, fixed at decision time so replays agree
    SCHEMA: ClassVar[int] = 1


shows(MemoryAppended, "appended", payload=lambda e: {"chars": len(e.addition)},
      line=lambda e, other: f"appended {len(e.addition)} characters", revision=lambda e: "appended")


@stored
@dataclass(frozen=True)
class MemoryRevised:
    content: str
    reason: str = ""  # "" for an update; "merged" or "replaced" when a newer note was folded in; "restored"
    note: str = ""  # the note a merge folded in, as it was sent (so the merge can be undone); "" otherwise
    SCHEMA: ClassVar[int] = 1


shows(MemoryRevised, "updated",
      payload=lambda e: {"chars": len(e.content), **({"reason": e.reason} if e.reason else {})},
      line=lambda e, other: f"{e.reason or 'updated'}: now {len(e.content)} characters",
      revision=lambda e: e.reason or "updated")


@stored
@dataclass(frozen=True)
class TagsChanged:
    tags: tuple[str, ...]
    SCHEMA: ClassVar[int] = 1


shows(TagsChanged, "tags_changed", payload=lambda e: {"tags": list(e.tags)},
      line=lambda e, other: f"tags: {', '.join(e.tags)}" if e.tags else "tags cleared")


@stored
@dataclass(frozen=True)
class StatusChanged:
    status: str
    SCHEMA: ClassVar[int] = 1


shows(StatusChanged, "status_changed", payload=lambda e: {"status": e.status},
      line=lambda e, other: f"status: {e.status}")


@stored
@dataclass(frozen=True)
class MemoryRecalled:
    """A recall returned the memory; recorded at most once per memory per day, so polling cannot inflate it."""

    day: str  # ISO date in the brain's time zone
    SCHEMA: ClassVar[int] = 1


shows(MemoryRecalled, "recalled", payload=lambda e: {"day": e.day})


@stored
@dataclass(frozen=True)
class MemoryOpened:
    """Someone opened the memory itself (GET /entry, the MCP get tool): a use, unlike merely being returned.
    Recorded at most once per memory per day."""

    day: str  # ISO date in the brain's time zone
    SCHEMA: ClassVar[int] = 1


shows(MemoryOpened, "opened", payload=lambda e: {"day": e.day})


@stored
@dataclass(frozen=True)
class TimeAnchorSet:
    """The memory is due, happens, or should resurface at `when_at`; a snooze sets it again."""

    when_at: int  # unix ms
    when_kind: str  # due | event | wake
    SCHEMA: ClassVar[int] = 1


shows(TimeAnchorSet, "time_anchor_set", payload=lambda e: {"when_at": e.when_at, "when_kind": e.when_kind},
      line=lambda e, other: f"{e.when_kind} at {e.when_at}")


@stored
@dataclass(frozen=True)
class TimeAnchorCleared:
    SCHEMA: ClassVar[int] = 1


shows(TimeAnchorCleared, "time_anchor_cleared")


@stored
@dataclass(frozen=True)
class MemoryClassified:
    """How much the memory matters (1-5), what kind it is, how long it stays true; by rules or by a model."""

    importance: int
    kind: str  # episodic | semantic
    volatility: str  # durable | state | volatile | "" (only fills in a volatility nobody gave)
    canonical: bool
    method: str  # rules | model
    SCHEMA: ClassVar[int] = 1


shows(MemoryClassified, "classified",
      payload=lambda e: {"importance": e.importance, "kind": e.kind, "volatility": e.volatility or None,
                         "canonical": e.canonical, "method": e.method},
      line=lambda e, other: f"importance {e.importance}, {e.kind} ({e.method})")


@stored
@dataclass(frozen=True)
class DuplicateSuspected:
    """Stored although a very similar memory exists; it carries the duplicate-candidate tag."""

    match_id: str
    score: float  # cosine, 0-1
    SCHEMA: ClassVar[int] = 1


shows(DuplicateSuspected, "duplicate_suspected",
      payload=lambda e: {"match_id": e.match_id, "score": round(e.score * 100, 1)},
      line=lambda e, other: f"resembles {other(e.match_id)} ({round(e.score * 100)}%)")


@stored
@dataclass(frozen=True)
class ContradictionWon:
    """This memory survived a contradiction with `other_id`."""

    other_id: str
    reason: str
    SCHEMA: ClassVar[int] = 1


shows(ContradictionWon, "contradiction_won", payload=lambda e: {"other_id": e.other_id, "reason": e.reason},
      line=lambda e, other: f"won a contradiction with {other(e.other_id)}")


@stored
@dataclass(frozen=True)
class ContradictionLost:
    """This memory lost a contradiction with `other_id` (deprecated, or kept as a draft)."""

    other_id: str
    reason: str
    SCHEMA: ClassVar[int] = 1


shows(ContradictionLost, "contradiction_lost", payload=lambda e: {"other_id": e.other_id, "reason": e.reason},
      line=lambda e, other: f"lost a contradiction with {other(e.other_id)}")


@stored
@dataclass(frozen=True)
class CaptureAnswered:
    """What a capture sent with an Idempotency-Key answered (on the key's own stream), so a retry of the same
    request gets the same answer instead of a second memory."""

    request_hash: str  # sha256 of the request, to refuse the same key on a different request
    memory_id: str
    action: str  # the triage verdict: store, flag, merge, replace, contradiction, keep_canonical
    match_id: str
    score: float
    SCHEMA: ClassVar[int] = 1  # no tags or reason: nothing of the note's text outlives a forget here


@stored
@dataclass(frozen=True)
class ContentReleased:
    """Tombstone on a text's claim stream: the memory that last claimed the text was forgotten, so the claims
    (which memory holds the text) are erased with it and the text is free for a new capture."""

    SCHEMA: ClassVar[int] = 1
    TOMBSTONE: ClassVar[bool] = True


@stored
@dataclass(frozen=True)
class IdempotencyExpired:
    """The nightly housekeeping retired a key's recorded answer (a day old): the key may be used afresh."""

    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class ContentClaimed:
    """A capture stored (or folded) its text into `memory_id`, on the stream of that text's hash in its workspace:
    an identical capture racing it loses that stream and is judged again, as a repeat of this memory."""

    memory_id: str
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class ConfigChanged:
    """An admin set these runtime settings (on the `config` stream)."""

    values: dict[str, Any]
    SCHEMA: ClassVar[int] = 1


shows(ConfigChanged, line=lambda e, other: f"settings changed: {', '.join(sorted(e.values))}")


@stored
@dataclass(frozen=True)
class ConfigReset:
    """An admin put one runtime setting back to its default."""

    key: str
    SCHEMA: ClassVar[int] = 1


shows(ConfigReset, line=lambda e, other: f"{e.key} back to its default")


@stored
@dataclass(frozen=True)
class StalenessJudged:
    """The nightly staleness pass flagged the memory as possibly out of date (`stale:as-of`), or cleared the flag."""

    stale: bool
    reason: str
    SCHEMA: ClassVar[int] = 1


shows(StalenessJudged, "staleness_judged", payload=lambda e: {"stale": e.stale, "reason": e.reason},
      line=lambda e, other: "possibly out of date" if e.stale else "no longer flagged out of date")


@stored
@dataclass(frozen=True)
class DigestComposed:
    """On a digest's own stream: the memories it was written from (ids only), so forgetting it, or any of them,
    can release the others and erase the digest's copy of their words."""

    sources: tuple[str, ...]
    SCHEMA: ClassVar[int] = 1


shows(DigestComposed, "digest_composed", payload=lambda e: {"sources": len(e.sources)},
      line=lambda e, other: f"digest of {len(e.sources)} memories")


@stored
@dataclass(frozen=True)
class MemoryReleased:
    """The digest `digest_id` this memory was rolled into was forgotten: `rolled-up` goes (full weight in recall,
    digestible again); its own text and times are left as they were."""

    digest_id: str
    SCHEMA: ClassVar[int] = 1


shows(MemoryReleased, "released", payload=lambda e: {"digest_id": e.digest_id},
      line=lambda e, other: f"released from the digest {other(e.digest_id)}")


@stored
@dataclass(frozen=True)
class MemoryRolledUp:
    """Compression folded the memory into the digest `digest_id` (tagged `rolled-up`: 0.4x in recall, never
    digested again); its own text is left as it was."""

    digest_id: str
    SCHEMA: ClassVar[int] = 1


shows(MemoryRolledUp, "rolled_up", payload=lambda e: {"digest_id": e.digest_id},
      line=lambda e, other: f"rolled into the digest {other(e.digest_id)}")


@stored
@dataclass(frozen=True)
class MemoryShared:
    """Moved to a company workspace: the same memory (id, history, links), now readable by that team."""

    workspace: str
    SCHEMA: ClassVar[int] = 1


shows(MemoryShared, "shared", payload=lambda e: {"layer": "company"}, moves=True)


@stored
@dataclass(frozen=True)
class MemoryUnshared:
    """Moved back to its author's personal workspace."""

    workspace: str
    SCHEMA: ClassVar[int] = 1


shows(MemoryUnshared, "unshared", payload=lambda e: {"layer": "personal"}, moves=True)


@stored
@dataclass(frozen=True)
class MemoryForgotten:
    """Tombstone: the store erases the content of every earlier event of the stream."""

    SCHEMA: ClassVar[int] = 1
    TOMBSTONE: ClassVar[bool] = True


shows(MemoryForgotten, "deleted", line=lambda e, other: "forgotten: its history is erased")


@stored
@dataclass(frozen=True)
class WordsErased:
    """The forgotten memory `memory_id` was quoted in this memory's history (a model's reason for a contradiction
    between the two, a note merged in and split out again as that memory): the store erases the content of the
    events at `versions` of this stream, as a tombstone does for its own. This memory's state is left as it is."""

    memory_id: str
    versions: tuple[int, ...]
    SCHEMA: ClassVar[int] = 1
    NAMES_ERASED: ClassVar[bool] = True


shows(WordsErased, "words_erased", payload=lambda e: {"events": len(e.versions)},
      line=lambda e, other: f"erased what it quoted of a forgotten memory ({len(e.versions)} events)")


DomainEvent = (
    MemoryCaptured | MemoryImported | MemoryAppended | MemoryRevised | TagsChanged | StatusChanged | MemoryRecalled
    | MemoryOpened | TimeAnchorSet | TimeAnchorCleared | MemoryClassified | DuplicateSuspected | ContradictionWon
    | ContradictionLost | StalenessJudged | MemoryRolledUp | MemoryReleased | DigestComposed | MemoryShared
    | MemoryUnshared | MemoryForgotten | WordsErased | Erased
)

MEMORY_STREAM = "memory-"  # the prefix of every memory's stream id


def memory_stream(memory_id: str) -> str:
    return MEMORY_STREAM + memory_id


def memory_of(stream_id: str) -> str | None:
    """The id of the memory whose stream this is; None for any other stream."""
    return stream_id[len(MEMORY_STREAM):] if stream_id.startswith(MEMORY_STREAM) else None
