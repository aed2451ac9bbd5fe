"""How entries and their timelines look to clients (shared by REST and, later, MCP)."""

from collections.abc import Set as AbstractSet
from typing import Any

from ...domain import shown
from ...domain.events import Envelope, MemoryOpened, MemoryRecalled
from ...domain.identity import Identity
from ...domain.integrations import MirrorSynced
from ...ports.read_model import EntryRow

# What the /entry timeline and the audit feed call an event: its stored type name -> the name its row gives.
TIMELINE_NAMES = {type_name: row.name for type_name, row in shown.NAMES.items() if row.name}


REFERENCES = ("match_id", "other_id", "digest_id", "pattern_id")  # payload fields naming another memory


def actor_name(identity: Identity, actor: str) -> str:
    return identity.name_of(actor)


def entry_view(row: EntryRow, identity: Identity) -> dict[str, Any]:
    """An entry as /list returns it: personal memories never name their author."""
    layer = identity.layer(row.workspace)
    return {
        "id": row.id,
        "content": row.content,
        "tags": list(row.tags),
        "source": row.source,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "importance_score": row.importance_score,
        "recall_count": row.recall_count,
        "contradiction_wins": row.contradiction_wins,
        "contradiction_losses": row.contradiction_losses,
        "workspace": layer,
        "actor_name": actor_name(identity, row.actor) if layer == "company" else None,
        "can_edit": identity.can_edit(row.workspace, row.actor),
        # Ours, beyond the reference's list: its time anchor (null when it has none), so every card can say it.
        "when_at": row.when_at,
        "when_kind": row.when_kind if row.when_at is not None else None,
    }


def managed_by(events: list[Envelope]) -> dict[str, str] | None:
    """Ours: the system a managed mirror is changed in (its source and the link to the original), for a client to
    offer that instead of edits the API would refuse (409); None for any other memory, a released mirror too."""
    synced = next((e.event for e in reversed(events) if isinstance(e.event, MirrorSynced)), None)
    return {"source": synced.source, "url": synced.url} if synced is not None and not synced.kept else None


def referenced_ids(events: list[Envelope]) -> set[str]:
    """The other memories a timeline names (the duplicate it resembled, the side of a contradiction)."""
    return {getattr(e.event, name) for e in events for name in REFERENCES if hasattr(e.event, name)}


def full_entry_view(row: EntryRow, identity: Identity, events: list[Envelope],
                    unreadable: AbstractSet[str] = frozenset()) -> dict[str, Any]:
    """An entry as /entry returns it: everything, its author and its audit timeline, where the id of a memory
    the caller cannot read (another member's, or one forgotten since) shows as null."""
    view = entry_view(row, identity)
    view["actor_name"] = actor_name(identity, row.actor)
    view["indexed"] = row.indexed
    view["use_count"] = row.use_count  # days someone opened it: what ranking counts, unlike recall_count
    view["when_at"] = row.when_at
    view["when_kind"] = row.when_kind if row.when_at is not None else None
    view["managed_by"] = managed_by(events)
    view["timeline"] = [timeline_item(e, identity) for e in events if shown_to(e, identity)]
    for item in view["timeline"]:
        for name in REFERENCES:
            if item["payload"].get(name) in unreadable:
                item["payload"][name] = None
    return view


def timeline_item(envelope: Envelope, identity: Identity) -> dict[str, Any]:
    return {
        "event": TIMELINE_NAMES.get(envelope.type, envelope.type),
        "created_at": envelope.at,
        "actor_name": actor_name(identity, envelope.actor),
        "payload": {"before_shared": True} if written_unseen(envelope, identity) else shown.payload(envelope.event),
    }


def shown_to(envelope: Envelope, identity: Identity) -> bool:
    """Whether one of a memory's events shows to this caller at all: who opened or recalled a memory is seen by
    that person and by admins only (on a company memory, the team would otherwise watch each other read)."""
    return (not isinstance(envelope.event, (MemoryRecalled, MemoryOpened)) or identity.role == "admin"
            or envelope.actor == identity.actor_id)


def written_unseen(envelope: Envelope, identity: Identity) -> bool:
    """Whether a memory's event was written while the memory lived where this caller cannot read (its author's
    own layer, before they shared it): such an event shows that it happened, never its details (tags, sizes)."""
    return envelope.workspace not in identity.readable
