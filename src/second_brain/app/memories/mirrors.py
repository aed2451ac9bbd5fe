"""Managed mirrors: the memory side of an integration's sync (app/integrations says what upstream holds; the
mirror's events are decided here, by domain/capture.py and domain/mirrors.py, and appended here).

A new mirror is judged as a capture is: its text claimed (a capture of the same words later is a repeat of it),
what it resembles flagged beside it (never merged, replaced, blocked or retired, nor does it retire anything),
classified, and timed by its own words when its system gives it no time. An existing one is revised in place.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...domain.capture import STORE, decide_capture, for_mirror
from ...domain.events import ContentClaimed, Envelope, MemoryCaptured, memory_stream
from ...domain.memory import Memory
from ...domain.mirrors import Upstream, decide_release, decide_sync
from ..handling import Context, envelopes, retrying
from .streams import MemoryStreams

__all__ = ["Mirrored", "Mirrors", "Upstream"]

Beside = Callable[[], list[Envelope]]  # the caller's own events to append with a new mirror's (asked at each attempt)


@dataclass(frozen=True)
class Mirrored:
    """What a sync of one item did to its mirror: "created", "updated" or "unchanged"; whether the memory mirrors
    the item as synced now (not when it is another's, or was forgotten); and what it appended (the mirror's events
    and those `beside` gave)."""

    outcome: str
    mirrors: bool = True
    stored: list[Envelope] = field(default_factory=list)


class Mirrors:
    def __init__(self, streams: MemoryStreams) -> None:
        self.streams = streams

    def sync(self, ctx: Context, memory_id: str, upstream: Upstream, workspace: str,
             when: tuple[int, str] | None = None, said_at: int | None = None, known: Memory | None = None,
             beside: Beside = list) -> Mirrored:
        """Create or bring up to date the mirror `memory_id` of one item (`when`: the time its system gives it;
        `said_at`: when its words were written). A mirror forgotten by its integration stays forgotten (a later
        generation's id is used instead); a memory that is another integration's, or an ordinary one now, is left
        alone. `known`: the mirror as the caller just read it (the first attempt's). `beside` gives events of
        other streams to append with a new mirror, in the same batch (the integration's note of it); after a lost
        race it is asked again."""
        streams = self.streams
        read = [known] if known is not None else []

        def attempt() -> Mirrored:
            memory = read.pop() if read else streams.state_of(memory_id)[0]
            if not memory.exists:
                if memory.forgotten:
                    return Mirrored("unchanged", mirrors=False)
                stored = self._create(ctx, memory_id, upstream, workspace, when, said_at, beside)
                return Mirrored("created", stored=stored)
            if memory.mirror != upstream.integration_id:
                return Mirrored("unchanged", mirrors=False)
            unchanged = memory.mirror_hash == upstream.synced_hash
            # its time: the event's (moved), else what its new words name, else none (what the old words named)
            anchor = when if when is not None or unchanged else self.anchor_in_words(upstream.content,
                                                                                     upstream.source, said_at)
            stored = self.streams.write(ctx, memory, decide_sync(memory, upstream, anchor))
            return Mirrored("unchanged" if unchanged else "updated", stored=stored)

        return retrying(attempt)

    def release(self, ctx: Context, memory_id: str, integration_id: str, source: str, external_id: str) -> None:
        """A mirror made an ordinary memory (its integration disconnected with the mirrors kept)."""

        def attempt() -> None:
            memory = self.streams.state_of(memory_id)[0]
            self.streams.write(ctx, memory, decide_release(memory, integration_id, source, external_id))

        retrying(attempt)

    def prepare(self, contents: Sequence[str]) -> None:
        """Embed ahead, together, the texts of the mirrors a sync is about to make (each is then judged alone)."""
        if self.streams.triage and contents:
            self.streams.triage.prepare(contents)

    def anchor_in_words(self, content: str, source: str, said_at: int | None = None) -> tuple[int, str] | None:
        """The time a mirror's words name, read from when they were written (`said_at`: a 2019 mail's "tomorrow"
        is a day in 2019), as a capture reads them; None if none, or if that time has passed (history, not a
        reminder)."""
        now = self.streams.clock.now_ms()
        at = min(said_at, now) if said_at is not None else now
        said = self.streams.said_when(MemoryCaptured(content, (), source, ""), at)
        return (said.when_at, said.when_kind) if said is not None and said.when_at >= now else None

    def _create(self, ctx: Context, memory_id: str, upstream: Upstream, workspace: str,
                when: tuple[int, str] | None, said_at: int | None, beside: Beside) -> list[Envelope]:
        """A new mirror's capture, judged as a capture is; words a memory already holds stay claimed by it."""
        streams = self.streams
        captured = MemoryCaptured(upstream.content, upstream.tags, upstream.source, workspace)
        text_stream, claims, holders = streams.claims(workspace, upstream.content)
        repeat = streams.repeat(ctx, holders, captured)
        verdict = for_mirror(repeat or (
            streams.triage.assess(captured.content, workspace) if streams.triage else STORE))
        anchor = when if when is not None else self.anchor_in_words(captured.content, captured.source, said_at)
        decision = decide_capture(memory_id, captured, anchor, verdict, streams.as_judged(ctx, verdict))
        now = streams.clock.now_ms()
        mirrored = upstream.synced()
        batch = [e for change in decision.changes
                 for e in envelopes(ctx, change.stream_id, change.version,
                                    [*change.events, *([mirrored] if change.stream_id == memory_stream(memory_id)
                                                       else [])], change.workspace, now)]
        if repeat is None:  # else the memory that holds these words keeps its claim
            batch += envelopes(ctx, text_stream, claims[-1].version if claims else 0, [ContentClaimed(memory_id)],
                               workspace, now)
        return streams.store.append([*batch, *beside()])
