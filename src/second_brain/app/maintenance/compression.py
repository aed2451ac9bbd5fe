"""The compression job: each night, the highest-volume tags worth a digest (per workspace, across the brain) are
compressed, four at a time, taking turns: a cursor walks the list so the same four do not take every night."""

from collections.abc import Callable, Sequence

from ...domain import text
from ...domain.digest import Scope
from ...domain.errors import BrainError
from ...ports.clock import Clock
from ...ports.read_model import DigestReads
from ..insights.digest import DigestService
from .runner import NIGHTLY, Budget, JobResult

TAGS_PER_RUN = 4


class CompressionJob:
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
