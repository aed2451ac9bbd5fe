"""Commands: what a caller asks the brain to do to one memory."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Capture:
    content: str
    tags: tuple[str, ...] = ()
    source: str = "api"
    workspace: str = ""
    volatility: str | None = None


@dataclass(frozen=True)
class Append:
    addition: str
    dated: str
    volatility: str | None = None


@dataclass(frozen=True)
class Update:
    content: str
    tags: tuple[str, ...] | None = None  # None leaves the tag set alone (hashtags still merge in)
    volatility: str | None = None


@dataclass(frozen=True)
class SetStatus:
    status: str


@dataclass(frozen=True)
class ChangeTags:
    tags: tuple[str, ...]


@dataclass(frozen=True)
class Retag:
    """Topic tags added and removed, decided on the memory's current tags (the brain's own are kept)."""

    add: tuple[str, ...]
    remove: tuple[str, ...]


@dataclass(frozen=True)
class SetTimeAnchor:
    when_at: int
    when_kind: str
    now: int  # a snooze must move the anchor into the future


@dataclass(frozen=True)
class ClearTimeAnchor:
    pass


@dataclass(frozen=True)
class RecordRecall:
    day: str


@dataclass(frozen=True)
class RecordOpen:
    day: str


@dataclass(frozen=True)
class Forget:
    pass


@dataclass(frozen=True)
class Import:
    """A memory restored from an export as it was there: its times, counters and reminder."""

    content: str
    tags: tuple[str, ...]
    source: str
    workspace: str
    created_at: int
    updated_at: int
    recall_count: int = 0
    importance_score: int = 0
    contradiction_wins: int = 0
    contradiction_losses: int = 0
    use_count: int = 0
    when_at: int | None = None
    when_kind: str | None = None


Command = (Capture | Append | Update | SetStatus | ChangeTags | Retag | SetTimeAnchor | ClearTimeAnchor
           | RecordRecall | RecordOpen | Forget | Import)
