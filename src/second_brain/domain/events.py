"""Every event that exists, the envelope they travel in, and the registry of stored type names."""

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from .links import LinkCreated, LinkRemoved
from .maintenance import MAINTENANCE_EVENTS
from .oauth import OAUTH_EVENTS
from .patterns import PATTERN_EVENTS
from .projects import ProjectCreated, ProjectDeleted, ProjectErased, ProjectImported, ProjectUpdated
from .push import PUSH_EVENTS
from .team import TEAM_EVENTS


@dataclass(frozen=True)
class MemoryCaptured:
    content: str
    tags: tuple[str, ...]
    source: str
    workspace: str
    SCHEMA: ClassVar[int] = 1


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


@dataclass(frozen=True)
class MemoryAppended:
    addition: str
    dated: str  # the "[Update <date>]" label, fixed at decision time so replays agree
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class MemoryRevised:
    content: str
    reason: str = ""  # "" for an update; "merged" or "replaced" when a newer note was folded in
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class TagsChanged:
    tags: tuple[str, ...]
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class StatusChanged:
    status: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class MemoryRecalled:
    """A recall returned the memory; recorded at most once per memory per day, so polling cannot inflate it."""

    day: str  # ISO date in the brain's time zone
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class MemoryOpened:
    """Someone opened the memory itself (GET /entry, the MCP get tool): a use, unlike merely being returned.
    Recorded at most once per memory per day."""

    day: str  # ISO date in the brain's time zone
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class TimeAnchorSet:
    """The memory is due, happens, or should resurface at `when_at`; a snooze sets it again."""

    when_at: int  # unix ms
    when_kind: str  # due | event | wake
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class TimeAnchorCleared:
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class MemoryClassified:
    """How much the memory matters (1-5), what kind it is, how long it stays true; by rules or by a model."""

    importance: int
    kind: str  # episodic | semantic
    volatility: str  # durable | state | volatile | "" (only fills in a volatility nobody gave)
    canonical: bool
    method: str  # rules | model
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class DuplicateSuspected:
    """Stored although a very similar memory exists; it carries the duplicate-candidate tag."""

    match_id: str
    score: float  # cosine, 0-1
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class ContradictionWon:
    """This memory survived a contradiction with `other_id`."""

    other_id: str
    reason: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class ContradictionLost:
    """This memory lost a contradiction with `other_id` (deprecated, or kept as a draft)."""

    other_id: str
    reason: str
    SCHEMA: ClassVar[int] = 1


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


@dataclass(frozen=True)
class IdempotencyExpired:
    """The nightly housekeeping retired a key's recorded answer (a day old): the key may be used afresh."""

    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class ContentClaimed:
    """A capture stored (or folded) its text into `memory_id`, on the stream of that text's hash in its workspace:
    an identical capture racing it loses that stream and is judged again, as a repeat of this memory."""

    memory_id: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class ConfigChanged:
    """An admin set these runtime settings (on the `config` stream)."""

    values: dict[str, Any]
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class ConfigReset:
    """An admin put one runtime setting back to its default."""

    key: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class StalenessJudged:
    """The nightly staleness pass flagged the memory as possibly out of date (`stale:as-of`), or cleared the flag."""

    stale: bool
    reason: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class DigestComposed:
    """On a digest's own stream: the memories it was written from (ids only), so forgetting it, or any of them,
    can release the others and erase the digest's copy of their words."""

    sources: tuple[str, ...]
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class MemoryReleased:
    """The digest `digest_id` this memory was rolled into was forgotten: `rolled-up` goes (full weight in recall,
    digestible again); its own text and times are left as they were."""

    digest_id: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class MemoryRolledUp:
    """Compression folded the memory into the digest `digest_id` (tagged `rolled-up`: 0.4x in recall, never
    digested again); its own text is left as it was."""

    digest_id: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class MemoryShared:
    """Moved to a company workspace: the same memory (id, history, links), now readable by that team."""

    workspace: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class MemoryUnshared:
    """Moved back to its author's personal workspace."""

    workspace: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class MemoryForgotten:
    """Tombstone: the store erases the content of every earlier event of the stream."""

    SCHEMA: ClassVar[int] = 1
    TOMBSTONE: ClassVar[bool] = True


@dataclass(frozen=True)
class Erased:
    """What an erased event reads back as: its type survives, its content does not."""

    original_type: str
    SCHEMA: ClassVar[int] = 1


DomainEvent = (
    MemoryCaptured | MemoryImported | MemoryAppended | MemoryRevised | TagsChanged | StatusChanged | MemoryRecalled
    | MemoryOpened | TimeAnchorSet | TimeAnchorCleared | MemoryClassified | DuplicateSuspected | ContradictionWon
    | ContradictionLost | StalenessJudged | MemoryRolledUp | MemoryReleased | DigestComposed | MemoryShared | MemoryUnshared | MemoryForgotten | Erased
)

REGISTRY: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        MemoryCaptured, MemoryImported, MemoryAppended, MemoryRevised, TagsChanged, StatusChanged, MemoryRecalled,
        MemoryOpened, TimeAnchorSet, TimeAnchorCleared, MemoryClassified, DuplicateSuspected, ContradictionWon,
        ContradictionLost, MemoryForgotten, LinkCreated, LinkRemoved, ProjectCreated, ProjectUpdated, ProjectDeleted,
        ProjectErased, ProjectImported, ConfigChanged, ConfigReset, CaptureAnswered, IdempotencyExpired, ContentClaimed, MemoryShared, MemoryUnshared, StalenessJudged,
        MemoryRolledUp, MemoryReleased, DigestComposed, *PATTERN_EVENTS,
        *TEAM_EVENTS, *OAUTH_EVENTS, *MAINTENANCE_EVENTS, *PUSH_EVENTS,
    )
}


@dataclass(frozen=True)
class Envelope:
    """One event as stored: where it belongs, who caused it, when, and its global position."""

    stream_id: str
    version: int
    event: Any
    actor: str
    workspace: str
    request_id: str
    at: int  # unix milliseconds
    position: int = 0  # assigned by the store on append
    schema_version: int = 0  # the shape of `event`'s payload: its class's SCHEMA unless read from the log

    def __post_init__(self) -> None:
        if not self.schema_version:
            object.__setattr__(self, "schema_version", getattr(type(self.event), "SCHEMA", 1))

    @property
    def type(self) -> str:
        if isinstance(self.event, Erased):
            return self.event.original_type
        return type(self.event).__name__


def is_tombstone(event: object) -> bool:
    """True for events after which a stream's earlier content must be erased."""
    return bool(getattr(event, "TOMBSTONE", False))


def to_data(event: object) -> dict[str, Any]:
    """The JSON-ready payload of an event (tuples become lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(event).items()}  # type: ignore[call-overload]


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def upcasts(type_name: str, schema: int) -> Callable[[Upcaster], Upcaster]:
    """Register how a payload of `type_name` stored with `schema` becomes one of `schema + 1`. An event's shape
    changes by raising its class's SCHEMA and registering the step from the one before: the log is never rewritten,
    every old event is read in the newest shape."""
    def register(upcaster: Upcaster) -> Upcaster:
        UPCASTERS[(type_name, schema)] = upcaster
        return upcaster
    return register


@upcasts("MemoryImported", 1)
def _imported_gains_use_count(data: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 counts how often the restored memory had been used; schema 1's exports did not say: none."""
    return {"use_count": 0, **data}


def from_data(type_name: str, data: dict[str, Any], erased: bool = False, schema_version: int = 1) -> object:
    """Rebuild an event from its stored type name, payload and the schema it was stored with, upcast to its
    class's current schema."""
    if erased:
        return Erased(type_name)
    cls = REGISTRY[type_name]
    if schema_version > cls.SCHEMA:
        raise ValueError(f"{type_name} of schema {schema_version} was written by a newer version of Second Brain "
                         f"(this one reads up to schema {cls.SCHEMA})")
    for schema in range(schema_version, cls.SCHEMA):
        data = UPCASTERS[(type_name, schema)](data)
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    return cls(**fields)


MEMORY_STREAM = "memory-"  # the prefix of every memory's stream id


def memory_stream(memory_id: str) -> str:
    return MEMORY_STREAM + memory_id


def memory_of(stream_id: str) -> str | None:
    """The id of the memory whose stream this is; None for any other stream."""
    return stream_id[len(MEMORY_STREAM):] if stream_id.startswith(MEMORY_STREAM) else None
