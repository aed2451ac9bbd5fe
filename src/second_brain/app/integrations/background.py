"""The rest of a sync a request cut short, synced off the request on one machine: a first sync of a large mailbox
answers within the request's time, and its rest follows at once instead of at the next hourly run. (On Lambda no
thread outlives a response: the hourly run and the person's Sync now take it up.)"""

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("second_brain.integrations")

MOST_PASSES = 1_000  # syncs of one integration in a row (500 changes each): a runaway upstream stops somewhere


class Continuation:
    def __init__(self, sync: Callable[[str], dict[str, Any] | None]) -> None:
        self.sync = sync  # IntegrationService.sync_changed: as the system, its failure told in last_error
        self._asked: queue.Queue[str] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="integration-continuation", daemon=True)

    def ask(self, integration_id: str) -> None:
        """Sync it again until a sync goes all through (or fails, or it is disconnected)."""
        self._asked.put(integration_id)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                integration_id = self._asked.get(timeout=0.2)
            except queue.Empty:
                continue
            for _ in range(MOST_PASSES):
                if self._stop.is_set():
                    return
                try:
                    report = self.sync(integration_id)
                except Exception:  # logged; the hourly run tries again
                    log.exception("continuing the sync of integration %s failed", integration_id)
                    break
                if report is None or report["complete"] or report.get("error"):
                    break
