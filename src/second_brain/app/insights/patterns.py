"""Answering a proposed pattern: confirmed, it becomes an ordinary canonical memory that recall returns;
dismissed, it is deprecated (and, being on record, never proposed again)."""

import logging
import uuid
from collections.abc import Callable, Sequence
from functools import reduce
from zoneinfo import ZoneInfo

from ...domain import links, text
from ...domain import patterns as p
from ...domain.commands import ChangeTags, SetStatus
from ...domain.errors import ConcurrencyConflict, Forbidden, InvalidInput
from ...domain.events import Envelope, memory_stream
from ...domain.memory import Memory, decide, evolve, fold
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.llm import LanguageModel
from ...ports.read_model import Filters
from ...ports.vector_index import VectorIndex
from ..handling import Context, envelopes, retrying
from ..maintenance.runner import NIGHTLY, Budget, JobResult
from ..maintenance.sweep import first_events, system
from ..memories.service import MemoryService

ACTIONS = ("confirm", "dismiss")
MAX_IDS = 100
# The team's feed record of a decision on a company memory, appended with it: (ctx, memory id, action, workspace).
Note = Callable[[Context, str, str, str], list[Envelope]]


def awaiting(memory: Memory) -> bool:
    """A pattern the nightly job proposed that nobody has answered yet."""
    return not memory.deprecated and any(tag in text.AWAITING_CONFIRMATION for tag in memory.tags)


def confirmed_tags(tags: tuple[str, ...]) -> tuple[str, ...]:
    kept = [t for t in tags if t not in text.AWAITING_CONFIRMATION]
    return tuple(text.with_prefixed(text.with_prefixed(kept, "kind:", "semantic"), "status:", "canonical"))


class PatternService:
    def __init__(self, store: EventStore, memories: MemoryService, clock: Clock, note: Note | None = None) -> None:
        self.store = store
        self.memories = memories
        self.clock = clock
        self.note = note

    def resolve(self, ctx: Context, memory_id: str, action: str) -> Memory:
        """Confirm or dismiss one pattern; only someone who may change the memory may answer it."""
        if action not in ACTIONS:
            raise InvalidInput("action must be confirm or dismiss")
        memory_id = memory_id.strip()

        def attempt() -> Memory:
            state, _ = self.memories.load(ctx, memory_id)
            if not ctx.identity.can_edit(state.workspace, state.actor):
                raise Forbidden("Only the memory's author or an admin may change this memory")
            if not awaiting(state):
                raise InvalidInput(f"Entry {memory_id} is not a pattern awaiting confirmation")
            command = ChangeTags(confirmed_tags(state.tags)) if action == "confirm" else SetStatus("deprecated")
            events = decide(command, state)
            now = self.clock.now_ms()
            batch = envelopes(ctx, memory_stream(memory_id), state.version, events, state.workspace, now)
            if self.note and state.workspace in ctx.identity.company_workspaces:
                batch += self.note(ctx, memory_id, action, state.workspace)
            self.store.append(batch)
            return reduce(evolve, events, state)

        return retrying(attempt)


log = logging.getLogger("second_brain.patterns")
SEEDS_PER_RUN = 100  # memories that may seed a pattern, looked at per run (the reference: 25)
LOOKED_PER_RUN = 2_000  # memories read per run, seeds or not
PATTERNS_PER_RUN = 3
MODEL_MAX_CHARS = 2_000


def member(memory: Memory, history: Sequence[Envelope] = ()) -> p.Member:
    drawn = sum(isinstance(e.event, p.MemoryDrawnInto) for e in history)
    return p.Member(memory.id, memory.content, memory.tags, memory.source, memory.workspace, memory.created_at,
                    memory.importance, memory.version, drawn)


class PatternsJob:
    """The patterns job: memories that say the same thing a month or more apart become a proposed pattern
    (`auto-insight`, out of recall until someone confirms it), linked to its members by `drawn_from` edges and put on
    record so the same members never make a second one. The whole brain is swept over successive runs."""

    name = "patterns"
    schedule = NIGHTLY

    def __init__(self, store: EventStore, vectors: VectorIndex | None, llm: LanguageModel | None, clock: Clock,
                 timezone: Callable[[], ZoneInfo], new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
                 seeds_per_run: int = SEEDS_PER_RUN) -> None:
        self.store = store
        self.vectors = vectors  # None (no embedder): nothing to compare, nothing proposed
        self.llm = llm
        self.clock = clock
        self.timezone = timezone
        self.new_id = new_id
        self.seeds_per_run = seeds_per_run

    def run(self, budget: Budget, cursor: str) -> JobResult:
        result = JobResult(cursor=cursor)
        if self.vectors is None:
            return result
        position, found = int(cursor or 0), []
        result.cursor = ""  # swept to the head unless stopped: the next run starts over
        for first in first_events(self.store, position):
            if (budget.expired() or result.counts.get("seeds", 0) >= self.seeds_per_run
                    or result.counts.get("looked", 0) >= LOOKED_PER_RUN):
                result.cursor, result.complete = str(position), False
                break
            position = first.position
            result.add("looked")
            seed = self._member(first.memory_id)
            if seed is not None and p.may_seed(seed):
                result.add("seeds")
                if (found_here := self._cluster(seed)) is not None:
                    found.append(found_here)
        self._propose(found, result)
        return result

    def _member(self, memory_id: str) -> p.Member | None:
        """A memory as the rules read it, from its stream (with the version its text was read at)."""
        history = self.store.read_stream(memory_stream(memory_id))
        memory = fold(history, Memory(memory_id))
        return member(memory, history) if memory.exists else None

    def _cluster(self, seed: p.Member) -> p.Cluster | None:
        vectors = self.vectors
        vector = vectors.vector_of(seed.id) if vectors else None
        if vectors is None or vector is None:
            return None
        hits = vectors.search(vector, Filters((seed.workspace,)), p.NEIGHBOURS + 1)
        near = []
        for hit in hits:
            if hit.entry_id == seed.id or hit.score < p.MIN_COSINE:
                continue
            other = self._member(hit.entry_id)
            if other is not None and other.workspace == seed.workspace and p.may_seed(other):
                near.append((other, hit.score))
        return p.cluster(seed, near)

    def _propose(self, found: list[p.Cluster], result: JobResult) -> None:
        """The best clusters that are new, at most PATTERNS_PER_RUN, each one atomic append."""
        for candidate in sorted(found, key=lambda c: -c.score):
            if result.counts.get("proposed", 0) >= PATTERNS_PER_RUN:
                return
            workspace = candidate.seed.workspace
            record = self.store.read_stream(p.stream(workspace))
            earlier = [frozenset(e.event.members) for e in record if isinstance(e.event, p.PatternProposed)]
            if not p.is_novel(candidate.ids, earlier):
                result.add("not_novel")
                continue
            try:
                self._append(candidate, len(record))
            except ConcurrencyConflict:  # another run proposed meanwhile: judged again next run
                result.add("raced")
                continue
            result.add("proposed")

    def _append(self, found: p.Cluster, record_version: int) -> str:
        workspace, now, pattern_id = found.seed.workspace, self.clock.now_ms(), self.new_id()
        ctx = system(workspace, self.name, now)
        content = self._text(found)
        batch = envelopes(ctx, memory_stream(pattern_id), 0, p.proposal(content, workspace), workspace, now)
        for m in found.members:  # the pattern's stream comes first: an edge is shown once both ends exist
            source, target = links.endpoints(pattern_id, m.id, "drawn_from", internal=True)
            batch += envelopes(ctx, links.edge_stream(source, target, "drawn_from"), 0,
                               [links.LinkCreated(source, target, "drawn_from", 1.0, "system")], workspace, now)
            # at the version its text was read: a member forgotten or changed since makes the append fail
            batch += envelopes(ctx, memory_stream(m.id), m.version, [p.MemoryDrawnInto(pattern_id)], workspace, now)
        batch += envelopes(ctx, p.stream(workspace), record_version,
                           [p.PatternProposed(pattern_id, tuple(sorted(found.ids)))], workspace, now)
        self.store.append(batch)
        return pattern_id

    def _text(self, found: p.Cluster) -> str:
        """The model's account of what recurs, from the members alone; without one (or when it fails), the
        members' own first sentences under their dates."""
        if self.llm is not None:
            try:
                answer = self.llm.complete(p.model_messages(found, self.timezone()), max_tokens=300).strip()
                if 0 < len(answer) <= MODEL_MAX_CHARS:
                    return answer
            except Exception as exc:  # noqa: BLE001 (the pattern is still proposed, in the members' words)
                log.warning("the model could not describe a pattern: %s", exc)
        return p.describe(found, self.timezone())
