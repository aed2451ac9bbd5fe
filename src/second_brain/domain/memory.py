"""The memory aggregate as two pure functions: decide(command, state) and evolve(state, event)."""

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import singledispatch
from typing import TypeVar

from . import text
from .commands import (
    Append,
    Capture,
    ChangeTags,
    ClearTimeAnchor,
    Command,
    Forget,
    Import,
    RecordOpen,
    RecordRecall,
    Retag,
    SetStatus,
    SetTimeAnchor,
    Update,
)
from .errors import InvalidInput, NotFound
from .events import (
    ContradictionLost,
    ContradictionWon,
    DigestComposed,
    DuplicateSuspected,
    Envelope,
    Erased,
    MemoryAppended,
    MemoryCaptured,
    MemoryClassified,
    MemoryForgotten,
    MemoryImported,
    MemoryOpened,
    MemoryRecalled,
    MemoryReleased,
    MemoryRevised,
    MemoryRolledUp,
    MemoryShared,
    MemoryUnshared,
    StalenessJudged,
    StatusChanged,
    TagsChanged,
    TimeAnchorCleared,
    TimeAnchorSet,
    WordsErased,
)
from .integrations import MirrorSynced, refused
from .patterns import MemoryDrawnInto
from .push import ReminderPushed

WHEN_KINDS = ("due", "event", "wake")
DIGEST_MIN_ENTRIES = 10  # a tag needs this many eligible memories in one workspace to be rolled up
DIGEST_RECALL_GRACE_MS = 60 * 24 * 3600 * 1000  # recalled once is still fair game for a digest after 60 days


T = TypeVar("T")


@dataclass(frozen=True)
class Memory:
    """A memory as its events made it: what the aggregate decides on, and what every projection shows."""

    id: str
    exists: bool = False
    forgotten: bool = False
    content: str = ""
    tags: tuple[str, ...] = ()
    source: str = ""
    workspace: str = ""
    actor: str = ""  # who captured it
    created_at: int = 0
    updated_at: int = 0
    importance: int = 0
    recall_count: int = 0  # days on which a recall returned it
    last_recalled: str = ""  # the day of the latest counted recall
    use_count: int = 0  # days on which someone opened it: the signal ranking trusts
    last_used: str = ""
    contradiction_wins: int = 0
    contradiction_losses: int = 0
    when_at: int | None = None
    when_kind: str | None = None
    version: int = 0  # events on its stream: where the next append goes
    content_version: int = 0  # moves whenever the vectors made from its text may be out of date
    position: int = 0  # the log position of its first event: orders memories captured in the same millisecond
    mirror: str = ""  # the integration that owns it (a managed mirror), if any
    origin: str = ""  # where its original is (a mirror's link upstream)
    mirror_hash: str = ""  # what its last sync brought (a hash): an unchanged item is not written again
    mirror_version: str = ""  # the item's version upstream at its last sync (a UID, an edit time): not read again

    @property
    def deprecated(self) -> bool:
        return text.DEPRECATED in self.tags


def decide(command: Command, state: Memory) -> list[object]:
    """Turn a command into the events it causes, or raise if the command is not allowed."""
    validate(command)
    if isinstance(command, Capture):
        return _capture(command, state)
    if isinstance(command, Import):
        return _import(command)
    if not state.exists:
        raise NotFound(f"No entry found with ID: {state.id}")
    if isinstance(command, Append | Update) and state.mirror:
        raise refused(state.source, state.origin)
    if isinstance(command, Append):
        return _append(command, state)
    if isinstance(command, Update):
        return _update(command, state)
    if isinstance(command, SetStatus):
        return [StatusChanged(command.status)]
    if isinstance(command, ChangeTags):
        tags = tuple(text.normalize_tags(list(command.tags)))
        return [] if tags == state.tags else [TagsChanged(tags)]
    if isinstance(command, Retag):
        return _retag(command, state)
    if isinstance(command, SetTimeAnchor):
        if command.when_at <= command.now:
            raise InvalidInput("until must be in the future")
        return [TimeAnchorSet(command.when_at, command.when_kind or state.when_kind or "wake")]
    if isinstance(command, ClearTimeAnchor):
        if state.when_at is None:
            raise InvalidInput(f"Entry {state.id} has no time anchor to clear")
        return [TimeAnchorCleared()]
    if isinstance(command, RecordRecall):
        return [] if command.day == state.last_recalled else [MemoryRecalled(command.day)]
    if isinstance(command, RecordOpen):
        return [] if command.day == state.last_used else [MemoryOpened(command.day)]
    if isinstance(command, Forget):
        return [MemoryForgotten()]
    raise TypeError(f"unknown command {command!r}")


@dataclass(frozen=True)
class Step:
    """Where an event lands in the fold: the version it makes, its time (the memory's last change when it comes
    without an envelope, as in a decision folding its own events), its author and its log position."""

    version: int
    at: int
    actor: str = ""
    position: int = 0


OPENING = (MemoryForgotten, MemoryCaptured, MemoryImported)  # folded whether or not the memory exists yet


def evolve(state: Memory, event: object, envelope: Envelope | None = None) -> Memory:
    """Apply one event to the memory's state; `envelope` (when known) gives its time, author and position.

    The only place a memory's state is derived: the aggregate, the SQLite rows and the OpenSearch documents
    are all written from it. Each event type's case is one `_apply` below.
    """
    version = state.version + 1
    if envelope is None:
        step = Step(version, state.updated_at)
    else:
        step = Step(version, envelope.at, envelope.actor, envelope.position)
    if not state.exists and not isinstance(event, OPENING):  # an erased capture being replayed: nothing to show
        return replace(state, version=step.version)
    return _apply(event, state, step)


@singledispatch
def _apply(event: object, state: Memory, step: Step) -> Memory:
    raise TypeError(f"unknown event {event!r}")


@_apply.register
def _mirrored(event: MirrorSynced, state: Memory, step: Step) -> Memory:
    if event.kept:  # its integration was disconnected and its mirrors kept: an ordinary memory from now on
        return replace(state, mirror="", version=step.version)
    return replace(state, mirror=event.integration_id, origin=event.url or event.external_id,
                   mirror_hash=event.synced_hash, mirror_version=event.version, version=step.version)


@_apply.register
def _forgotten(event: MemoryForgotten, state: Memory, step: Step) -> Memory:
    return Memory(id=state.id, forgotten=True, version=step.version)


@_apply.register
def _captured(event: MemoryCaptured, state: Memory, step: Step) -> Memory:
    return replace(
        state, exists=True, content=event.content, tags=event.tags, source=event.source, workspace=event.workspace,
        actor=step.actor, created_at=step.at, updated_at=step.at, version=step.version, content_version=1,
        position=step.position,
    )


@_apply.register
def _imported(event: MemoryImported, state: Memory, step: Step) -> Memory:  # restored as it was: times, counters
    return replace(
        state, exists=True, content=event.content, tags=event.tags, source=event.source, workspace=event.workspace,
        actor=step.actor, created_at=event.created_at, updated_at=event.updated_at, importance=event.importance_score,
        recall_count=event.recall_count, use_count=event.use_count, contradiction_wins=event.contradiction_wins,
        contradiction_losses=event.contradiction_losses, version=step.version, content_version=1,
        position=step.position,
    )


@_apply.register
def _appended(event: MemoryAppended, state: Memory, step: Step) -> Memory:
    return _rewritten(state, appended(state.content, event), step)


@_apply.register
def _revised(event: MemoryRevised, state: Memory, step: Step) -> Memory:
    return _rewritten(state, event.content, step)


def _rewritten(state: Memory, content: str, step: Step) -> Memory:
    return replace(state, content=content, updated_at=step.at, version=step.version,
                   content_version=state.content_version + 1)


@_apply.register
def _tagged(event: TagsChanged, state: Memory, step: Step) -> Memory:
    return _retagged(state, event.tags, step)


@_apply.register
def _status(event: StatusChanged, state: Memory, step: Step) -> Memory:
    return _retagged(state, tuple(text.with_prefixed(list(state.tags), "status:", event.status)), step)


def _retagged(state: Memory, tags: tuple[str, ...], step: Step) -> Memory:
    revived = state.deprecated and text.DEPRECATED not in tags  # its vectors are needed again
    return replace(state, tags=tags, updated_at=step.at, version=step.version,
                   content_version=state.content_version + revived)


@_apply.register
def _judged(event: StalenessJudged, state: Memory, step: Step) -> Memory:  # bookkeeping: the memory is unchanged
    kept = tuple(t for t in state.tags if t != "stale:as-of")
    return replace(state, tags=(*kept, "stale:as-of") if event.stale else kept, version=step.version)


@_apply.register
def _rolled_up(event: MemoryRolledUp, state: Memory, step: Step) -> Memory:  # its text and time stay as they were
    return replace(state, tags=tuple(text.dedupe([*state.tags, text.ROLLED_UP])), version=step.version)


@_apply.register
def _released(event: MemoryReleased, state: Memory, step: Step) -> Memory:
    return replace(state, tags=tuple(t for t in state.tags if t != text.ROLLED_UP), version=step.version)


@_apply.register
def _classified(event: MemoryClassified, state: Memory, step: Step) -> Memory:
    return replace(state, tags=classified_tags(state.tags, event), importance=event.importance, version=step.version)


@_apply.register
def _recalled(event: MemoryRecalled, state: Memory, step: Step) -> Memory:
    return replace(state, recall_count=state.recall_count + 1, last_recalled=event.day, version=step.version)


@_apply.register
def _opened(event: MemoryOpened, state: Memory, step: Step) -> Memory:
    return replace(state, use_count=state.use_count + 1, last_used=event.day, version=step.version)


@_apply.register
def _won(event: ContradictionWon, state: Memory, step: Step) -> Memory:
    return replace(state, contradiction_wins=state.contradiction_wins + 1, version=step.version)


@_apply.register
def _lost(event: ContradictionLost, state: Memory, step: Step) -> Memory:
    return replace(state, contradiction_losses=state.contradiction_losses + 1, version=step.version)


@_apply.register
def _moved(event: MemoryShared | MemoryUnshared, state: Memory, step: Step) -> Memory:
    return replace(state, workspace=event.workspace, updated_at=step.at, version=step.version)


@_apply.register
def _anchored(event: TimeAnchorSet, state: Memory, step: Step) -> Memory:
    return replace(state, when_at=event.when_at, when_kind=event.when_kind, version=step.version)


@_apply.register
def _unanchored(event: TimeAnchorCleared, state: Memory, step: Step) -> Memory:
    return replace(state, when_at=None, version=step.version)


@_apply.register  # ReminderPushed: the push sender's note; the rest point at other memories
def _counted(event: Erased | DuplicateSuspected | ReminderPushed | DigestComposed | MemoryDrawnInto | WordsErased,
             state: Memory,
             step: Step) -> Memory:
    return replace(state, version=step.version)


def counted_only(cls: type[T]) -> type[T]:
    """Fold events of `cls` (defined in another domain module: a note about another memory, an answer about a
    pair) by counting them in the stream's version and changing nothing else."""
    _apply.register(cls, lambda event, state, step: replace(state, version=step.version))
    return cls


def fold(envelopes: Iterable[Envelope], state: Memory) -> Memory:
    """The state after these stored events: a whole stream from `Memory(id)`, or the rest of one."""
    for envelope in envelopes:
        state = evolve(state, envelope.event, envelope)
    return state


def digest_eligible(memory: Memory, now: int) -> bool:
    """Whether nightly compression may roll this memory into a digest (which tags it is rolled under aside).

    Adapters that count candidates in their query language translate exactly these conditions.
    """
    return digest_candidate(memory) and (memory.recall_count == 0
                                         or memory.created_at < now - DIGEST_RECALL_GRACE_MS)


def digest_candidate(memory: Memory) -> bool:
    """The part of `digest_eligible` that does not depend on the time: read models keep it as a count, and only
    the memories recalled once within the grace period are taken away at the time of asking."""
    return (memory.importance < text.PROTECTED_IMPORTANCE and memory.contradiction_wins == 0
            and memory.recall_count < 2 and not any(tag in text.NEVER_DIGESTED for tag in memory.tags)
            and memory.source != text.SYSTEM_SOURCE)


def appended(content: str, event: MemoryAppended) -> str:
    """The content after an append: the original kept, the addition under a dated label."""
    return f"{content}\n\n[Update {event.dated}]: {event.addition}"


def classified_tags(tags: tuple[str, ...], event: MemoryClassified) -> tuple[str, ...]:
    """The tags after a classification: its kind; its volatility and canonical status only where none was set."""
    result = text.with_prefixed(list(tags), "kind:", event.kind)
    if event.volatility and not any(t.startswith("volatility:") for t in result):
        result.append(f"volatility:{event.volatility}")
    if event.canonical and not any(t.startswith("status:") for t in result):
        result.append("status:canonical")
    return tuple(result)


def validate(command: Command) -> None:
    """Input checks that hold whatever the memory's state: bad input is a 400 before it is a 404."""
    if isinstance(command, Import):
        text.check_length(command.content)  # first, as an import always said
        _required(command.content, "content")
        if command.when_at is not None and (command.when_kind or "wake") not in WHEN_KINDS:
            raise InvalidInput("when_kind must be one of: due, event, wake")
    if isinstance(command, (Capture, Update)):
        text.check_length(_required(command.content, "content"))
    if isinstance(command, Append):
        text.check_length(_required(command.addition, "addition"))
    if isinstance(command, (Capture, Append, Update)):
        text.check_volatility(command.volatility)
    if isinstance(command, SetStatus) and command.status not in text.STATUSES:
        raise InvalidInput("status must be one of: canonical, draft, deprecated")
    if isinstance(command, SetTimeAnchor) and command.when_kind and command.when_kind not in WHEN_KINDS:
        raise InvalidInput("when_kind must be one of: due, event, wake")


def _required(value: str, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"Missing or empty {name}")
    return value


def _capture(command: Capture, state: Memory) -> list[object]:
    if state.exists or state.forgotten:
        raise InvalidInput(f"An entry with ID {state.id} already exists")
    content = _required(command.content, "content").strip()
    text.check_volatility(command.volatility)
    content, hashtags = text.extract_hashtags(content)
    tags = text.normalize_tags([*command.tags, *hashtags])
    tags = text.with_prefixed(tags, "volatility:", command.volatility)
    source = (command.source or "api").strip() or "api"
    return [MemoryCaptured(content, tuple(tags), source, command.workspace)]


def _import(command: Import) -> list[object]:
    events: list[object] = [MemoryImported(
        command.content, tuple(text.normalize_tags(list(command.tags))), command.source.strip() or "api",
        command.workspace, command.created_at, command.updated_at, command.recall_count, command.importance_score,
        command.contradiction_wins, command.contradiction_losses, command.use_count,
    )]
    if command.when_at is not None:
        events.append(TimeAnchorSet(command.when_at, command.when_kind or "wake"))
    return events


def _append(command: Append, state: Memory) -> list[object]:
    addition = _required(command.addition, "addition").strip()
    text.check_volatility(command.volatility)
    append = MemoryAppended(addition, command.dated)
    text.check_length(appended(state.content, append))
    events: list[object] = [append]
    tags = [t for t in state.tags if t.lower() != "stale:as-of"]
    tags = text.with_prefixed(tags, "volatility:", command.volatility)
    if tuple(tags) != state.tags:
        events.append(TagsChanged(tuple(tags)))
    return events


def _retag(command: Retag, state: Memory) -> list[object]:
    add = text.normalize_tags(list(command.add))
    remove = set(text.normalize_tags(list(command.remove)))
    if not add and not remove:
        raise InvalidInput("add or remove at least one tag")
    owned = next((t for t in [*add, *remove] if not text.is_topic_tag(t) and not t.isdigit()), None)
    if owned:
        raise InvalidInput(f"{text.shorten(owned)} is set by the brain, not as a tag: use status, share or project")
    # A tag both added and taken off stays as it is; the others keep their places, new ones go last.
    kept = [t for t in state.tags if t not in remove or t in add]
    tags = tuple(text.dedupe([*kept, *(t for t in add if t not in kept)]))
    text.normalize_tags(list(tags))  # the limits hold for the result too
    return [] if tags == state.tags else [TagsChanged(tags)]


def _update(command: Update, state: Memory) -> list[object]:
    content = _required(command.content, "content").strip()
    text.check_volatility(command.volatility)
    content, hashtags = text.extract_hashtags(content)
    if command.tags is None:
        tags = text.dedupe([*state.tags, *hashtags])
    else:
        owned = [t for t in state.tags if text.is_worker_owned(t)]
        tags = text.dedupe([*owned, *text.normalize_tags([*command.tags, *hashtags])])
    # New content may change how long it stays true: volatility is re-judged, not carried over.
    tags = [t for t in tags
            if t.lower() not in ("stale:as-of", "rolled-up") and not t.lower().startswith("volatility:")]
    tags = text.with_prefixed(tags, "volatility:", command.volatility)
    text.normalize_tags(tags)  # the limits hold for the result too
    events: list[object] = []
    if content != state.content:
        events.append(MemoryRevised(content))
    if tuple(tags) != state.tags:
        events.append(TagsChanged(tuple(tags)))
    return events
