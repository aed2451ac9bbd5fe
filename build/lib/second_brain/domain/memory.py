"""The memory aggregate as two pure functions: decide(command, state) and evolve(state, event)."""

from dataclasses import dataclass, replace

from . import text
from .commands import (
    Append,
    Capture,
    ChangeTags,
    ClearTimeAnchor,
    Command,
    Forget,
    RecordRecall,
    SetStatus,
    SetTimeAnchor,
    Update,
)
from .errors import InvalidInput, NotFound
from .events import (
    ContradictionLost,
    ContradictionWon,
    DuplicateSuspected,
    Erased,
    MemoryAppended,
    MemoryCaptured,
    MemoryClassified,
    MemoryForgotten,
    MemoryImported,
    MemoryRecalled,
    MemoryRevised,
    StatusChanged,
    TagsChanged,
    TimeAnchorCleared,
    TimeAnchorSet,
)

WHEN_KINDS = ("due", "event", "wake")

# Tags the brain owns: an explicit tag list on update replaces the caller's tags, never these.
WORKER_OWNED_PREFIXES = ("kind:", "status:", "volatility:", "stale:")
WORKER_OWNED_MARKERS = frozenset(
    {"auto-pattern", "auto-insight", "synthesized", "rolled-up", "duplicate-candidate", "contradiction-resolved"}
)


@dataclass(frozen=True)
class Memory:
    id: str
    exists: bool = False
    forgotten: bool = False
    content: str = ""
    tags: tuple[str, ...] = ()
    source: str = ""
    workspace: str = ""
    last_recalled: str = ""
    when_at: int | None = None
    when_kind: str = ""
    importance: int = 0
    version: int = 0


def decide(command: Command, state: Memory) -> list[object]:
    """Turn a command into the events it causes, or raise if the command is not allowed."""
    validate(command)
    if isinstance(command, Capture):
        return _capture(command, state)
    if not state.exists:
        raise NotFound(f"No entry found with ID: {state.id}")
    if isinstance(command, Append):
        return _append(command, state)
    if isinstance(command, Update):
        return _update(command, state)
    if isinstance(command, SetStatus):
        return [StatusChanged(command.status)]
    if isinstance(command, ChangeTags):
        tags = tuple(text.normalize_tags(list(command.tags)))
        return [] if tags == state.tags else [TagsChanged(tags)]
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
    if isinstance(command, Forget):
        return [MemoryForgotten()]
    raise TypeError(f"unknown command {command!r}")


def evolve(state: Memory, event: object) -> Memory:
    """Apply one event to the memory's state."""
    version = state.version + 1
    if isinstance(event, MemoryCaptured):
        return replace(
            state, exists=True, content=event.content, tags=event.tags, source=event.source,
            workspace=event.workspace, version=version,
        )
    if isinstance(event, MemoryImported):
        return replace(
            state, exists=True, content=event.content, tags=event.tags, source=event.source,
            workspace=event.workspace, importance=event.importance_score, version=version,
        )
    if isinstance(event, MemoryAppended):
        return replace(state, content=appended(state.content, event), version=version)
    if isinstance(event, MemoryRevised):
        return replace(state, content=event.content, version=version)
    if isinstance(event, TagsChanged):
        return replace(state, tags=event.tags, version=version)
    if isinstance(event, StatusChanged):
        return replace(state, tags=tuple(text.with_prefixed(list(state.tags), "status:", event.status)), version=version)
    if isinstance(event, MemoryRecalled):
        return replace(state, last_recalled=event.day, version=version)
    if isinstance(event, TimeAnchorSet):
        return replace(state, when_at=event.when_at, when_kind=event.when_kind, version=version)
    if isinstance(event, TimeAnchorCleared):
        return replace(state, when_at=None, version=version)
    if isinstance(event, MemoryClassified):
        return replace(state, tags=classified_tags(state.tags, event), importance=event.importance, version=version)
    if isinstance(event, MemoryForgotten):
        return Memory(id=state.id, forgotten=True, version=version)
    if isinstance(event, (Erased, DuplicateSuspected, ContradictionWon, ContradictionLost)):
        return replace(state, version=version)
    raise TypeError(f"unknown event {event!r}")


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


def _append(command: Append, state: Memory) -> list[object]:
    addition = _required(command.addition, "addition").strip()
    text.check_volatility(command.volatility)
    events: list[object] = [MemoryAppended(addition, command.dated)]
    text.check_length(appended(state.content, events[0]))  # type: ignore[arg-type]
    tags = [t for t in state.tags if t.lower() != "stale:as-of"]
    tags = text.with_prefixed(tags, "volatility:", command.volatility)
    if tuple(tags) != state.tags:
        events.append(TagsChanged(tuple(tags)))
    return events


def _update(command: Update, state: Memory) -> list[object]:
    content = _required(command.content, "content").strip()
    text.check_volatility(command.volatility)
    content, hashtags = text.extract_hashtags(content)
    if command.tags is None:
        tags = text.dedupe([*state.tags, *hashtags])
    else:
        owned = [t for t in state.tags if _worker_owned(t)]
        tags = text.dedupe([*owned, *text.normalize_tags([*command.tags, *hashtags])])
    # New content may change how long it stays true: volatility is re-judged, not carried over.
    tags = [t for t in tags if t.lower() not in ("stale:as-of", "rolled-up") and not t.lower().startswith("volatility:")]
    tags = text.with_prefixed(tags, "volatility:", command.volatility)
    text.normalize_tags(tags)  # the limits hold for the result too
    events: list[object] = []
    if content != state.content:
        events.append(MemoryRevised(content))
    if tuple(tags) != state.tags:
        events.append(TagsChanged(tuple(tags)))
    return events


def _worker_owned(tag: str) -> bool:
    lowered = tag.lower()
    return lowered.startswith(WORKER_OWNED_PREFIXES) or lowered in WORKER_OWNED_MARKERS
