"""Forget: a memory erased, and in the same atomic append every memory written from its words, every claim on
its texts and every event of another memory that quoted them; taking a memory back from the team erases what the
team's digests and patterns drew from it."""

from ...domain import patterns
from ...domain.capture import content_stream
from ...domain.conflicts import ConflictAnswered, parse_item
from ...domain.events import (
    ContentClaimed,
    ContentReleased,
    ContradictionLost,
    ContradictionWon,
    DigestComposed,
    Envelope,
    MemoryCaptured,
    MemoryForgotten,
    MemoryImported,
    MemoryReleased,
    MemoryRevised,
    MemoryRolledUp,
    TagsChanged,
    TimeAnchorSet,
    WordsErased,
    memory_stream,
)
from ...domain.integrations import refused
from ...domain.memory import Memory, evolve
from ..handling import Context, envelopes, retrying
from ..handling import system as system_context
from .conflicts import batch_of
from .streams import MemoryStreams, may_change, rolled_into

# What a merge (or replacement) wrote of the note it took in, on the memory it took it into.
FOLDED = (MemoryRevised, TagsChanged, TimeAnchorSet)


class Erasure:
    def __init__(self, streams: MemoryStreams) -> None:
        self.streams = streams

    def forget(self, ctx: Context, memory_id: str, managed: bool = False) -> Memory:
        """Erase a memory, and in the same atomic append every memory written from its words: the digest it was
        rolled into (whose other sources are released) and the patterns drawn from it (taking it back from the team
        does the same). A forgotten digest releases its sources too. A managed mirror is forgotten only by its
        integration (`managed`): through the API it answers where to delete it instead."""
        memory_id = memory_id.strip()
        streams = self.streams

        def attempt() -> Memory:
            with streams.writing(memory_id):
                state, history = streams.load(ctx, memory_id)
                may_change(ctx, state)
                if state.mirror and not managed:
                    raise refused(state.source, state.origin)
                now = streams.clock.now_ms()
                batch = envelopes(ctx, memory_stream(memory_id), state.version, [MemoryForgotten()],
                                  state.workspace, now)
                streams.store.append(batch + self.derived(state, history, now) + self._quoting(state, history, now)
                                     + self._released_claims(ctx, state, history, now))
                return evolve(state, MemoryForgotten())

        return retrying(attempt)

    def derived(self, memory: Memory, history: list[Envelope], now: int) -> list[Envelope]:
        """The events that erase what the brain wrote from this memory's words, as the system."""
        # One level is all there is: what the brain writes (source `system`) is never rolled up or drawn from.
        made = {e.event.digest_id if isinstance(e.event, MemoryRolledUp) else e.event.pattern_id
                for e in history if isinstance(e.event, (MemoryRolledUp, patterns.MemoryDrawnInto))}
        derived = {d: self.streams.state_of(d) for d in made}
        derived = {i: (m, h) for i, (m, h) in derived.items() if m.exists}
        released: dict[str, tuple[Memory, str]] = {}  # each source freed, and the digest it was rolled into
        for digest_id, (_, digest_history) in [(memory.id, (memory, history)), *derived.items()]:
            for event in (e.event for e in digest_history if isinstance(e.event, DigestComposed)):
                for source in event.sources:
                    if source != memory.id and source not in released and source not in derived:
                        state, source_history = self.streams.state_of(source)
                        if state.exists and rolled_into(source_history) == digest_id:
                            released[source] = (state, digest_id)
        batch = []
        changes: list[tuple[Memory, list[object]]] = [(m, [MemoryForgotten()]) for m, _ in derived.values()]
        changes += [(m, [MemoryReleased(d)]) for m, d in released.values()]
        for target, events in changes:
            system = system_context(target.workspace, f"forget-{memory.id}")
            batch += envelopes(system, memory_stream(target.id), target.version, events, target.workspace, now)
        return batch

    def _quoting(self, memory: Memory, history: list[Envelope], now: int) -> list[Envelope]:
        """A `WordsErased` on each other memory whose history quotes this one: its side of a contradiction between
        the two (a model's reason may quote either note; the rules' reasons are fixed sentences, but which wrote
        it is not kept), and the revision that took this memory's text in before a "keep both" split it out again
        as this memory. Each side of both records names the other, so this memory's own history finds them."""
        quoted: dict[str, set[int]] = {}
        for event in (e.event for e in history):
            if isinstance(event, ContradictionWon | ContradictionLost):
                quoted.setdefault(event.other_id, set())
            elif isinstance(event, ConflictAnswered) and event.kind in ("merged", "replaced") and event.other_id:
                other_id, version = parse_item(event.item)
                if other_id == event.other_id:
                    quoted.setdefault(other_id, set()).add(version)
        batch: list[Envelope] = []
        for other_id, folded_at in quoted.items():
            if other_id == memory.id:
                continue
            state, other_history = self.streams.state_of(other_id)
            if not state.exists:
                continue
            versions = {e.version for e in other_history
                        if isinstance(e.event, ContradictionWon | ContradictionLost) and e.event.other_id == memory.id}
            for made in (e for e in other_history if e.version in folded_at):
                start, end = batch_of(other_history, made)
                versions.update(e.version for e in other_history[start:end] if isinstance(e.event, FOLDED))
            if versions:
                system = system_context(state.workspace, f"forget-{memory.id}")
                batch += envelopes(system, memory_stream(other_id), state.version,
                                   [WordsErased(memory.id, tuple(sorted(versions)))], state.workspace, now)
        return batch

    def _released_claims(self, ctx: Context, memory: Memory, history: list[Envelope], now: int) -> list[Envelope]:
        """A tombstone on the claim stream of every text the memory held or took in (captured, imported, revised,
        merged in), wherever it claimed it: which memory held which text is erased with it. Where another memory
        claimed the text since, its claim is made again after the tombstone, so it keeps its text."""
        texts = {memory.content}
        workspaces = {memory.workspace}
        for event in (e.event for e in history):
            if isinstance(event, MemoryCaptured | MemoryImported):
                texts.add(event.content)
                workspaces.add(event.workspace)
            elif isinstance(event, MemoryRevised):
                texts.update(t for t in (event.content, event.note) if t)
        key = self.streams.content_key
        keys = [key] + ([None] if self.streams.legacy_claims and key else [])
        streams = dict.fromkeys(content_stream(w, t, k) for k in keys for w in workspaces for t in texts)
        batch: list[Envelope] = []
        for stream_id in streams:
            claims = self.streams.store.read_stream(stream_id)
            held = [e for e in claims if isinstance(e.event, ContentClaimed)]
            if not any(e.event.memory_id == memory.id for e in held):
                continue
            events: list[object] = [ContentReleased()]
            if held[-1] is claims[-1] and held[-1].event.memory_id != memory.id:
                events.append(ContentClaimed(held[-1].event.memory_id))  # the text is still another memory's
            batch += envelopes(ctx, stream_id, len(claims), events, claims[-1].workspace, now)
        return batch
