"""A managed mirror's decisions after its first capture (domain/capture.py judges that one, `for_mirror`): what a
sync brings changes the mirror in place, and a disconnect that keeps the mirrors makes them ordinary memories.

Pure functions of the mirror's state, like domain/memory.decide: the memory service (app/memories/mirrors.py) loads,
decides here and appends; the integration service only says what upstream holds.
"""

from dataclasses import dataclass

from .conflicts import FLAG_TAGS
from .events import MemoryRevised, TagsChanged, TimeAnchorCleared, TimeAnchorSet
from .integrations import MirrorSynced
from .memory import Memory

BRAINS_OWN_TAGS = frozenset({*FLAG_TAGS, "task"})  # what capture's judgement and the reminders add to a mirror


@dataclass(frozen=True)
class Upstream:
    """One item as its integration's sync read it: what its mirror should say, and where it is upstream."""

    integration_id: str
    source: str
    external_id: str
    url: str
    content: str
    tags: tuple[str, ...]
    synced_hash: str
    version: str = ""

    def synced(self) -> MirrorSynced:
        """The event that ends a mirror's every sync: which item it mirrors, as synced."""
        return MirrorSynced(self.integration_id, self.source, self.external_id, self.url, self.synced_hash,
                            version=self.version)


def decide_sync(state: Memory, upstream: Upstream, anchor: tuple[int, str] | None) -> list[object]:
    """The events that bring an existing mirror up to date with its item: none when it is another integration's
    (or an ordinary memory now); only the `MirrorSynced` when the same words moved upstream (a message saved again:
    noted, so the next sync does not read it again); else its new words, its tags (upstream's, and the brain's own
    that upstream never has) and its time (`anchor`: the item's, else what its new words name; None takes away the
    time the old words named)."""
    if state.mirror != upstream.integration_id:
        return []
    if state.mirror_hash == upstream.synced_hash:
        moved = (state.origin, state.mirror_version) != (upstream.url or upstream.external_id, upstream.version)
        return [upstream.synced()] if moved else []
    changes: list[object] = []
    if state.content != upstream.content:
        changes.append(MemoryRevised(upstream.content, "synced"))
    if set(kept := kept_tags(state.tags, upstream.tags)) != set(state.tags):
        changes.append(TagsChanged(kept))
    if anchor is not None and (state.when_at, state.when_kind) != anchor:
        changes.append(TimeAnchorSet(*anchor))
    elif anchor is None and state.when_at is not None:
        changes.append(TimeAnchorCleared())
    return [*changes, upstream.synced()]


def decide_release(state: Memory, integration_id: str, source: str, external_id: str) -> list[object]:
    """A mirror made an ordinary memory, its integration disconnected with the mirrors kept."""
    return [MirrorSynced(integration_id, source, external_id, state.origin, "", True)]


def kept_tags(current: tuple[str, ...], synced: tuple[str, ...]) -> tuple[str, ...]:
    """The upstream tags, and the brain's own that upstream never has (status, kind, importance: `x:y` tags; what
    its capture flagged)."""
    own = [t for t in current if (":" in t or t in BRAINS_OWN_TAGS) and t not in synced]
    return tuple(dict.fromkeys([*synced, *own]))
