"""Each revision of a memory, read off its stream: what every content change (capture or import, append, update,
merge, replace) made the text, the line diff against the revision before, and the tags and status it left.

The states come from the one fold (`memory.evolve`); a revision shows the memory as the request that changed it
left it, so a merge's tag change, or a capture's classification, appended in the same batch belongs to it.
"""

import difflib
from typing import Any

from ...domain import shown
from ...domain.errors import NotFound
from ...domain.events import Envelope, memory_stream
from ...domain.identity import Identity
from ...domain.memory import Memory, evolve
from ...domain.text import shorten
from ...ports.event_store import EventStore
from ...ports.read_model import EntryReads
from ..handling import Context
from ..memories.views import actor_name


def status(memory: Memory) -> str | None:
    return next((tag.removeprefix("status:") for tag in memory.tags if tag.startswith("status:")), None)


def diff(before: str, after: str, version: int) -> str:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), f"v{version - 1}", f"v{version}",
                                 lineterm="")
    return "\n".join(lines)


def revisions(memory_id: str, events: list[Envelope], identity: Identity) -> list[dict[str, Any]]:
    """The revisions of one memory's stream that the caller may see, oldest first; none for a stream that does not
    hold a memory. Revisions made while it lived in a workspace the caller cannot read (a member's draft before
    they shared it) are left out: the caller sees the text as it was when it reached them, then what changed."""
    state = Memory(id=memory_id)
    found: list[dict[str, Any]] = []
    opened: tuple[str, int] | None = None  # the batch of the latest revision: its later events belong to it
    for envelope in events:
        state = evolve(state, envelope.event, envelope)
        if not state.exists:
            return []
        visible = state.workspace in identity.readable
        reason = shown.revision(envelope.event)  # None: the text is as it was
        arrived = shown.row(envelope.event).moves and visible and not (found and found[-1]["visible"])
        if reason is not None or arrived:
            found.append({"at": envelope.at, "actor_name": actor_name(identity, envelope.actor),
                          "reason": "shared" if arrived else reason, "content": state.content, "visible": visible})
            opened = (envelope.request_id, envelope.at)
        elif (envelope.request_id, envelope.at) != opened:
            opened = None
        if opened is not None and found:
            found[-1] |= {"tags": list(state.tags), "status": status(state)}
    seen = [r for r in found if r.pop("visible")]
    for version, revision in enumerate(seen, 1):
        previous = seen[version - 2]["content"] if version > 1 else None
        revision.update(version=version, diff=None if previous is None else diff(previous, revision["content"],
                                                                                 version))
    return [{k: r[k] for k in ("version", "at", "actor_name", "reason", "content", "diff", "tags", "status")
             if k in r} for r in seen]


def entry_revisions(store: EventStore, read_model: EntryReads, ctx: Context, memory_id: str) -> list[dict[str, Any]]:
    """A memory the caller can read, revision by revision; any other id is not found, as if it never existed."""
    memory_id = memory_id.strip()
    if read_model.get(memory_id, ctx.identity.readable) is None:
        raise NotFound(f"No entry found with ID: {shorten(memory_id)}")
    found = revisions(memory_id, store.read_stream(memory_stream(memory_id)), ctx.identity)
    if not found:  # forgotten since the read model was written (a projection that lags)
        raise NotFound(f"No entry found with ID: {shorten(memory_id)}")
    return found
