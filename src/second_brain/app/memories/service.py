"""The command side of memories, one front for the routes, the MCP tools and the jobs: each capability is its own
module (capture, mirrors, editing, reminders, sharing, erasure, counting), all writing through one
`MemoryStreams` (load, decide, append; retry on a concurrent writer)."""

import uuid
from collections.abc import Callable
from zoneinfo import ZoneInfo

from ...domain.events import Envelope
from ...domain.memory import Memory
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.llm import LanguageModel
from ...ports.recall_tally import RecallTally
from ..handling import Context
from .capture import CaptureOutcome, Capturing, answered, idempotency_stream, review_item
from .consequences import Consequences
from .counting import Counting
from .editing import Editing
from .erasure import Erasure
from .mirrors import Mirrors
from .projects import ProjectService
from .reminders import Reminders
from .sharing import Sharing
from .streams import MemoryStreams
from .triage import Triage

__all__ = ["CaptureOutcome", "Context", "MemoryService", "answered", "idempotency_stream", "review_item"]


class MemoryService:
    def __init__(
        self,
        store: EventStore,
        clock: Clock,
        timezone: ZoneInfo | Callable[[], ZoneInfo],
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        triage: Triage | None = None,
        projects: ProjectService | None = None,
        llm: LanguageModel | None = None,
        reads_when: bool | Callable[[], bool] = True,
        content_key: bytes | Callable[[], bytes] | None = None,
        recall_tally: RecallTally | None = None,
        legacy_claims: bool = False,
    ) -> None:
        self.streams = MemoryStreams(store, clock, timezone, triage, reads_when, content_key, legacy_claims)
        self.consequences = Consequences()  # what follows a capture (bootstrap fills the table)
        self.capturing = Capturing(self.streams, new_id, projects, self.consequences)
        self.mirrors = Mirrors(self.streams)
        self.editing = Editing(self.streams, llm)
        self.reminders = Reminders(self.streams)
        self.erasure = Erasure(self.streams)
        self.sharing = Sharing(self.streams, self.erasure)
        self.counting = Counting(self.streams, recall_tally)
        self.store, self.clock, self.projects, self.llm = store, clock, projects, llm
        self.recall_tally = recall_tally
        # what each capability does, under the names the callers have always used
        self.capture, self.store_note = self.capturing.capture, self.capturing.store_note
        self.append, self.update, self.retag = self.editing.append, self.editing.update, self.editing.retag
        self.set_status, self.classify_with_model = self.editing.set_status, self.editing.classify_with_model
        self.snooze, self.clear_anchor = self.reminders.snooze, self.reminders.clear_anchor
        self.resolve_loop = self.reminders.resolve_loop
        self.share, self.forget = self.sharing.share, self.erasure.forget
        self.record_recalls, self.record_open = self.counting.record_recalls, self.counting.record_open
        self.fold_recalls = self.counting.fold_recalls

    def load(self, ctx: Context, memory_id: str) -> tuple[Memory, list[Envelope]]:
        """A memory and its events, if it exists in a workspace the caller can read."""
        return self.streams.load(ctx, memory_id)

    @property
    def timezone(self) -> ZoneInfo:
        return self.streams.timezone

    @property
    def content_key(self) -> bytes | None:
        return self.streams.content_key

    @property
    def triage(self) -> Triage | None:
        return self.streams.triage

    @triage.setter
    def triage(self, triage: Triage | None) -> None:
        self.streams.triage = triage

    @property
    def new_id(self) -> Callable[[], str]:
        return self.capturing.new_id

    @new_id.setter
    def new_id(self, new_id: Callable[[], str]) -> None:
        self.capturing.new_id = new_id
