"""Watching the connected notes folders (watchdog: inotify on Linux): a change to a note syncs its integration once
the folder has been quiet for a moment, so an edit reaches the brain in seconds instead of at the hourly sync.

Started by `brain serve` with the maintenance clock; the hourly sync stays, for changes made while the brain was
not running and for folders a watch cannot see (some network mounts)."""

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import ObservedWatch

log = logging.getLogger("second_brain.integrations")


class FolderWatcher:
    """`folders()` names the connected folders (integration id → path); `sync(id)` syncs one."""

    def __init__(self, folders: Callable[[], dict[str, str]], sync: Callable[[str], object],
                 quiet: float = 1.0) -> None:
        self.folders = folders
        self.sync = sync
        self.quiet = quiet
        # Made by start: an Observer holds an inotify instance from its construction (128 per user by default),
        # and a brain that is built but never served (a CLI command, a test) must not take one.
        self.observer: Any = None
        self._watches: dict[str, tuple[str, ObservedWatch]] = {}  # integration id → (path, watch)
        self._due: dict[str, float] = {}  # integration id → when its folder went quiet enough to sync
        self._lock = threading.Lock()  # `_due`: taken in watchdog's handlers, which run under watchdog's own lock
        self._watching = threading.Lock()  # `_watches`: held while (un)scheduling, which takes watchdog's lock
        self._stop = threading.Event()
        self._worker = threading.Thread(target=self._run, name="folder-watcher", daemon=True)

    def start(self) -> None:
        self.observer = Observer()
        self.refresh()
        self.observer.start()
        self._worker.start()

    def stop(self) -> None:
        self._stop.set()
        if self.observer is not None and self.observer.is_alive():
            self.observer.stop()
            self.observer.join(timeout=5)
        if self._worker.is_alive():
            self._worker.join(timeout=5)

    def refresh(self) -> None:
        """Watch the folders connected now, and stop watching the ones disconnected (once started)."""
        if self.observer is None:
            return
        try:
            wanted = self.folders()
        except Exception:  # the log unreadable for a moment: the next refresh (or the hourly sync) catches up
            log.exception("listing the connected folders failed")
            return
        with self._watching:
            for integration_id, (path, watch) in list(self._watches.items()):
                if wanted.get(integration_id) != path or not Path(path).is_dir():  # disconnected, or gone
                    self.observer.unschedule(watch)
                    del self._watches[integration_id]
            for integration_id, path in wanted.items():
                if integration_id not in self._watches and Path(path).is_dir():
                    try:
                        watch = self.observer.schedule(_For(self, integration_id), path, recursive=True)
                    except OSError:  # the inotify watch limit, a folder not readable: the hourly sync remains
                        log.exception("cannot watch %s", path)
                        continue
                    self._watches[integration_id] = (path, watch)

    def changed(self, integration_id: str, event: FileSystemEvent) -> None:
        paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
        hidden = all("/." in p for p in paths if p)  # .obsidian, .git, .trash: no notes there
        notes = any(p.endswith(".md") for p in paths) or (event.is_directory and event.event_type != "modified")
        if notes and not hidden:
            with self._lock:
                self._due[integration_id] = time.monotonic() + self.quiet

    def _run(self) -> None:
        beat = 0
        while not self._stop.wait(0.2):
            beat += 1
            if beat % 300 == 0:  # every minute: watch a folder that came back, stop watching one that went
                self.refresh()
            now = time.monotonic()
            with self._lock:
                ready = [i for i, at in self._due.items() if at <= now]
                for integration_id in ready:
                    del self._due[integration_id]
            for integration_id in ready:
                try:
                    self.sync(integration_id)
                except Exception:  # one folder's failure (said in its integration's last_error) stops no other
                    log.exception("syncing integration %s after a change failed", integration_id)


class _For(FileSystemEventHandler):
    """One folder's events, told to the watcher with the integration they belong to."""

    def __init__(self, watcher: FolderWatcher, integration_id: str) -> None:
        self.watcher = watcher
        self.integration_id = integration_id

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("created", "modified", "deleted", "moved"):
            self.watcher.changed(self.integration_id, event)
