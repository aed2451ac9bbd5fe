"""Compression: a tag's (or a project's) low-signal memories in one workspace become one `synthesized` digest, and
each of them is rolled up, in one atomic append. GET /digest and the nightly job both come here."""

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol
from zoneinfo import ZoneInfo

from ...domain import digest as d
from ...domain import text
from ...domain.digest import Scope
from ...domain.errors import BrainError
from ...domain.events import memory_stream
from ...domain.identity import Identity
from ...domain.memory import DIGEST_MIN_ENTRIES, Memory, fold
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.llm import LanguageModel
from ...ports.read_model import DigestReads, EntryReads, Filters
from ..handling import Context, envelopes, retrying
from ..handling import system as system_context
from ..maintenance.runner import NIGHTLY, Budget, JobResult

log = logging.getLogger("second_brain.digest")


class DigestSources(DigestReads, EntryReads, Protocol):
    """What compression reads."""


@dataclass(frozen=True)
class Outcome:
    """A digest made (`entry_id`), or why not (`entry_id` None): too few eligible memories, or too recent."""

    scope: d.Scope
    source_count: int
    entry_id: str | None = None
    synthesis: str = ""
    method: str = ""  # model | extractive

    def answer(self) -> dict[str, object]:
        """The contract's answer for GET /digest."""
        head: dict[str, object] = {"project" if self.scope.project else "tag": self.scope.label}
        if self.entry_id is None:
            return {**head, "error": d.REFUSED, "source_count": self.source_count}
        return {**head, "synthesis": self.synthesis, "entry_id": self.entry_id, "source_count": self.source_count}


class DigestService:
    def __init__(self, store: EventStore, read_model: DigestSources, llm: LanguageModel | None, clock: Clock,
                 timezone: Callable[[], ZoneInfo], new_id: Callable[[], str] = lambda: str(uuid.uuid4())) -> None:
        self.store = store
        self.read_model = read_model
        self.llm = llm  # None: the extractive digest
        self.clock = clock
        self.timezone = timezone
        self.new_id = new_id

    def for_caller(self, ctx: Context, scopes: list[d.Scope]) -> Outcome:
        """Compress the first of these scopes (one per workspace the caller may roll up) holding the most eligible
        memories; the caller's request id goes on the digest's events."""
        now = self.clock.now_ms()
        counted = [(len(self._pool(scope, now)), i) for i, scope in enumerate(scopes)]
        _, best = max(counted, key=lambda pair: (pair[0], -pair[1]))
        return self.compress(scopes[best], ctx.request_id)

    def compress(self, scope: d.Scope, request_id: str) -> Outcome:
        """One digest of the scope, or the reason there is none; safe to repeat: a scope compressed within a day
        is refused, and rolled-up memories are never eligible again."""
        if not scope.project and not text.is_topic_tag(scope.label):
            return Outcome(scope, 0)  # bookkeeping is never digested: no model is asked either
        written: dict[tuple[tuple[str, int], ...], tuple[list[Memory], str, str]] = {}  # a retry asks no model again

        def attempt() -> Outcome:
            now = self.clock.now_ms()
            pool = self._pool(scope, now)
            if len(pool) < DIGEST_MIN_ENTRIES or self._recently_compressed(scope, now):
                return Outcome(scope, len(pool))
            key = tuple((m.id, m.version) for m in pool)
            rolled, content, method = written[key] if key in written else self._fitted(pool, scope)
            if len(content) > text.MAX_CONTENT_CHARS:
                return Outcome(scope, len(pool))
            written[key] = (rolled, content, method)
            digest_id = self.new_id()
            system = system_context(scope.workspace, request_id)
            batch = [e for change in d.roll_up(digest_id, content, scope, rolled)
                     for e in envelopes(system, change.stream_id, change.version, change.events, change.workspace, now)]
            self.store.append(batch)
            return Outcome(scope, len(rolled), digest_id, content, method)

        return retrying(attempt)

    def _pool(self, scope: d.Scope, now: int) -> list[Memory]:
        """The eligible memories as their streams make them now (the read model only proposes them)."""
        filters = Filters((scope.workspace,), any_tags=scope.match, actor=scope.actor)
        rows = self.read_model.digest_pool(filters, now, d.MAX_SOURCES)
        return d.sources([fold(self.store.read_stream(memory_stream(r.id)), Memory(r.id)) for r in rows], scope, now)

    def _recently_compressed(self, scope: d.Scope, now: int) -> bool:
        window = Filters((scope.workspace,), tag=text.SYNTHESIZED, any_tags=scope.match, after=now - d.COOLDOWN_MS)
        return bool(self.read_model.recent(window, 1))

    def _fitted(self, pool: list[Memory], scope: d.Scope) -> tuple[list[Memory], str, str]:
        """The digest of as many of the pool (newest first) as one memory holds: the oldest wait for the next."""
        rolled = pool
        content, method = self._write(rolled, scope)
        while len(content) > text.MAX_CONTENT_CHARS and len(rolled) > DIGEST_MIN_ENTRIES:
            rolled = rolled[:-1]
            content, method = self._write(rolled, scope, ask_model=False)
        return rolled, content, method

    def _write(self, rolled: list[Memory], scope: d.Scope, ask_model: bool = True) -> tuple[str, str]:
        """One paragraph by the model when it keeps every fact of the sources; else the extractive digest."""
        if self.llm is not None and ask_model:
            try:
                paragraph = self.llm.complete(d.model_messages(rolled, scope), max_tokens=400).strip()
                if paragraph and not d.missing_facts(paragraph, rolled):
                    return scope.header(len(rolled)) + paragraph, "model"
                log.info("the model's digest of %s dropped facts of its sources: extractive instead", scope.label)
            except Exception as exc:  # noqa: BLE001 (any failure of the model: the digest is still made, without it)
                log.warning("the model could not write the digest of %s: %s", scope.label, exc)
        return d.extractive(rolled, scope, self.timezone()), "extractive"


def scopes_for(identity: Identity, match: tuple[str, ...], label: str, project: bool,
               workspaces: tuple[str, ...] | None = None) -> list[d.Scope]:
    """Where a caller may compress: each readable workspace; in a company workspace a member rolls up only
    their own memories (what they may change)."""
    found = []
    for workspace in workspaces or identity.readable:
        everyone = workspace == identity.personal_workspace or identity.role == "admin"
        found.append(d.Scope(workspace, match, label, project, None if everyone else identity.actor_id))
    return found


TAGS_PER_RUN = 4


class CompressionJob:
    """The compression job: each night, the highest-volume tags worth a digest (per workspace, across the brain) are
    compressed, four at a time, taking turns: a cursor walks the list so the same four do not take every night."""

    name = "compression"
    schedule = NIGHTLY

    def __init__(self, digests: DigestService, read_model: DigestReads, workspaces: Callable[[], Sequence[str]],
                 clock: Clock, tags_per_run: int = TAGS_PER_RUN) -> None:
        self.digests = digests
        self.read_model = read_model
        self.workspaces = workspaces  # every workspace of the brain: the job acts for all of them
        self.clock = clock
        self.tags_per_run = tags_per_run

    def run(self, budget: Budget, cursor: str) -> JobResult:
        volumes = [v for v in self.read_model.digest_volumes(list(self.workspaces()), self.clock.now_ms())
                   if text.is_topic_tag(v.tag)]
        result = JobResult(counts={"candidates": len(volumes)})
        if not volumes:
            return result
        start = _offset(cursor) % len(volumes)
        turn = (volumes[start:] + volumes[:start])[: self.tags_per_run]
        done = 0
        for volume in turn:
            if budget.expired():
                result.complete = False
                break
            scope = Scope(volume.workspace, (volume.tag,), volume.tag)
            try:
                outcome = self.digests.compress(scope, f"maintenance-{self.name}-{self.clock.now_ms()}")
            except BrainError as exc:  # this tag waits for its next turn; the others go on
                result.errors.append(f"{volume.tag}: {type(exc).__name__}: {exc.message[:160]}")
            else:
                if outcome.entry_id:
                    result.add("digests")
                    result.add("rolled_up", outcome.source_count)
                    result.add(outcome.method)
                else:
                    result.add("refused")
            done += 1
        result.cursor = str((start + done) % len(volumes))
        return result


def _offset(cursor: str) -> int:
    return int(cursor) if cursor.isdigit() else 0
