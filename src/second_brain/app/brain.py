"""The application as one bundle: every service an entry point calls, wired by the composition root."""

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..domain.identity import Identity
from ..ports.event_store import EventStore
from ..ports.llm import LanguageModel
from ..ports.vector_index import VectorIndex
from ..settings import Settings
from .config import SettingsService
from .graph.links import LinkService
from .graph.view import GraphView
from .insights.brief import BriefService
from .insights.digest import DigestService
from .insights.patterns import PatternService
from .integrations.service import IntegrationService
from .maintenance import MaintenanceRunner, MaintenanceScheduler
from .memories.conflicts import ConflictReview
from .memories.counting import CountingLane
from .memories.indexing import Foreground, Indexer, IndexingWorker
from .memories.projects import ProjectService
from .memories.queries import MemoryQueries
from .memories.service import MemoryService
from .recall.pipeline import RecallService
from .reminders.push import PushService
from .team.service import TeamService
from .transfer import Staging, Transfer


def _nothing() -> None:
    return None


def _no_chores(schedule: str) -> dict[str, Any]:
    return {}


@dataclass
class Brain:
    """Everything an entry point needs, wired once."""

    settings: Settings
    db: Any  # the embedded brain's database (closed with the brain); None on AWS
    store: EventStore
    vectors: VectorIndex
    memories: MemoryService
    queries: MemoryQueries
    brief: BriefService
    graph: GraphView
    recall: RecallService
    links: LinkService
    projects: ProjectService
    transfer: Transfer
    config: SettingsService
    team: TeamService
    llm: LanguageModel
    indexer: Indexer | None
    worker: IndexingWorker | None
    owner: Identity
    maintenance: MaintenanceRunner
    push: PushService
    digests: DigestService
    patterns: PatternService
    conflicts: ConflictReview
    integrations: IntegrationService
    classifier: ThreadPoolExecutor | None = None
    foreground: Foreground = field(default_factory=Foreground)  # requests in flight, which background work yields to
    counts: CountingLane | None = None  # recall counts a running brain writes off the requests' path
    scheduler: MaintenanceScheduler | None = None  # started by `brain serve` (start(schedule=True))
    watcher: Any = None  # the connected notes folders' watcher (adapters/integrations/watch.py), started with it
    continuation: Any = None  # the rest of a sync a request cut short (app/integrations/background.py), likewise
    # What the deployment does beside the services, wired by the composition root so that no operation asks which
    # adapters it runs on: hand the memory a large payload's objects took back to the system; the chores before a
    # scheduled maintenance run (their counts join its answer); make what was just written searchable now.
    release_memory: Callable[[], None] = _nothing
    import_parts: Staging | None = None  # where a whole backup resent with each page is laid out (one machine)
    prepare_upkeep: Callable[[str], dict[str, Any]] = _no_chores
    finish_upkeep: Callable[[str], dict[str, Any]] = _no_chores  # after the scheduled jobs, likewise
    settle: Callable[[], None] = _nothing

    def start(self, schedule: bool = False) -> None:
        """Start background work: the indexing worker, the recall counts' lane, and with `schedule` the maintenance
        clock."""
        if self.worker:
            self.worker.start()
        if self.counts:
            self.counts.start()
        if schedule and self.scheduler:
            self.scheduler.start()
        if schedule and self.watcher:
            self.watcher.start()
        if schedule and self.continuation:
            self.continuation.start()

    def close(self) -> None:
        if self.counts:  # what it gathered is written while the database is open
            self.counts.close()
        if self.continuation:
            self.continuation.stop()
        if self.watcher:
            self.watcher.stop()
        if self.scheduler:
            self.scheduler.stop()
        if self.worker:
            self.worker.stop()
        if self.indexer:
            self.indexer.close()
        if self.classifier:
            self.classifier.shutdown(wait=True, cancel_futures=True)
        if self.db:
            self.db.close()
