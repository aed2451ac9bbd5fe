"""Integrations: connect an external system, sync its items into managed mirrors, disconnect (domain/integrations.py).

A sync lists every item upstream and compares each with its mirror (the same memory id at every sync, from the
integration and the item's id): a new item is captured with its `MirrorSynced`, a changed one revised in place
(one memory, its timeline shows each sync), an item gone upstream has its mirror forgotten. Everything is events,
so replay, as_of, the timeline and forget work on mirrors as on any memory. A sync writes at most `limit` changes
and says whether it went through (a run stopped early, by the limit or a crash, is taken up by the next: what it
wrote is found again by id, and nothing is written twice). Removals need a listing the connector gave whole.
"""

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, MutableSequence, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from typing import Any
from urllib.parse import urlsplit

from ...domain import integrations as i
from ...domain.errors import ConcurrencyConflict, Forbidden, InvalidInput, NotFound, StoreUnavailable
from ...domain.events import (
    Envelope,
)
from ...domain.identity import Identity
from ...domain.links import decide_link, decide_unlink, endpoints
from ...domain.memory import Memory
from ...domain.mirrors import Upstream
from ...domain.text import shorten
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.integrations import Connector, Item, Synced, Unavailable
from ...ports.secrets import SecretStore
from ..graph.links import LinkService
from ..handling import Context, envelopes, retrying
from ..memories.service import MemoryService

log = logging.getLogger("second_brain.integrations")

SYNC_LIMIT = 500  # changes one sync writes; the next sync goes on
MOST_EDGES = 1_000  # an updated item's edges read to find those its upstream no longer links
AHEAD = 32  # new mirrors whose texts are embedded together before they are judged one by one
ITEM_ERRORS = (InvalidInput, UnicodeError, ValueError, OSError)  # one item's, not the integration's


MOST_TAKEN = 5  # ids an item tries before it is said to have failed


@dataclass
class Run:
    """One sync: who it acts as, and the integration as this sync last wrote it (its stream is read once per sync,
    and again only after a race with another writer)."""

    acting: Context
    integration: i.Integration
    held: i.Integration = field(init=False)
    versions: dict[str, str] = field(default_factory=dict)  # the items' versions this sync brought, said at its end
    taken: list[str] = field(default_factory=list)  # new items whose first id another memory held

    def __post_init__(self) -> None:
        self.held = self.integration


class IntegrationService:
    def __init__(self, store: EventStore, memories: MemoryService, links: LinkService,
                 connectors: Mapping[str, Connector], clock: Clock, secrets: SecretStore,
                 new_id: Callable[[], str] = lambda: str(uuid.uuid4()), request_seconds: float = 20.0) -> None:
        self.store = store
        self.secrets = secrets
        self.memories = memories
        self.links = links
        self.connectors = dict(connectors)
        self.clock = clock
        self.new_id = new_id
        self.on_change: Callable[[], None] = lambda: None  # an integration connected or disconnected (the watcher)
        # A request's sync writes for at most `request_seconds` (a mirror is judged as a capture is: its text
        # embedded, ~20 ms on a laptop's core, more through Bedrock); what it leaves is handed to `on_incomplete`
        # (one machine: synced at once, off the request) or waits for the hourly run.
        self.request_seconds = request_seconds
        self.on_incomplete: Callable[[str], None] = lambda integration_id: None
        # One sync or disconnect of an integration at a time in this process (the watcher, the hourly job and a
        # request can ask at once); another process racing it loses on the integration's stream and retries.
        self._running: dict[str, threading.Lock] = {}
        self._running_guard = threading.Lock()

    # --- what the routes call ---

    def connect(self, ctx: Context, kind: str, name: str, settings: Mapping[str, Any],
                workspace: str | None = None) -> dict[str, Any]:
        """Connect `kind` with its settings into the caller's personal workspace (or a company one they may write
        to); the first sync runs at once, so a wrong setting shows now, in words."""
        # every kind registered is known (one this deployment cannot run is refused below, in other words)
        i.check_connect(kind, name, settings := {str(k): v for k, v in settings.items()}, self.connectors)
        target = workspace or ctx.identity.personal_workspace
        if target not in ctx.identity.readable:
            raise Forbidden("You can only connect an integration to a workspace you belong to")
        if target != ctx.identity.personal_workspace and ctx.identity.role != "admin":
            raise Forbidden("Only an admin may connect an integration to the company workspace")
        connector = self._connector(kind)
        spec = connector.spec
        i.check_fields(spec, settings)
        # a secret as typed (a password may end in a space); the rest trimmed
        settings = {k: v if k in spec.secrets else v.strip() for k, v in settings.items()}
        if spec.local and not ctx.identity.owner:
            # The server reads the folder with its own rights: a member naming a path would read the owner's files.
            raise Forbidden("Only the brain's owner may connect a folder on the machine the brain runs on")
        kept_settings = {k: v for k, v in settings.items() if k not in spec.secrets}
        for other in (self._load(x) for x in self._listed()):
            if (other.connected and other.kind == kind and other.workspace == target and kept_settings
                    and dict(other.settings) == kept_settings):  # its mirrors would all be flagged duplicates
                raise InvalidInput(f"This is already connected as {other.name} ({other.id}): sync that one, or "
                                   "disconnect it first")
        try:
            connector.check(settings)
        except (InvalidInput, Forbidden):
            raise
        except Exception as e:  # an address no client can parse, a value the protocol cannot carry: said, not a 500
            log.warning("checking a %s integration's settings failed: %s", kind, type(e).__name__)
            raise InvalidInput(f"These settings cannot work: {type(e).__name__}") from e
        integration_id = self.new_id()
        secret = {k: v for k, v in settings.items() if k in spec.secrets}
        kept = tuple(sorted(kept_settings.items()))
        event = i.IntegrationConnected(kind, name.strip(), target, kept, tuple(sorted(secret)))

        def attempt() -> None:
            registry = self.store.read_stream(i.REGISTRY_STREAM)
            now = self.clock.now_ms()
            self.store.append(envelopes(ctx, i.integration_stream(integration_id), 0, [event], target, now)
                              + envelopes(ctx, i.REGISTRY_STREAM, len(registry), [i.IntegrationListed(integration_id)],
                                          target, now))

        if secret:  # sealed before the log names it, and erased again if the log refuses
            self.secrets.put(integration_id, secret)
        try:
            retrying(attempt)
        except BaseException:
            if secret:
                self.secrets.delete(integration_id)
            raise
        report = self.sync(ctx, integration_id)
        self.on_change()
        return {"integration": self.view(ctx, self._load(integration_id)), "sync": report}

    def list(self, ctx: Context) -> list[dict[str, Any]]:
        """The integrations of the workspaces the caller can read, connected or not."""
        found = [self._load(integration_id) for integration_id in self._listed()]
        shown = [x for x in found if x.exists and x.workspace in ctx.identity.readable]
        return [self.view(ctx, x) for x in sorted(shown, key=lambda x: (-x.connected, x.connected_at))]

    def sync(self, ctx: Context, integration_id: str, limit: int = SYNC_LIMIT) -> dict[str, Any]:
        """Sync now, as a request does: for at most `request_seconds`, the rest handed on (`on_incomplete`)."""
        self._owned(ctx, integration_id)
        with self._alone(integration_id) as integration:
            if integration is None:
                raise InvalidInput(f"Integration {shorten(integration_id)} is disconnected")
            report = self._sync(integration, limit, time.monotonic() + self.request_seconds)
        if not report["complete"] and not report["error"]:
            self.on_incomplete(integration.id)
        return report

    @contextmanager
    def _alone(self, integration_id: str) -> Iterator[i.Integration | None]:
        """The integration as it is once no other sync or disconnect of it runs in this process (None if it is
        disconnected), held so until the block ends."""
        with self._running_guard:
            lock = self._running.setdefault(integration_id.strip(), threading.Lock())
        with lock:
            integration = self._load(integration_id.strip())
            yield integration if integration.connected else None

    def disconnect(self, ctx: Context, integration_id: str, forget_mirrors: bool) -> dict[str, Any]:
        """Stop syncing. The mirrors are forgotten (`forget_mirrors`) or kept as ordinary memories, the caller's to
        edit from then on."""
        self._owned(ctx, integration_id)
        with self._alone(integration_id) as integration:
            if integration is None:
                raise InvalidInput(f"Integration {shorten(integration_id)} is already disconnected")
            acting = self._acting(integration)
            handled = 0
            for external_id, memory_id in sorted(integration.mirrors.items()):
                if self._memory(memory_id).exists:
                    if forget_mirrors:
                        self.memories.forget(acting, memory_id, managed=True)
                    else:
                        self.memories.mirrors.release(acting, memory_id, integration.id, self._source(integration),
                                                      external_id)
                    handled += 1
            if integration.secret_names:  # erased first: a disconnect that fails after it is asked again, erased
                self.secrets.delete(integration.id)
            self._write(Run(acting, self._load(integration.id)), i.IntegrationDisconnected(not forget_mirrors), by=ctx)
        self.on_change()
        return {"id": integration.id, "disconnected": True, ("forgotten" if forget_mirrors else "kept"): handled}

    def sync_all(self, until: Callable[[], bool] = lambda: False, limit: int = SYNC_LIMIT) -> dict[str, Any]:
        """Every connected integration, as the scheduler runs them (each bounded; what is left waits for the next
        run)."""
        done: list[dict[str, Any]] = []
        for integration_id in self._listed():
            if until():
                break
            report = self.sync_changed(integration_id, limit)
            if report is not None:
                done.append({"id": integration_id, **report})
        return {"integrations": done}

    def folders(self) -> dict[str, str]:
        """The connected folders of a watched kind (a notes folder): integration id → path (what the folder watcher
        watches)."""
        found = (self._load(integration_id) for integration_id in self._listed())
        watched = {kind for kind, connector in self.connectors.items()
                   if connector.spec.watched and not isinstance(connector, Unavailable)}
        return {x.id: x.setting("path") for x in found if x.connected and x.kind in watched}

    def sync_changed(self, integration_id: str, limit: int = SYNC_LIMIT,
                     seconds: float | None = None) -> dict[str, Any] | None:
        """Sync one integration as the system does (the hourly job, the folder watcher); None if it is
        disconnected. A failure is told in its `last_error`, and stops no other integration."""
        with self._alone(integration_id) as integration:
            if integration is None:
                return None
            try:
                return self._sync(integration, limit, time.monotonic() + seconds if seconds is not None else None)
            except Exception as e:
                log.exception("syncing integration %s failed", integration_id)
                return {"created": 0, "updated": 0, "removed": 0, "unchanged": 0, "failed": 0, "complete": False,
                        "error": f"The sync stopped: {type(e).__name__}"}

    def view(self, ctx: Context, integration: i.Integration) -> dict[str, Any]:
        created, updated, removed = integration.counts
        return {
            "id": integration.id, "kind": integration.kind, "name": integration.name,
            "source": self._source(integration),
            "layer": ctx.identity.layer(integration.workspace), "connected": integration.connected,
            "settings": _shown_settings(integration), "connected_at": integration.connected_at,
            "last_sync": integration.last_sync or None, "complete": integration.complete,
            "mirrors": len(integration.mirrors), "last_error": integration.last_error or None,
            "last_counts": {"created": created, "updated": updated, "removed": removed},
            "connected_by": ctx.identity.name_of(integration.actor),
            "may_change": integration.actor == ctx.identity.actor_id or ctx.identity.role == "admin",
        }

    # --- the sync ---

    def _sync(self, integration: i.Integration, limit: int, deadline: float | None = None) -> dict[str, Any]:
        acting = self._acting(integration)
        counts = {"created": 0, "updated": 0, "removed": 0, "unchanged": 0, "failed": 0}

        def spent() -> bool:  # the changes this sync may write, and the time it may take
            written = counts["created"] + counts["updated"] + counts["removed"]
            return written >= limit or (deadline is not None and written > 0 and time.monotonic() >= deadline)

        errors: list[str] = []
        complete = True
        run = Run(acting, integration)
        try:
            listed: dict[str, Item] = {}
            held = Synced(lambda external_id: self._synced_version(run, external_id), limit, deadline)
            changed: dict[str, str] = {}  # item → "created" or "updated", by this sync
            # Written as listed, AHEAD items at a time (their new mirrors' texts embedded together, on every core):
            # a connector reads upstream only as far as the sync goes, and once it is spent the rest is listed
            # (`later`, cheaply) so that removals still see the whole listing.
            found = iter(self._connector(integration.kind).items(self._settings(integration), held))
            while chunk := [x for x in islice(found, AHEAD) if listed.setdefault(x.external_id, x) is x]:
                if not spent():
                    self.memories.mirrors.prepare([x.content for x in chunk if not (
                        x.unreadable or x.later or x.failed or x.external_id in run.held.mirrors)])
                for item in chunk:
                    if spent():
                        complete = False
                        continue
                    self._take(run, item, counts, errors, changed)
            if not listed and run.held.mirrors:  # an unmounted drive lists as an empty folder
                raise StoreUnavailable(f"{integration.name} lists nothing where {len(run.held.mirrors)} items "
                                       "were: nothing was removed (moved, unmounted or emptied?)")
            if any(item.later for item in listed.values()):  # left for the next run by the connector's budget
                complete = False
            errors += [gap for gap in held.gaps if gap]
            if held.gaps:  # the listing is not whole: what it lacks may be there still
                complete = False
            # else what the listing lacks is gone upstream (an item left `later` was listed too)
            for external_id, memory_id in sorted(run.held.mirrors.items()) if not held.gaps else ():
                if external_id in listed:
                    continue
                if spent():
                    complete = False
                    break
                self._remove(run, external_id, memory_id)
                counts["removed"] += 1
            self._link(run, listed, changed)
        except StoreUnavailable as e:
            errors, complete = [e.message], False
        except Exception as e:
            log.exception("syncing integration %s stopped", integration.id)
            errors, complete = [f"The sync stopped: {type(e).__name__} (what was read before is kept)"], False
        if run.taken:
            errors.append(f"{len(run.taken)} item(s) found their usual id held by another memory and were mirrored "
                          f"under another (first: {shorten(run.taken[0])})")
        error = "; ".join(errors[:3]) + (f" (and {len(errors) - 3} more)" if len(errors) > 3 else "")
        versions = tuple(sorted((k, v) for k, v in run.versions.items() if run.held.versions.get(k) != v
                                and k in run.held.mirrors))
        synced = i.IntegrationSynced(counts["created"], counts["updated"], counts["removed"], complete, error,
                                     versions)
        self._write(run, synced)
        return {**counts, "complete": complete, "error": error or None}

    def _take(self, run: "Run", item: Item, counts: dict[str, int], errors: MutableSequence[str],
              changed: dict[str, str]) -> None:
        """One listed item into its mirror, counted."""
        if item.later:  # listed, left for the next run by the connector's budget
            return
        if item.failed:  # listed, not readable: its mirror stays, and the sync says why
            counts["failed"] += 1
            errors.append(f"{shorten(item.external_id)}: {item.failed}")
            return
        if item.unreadable:  # listed, not read this time: its mirror stays as it was
            counts["unchanged"] += 1
            return
        try:
            outcome = self._mirror(run, item)
        except ITEM_ERRORS as e:  # this item's alone: said, and the others go on
            counts["failed"] += 1
            errors.append(f"{shorten(item.external_id)}: {getattr(e, 'message', None) or e}")
            return
        counts[outcome] += 1
        if outcome != "unchanged":
            changed[item.external_id] = outcome

    def _write(self, run: "Run", event: object, by: Context | None = None) -> None:
        """Append to the integration's stream after the version this sync holds; a race with another writer
        (another process) reads it again and retries once, unless it disconnected."""
        stream = i.integration_stream(run.integration.id)
        for attempt in range(2):
            held = run.held if attempt == 0 else self._load(run.integration.id)
            batch = _noted(held, event, by or run.acting, self.clock.now_ms())
            try:
                stored = self.store.append(batch)
            except ConcurrencyConflict:
                if attempt == 1:
                    raise
                continue
            run.held = i.fold_more(held, [e for e in stored if e.stream_id == stream])
            return


    def _mirror(self, run: "Run", item: Item) -> str:
        """Create or bring up to date the mirror of one item: "created", "updated" or "unchanged". The mirror's
        events are the memory service's to decide and append (app/memories/mirrors.py); a new one is noted on the
        integration's stream in the same append."""
        integration = run.integration
        secret = self.memories.content_key
        memory_id = run.held.mirror_of(item.external_id, secret)
        known = self._memory(memory_id)
        if item.external_id in run.held.mirrors and known.forgotten:
            # a sync stopped between forgetting a removed item's mirror and saying so: say so now, so the item
            # (made again upstream) gets a mirror of its own
            self._write(run, i.MirrorDropped(item.external_id))
            memory_id = run.held.mirror_of(item.external_id, secret)
            known = self._memory(memory_id)
        taken = 0
        while item.external_id not in run.held.mirrors and (known.exists or known.forgotten):
            # A new item's id is held by a memory that is not its mirror (made or forgotten by someone else): the
            # item never yields to it, it takes the next id, and the sync says so.
            taken += 1
            if taken > MOST_TAKEN:
                raise InvalidInput("its mirror's ids are all held by other memories")
            memory_id = run.held.mirror_of(item.external_id, secret, taken)
            known = self._memory(memory_id)
        if taken:
            run.taken.append(item.external_id)
        upstream = Upstream(integration.id, self._source(integration), item.external_id, item.url, item.content,
                            item.tags, i.content_hash(item.content, item.tags, item.when_at), item.version)
        stream = i.integration_stream(integration.id)
        indexed = item.external_id in run.held.mirrors
        held: list[i.Integration] = []  # the integration each attempt noted the new mirror after

        def beside() -> list[Envelope]:
            if indexed:  # noted by a sync that stopped before its mirror was made
                return []
            held.append(run.held if not held else self._load(integration.id))  # read again after a lost race
            return _noted(held[-1], i.MirrorIndexed(item.external_id, memory_id, item.version), run.acting,
                          self.clock.now_ms())

        when = (item.when_at, item.when_kind or "event") if item.when_at is not None else None
        done = self.memories.mirrors.sync(run.acting, memory_id, upstream, integration.workspace, when, item.said_at,
                                          known, beside)
        if done.outcome == "created" and not indexed:
            run.held = i.fold_more(held[-1], [e for e in done.stored if e.stream_id == stream])
        elif done.mirrors:
            run.versions[item.external_id] = item.version
        return done.outcome

    @staticmethod
    def _synced_version(run: "Run", external_id: str) -> str | None:
        """The item's version upstream when its mirror was last synced (the integration's own state: no read);
        None if it has no mirror or no version."""
        return run.held.versions.get(external_id) if external_id in run.held.mirrors else None

    def _remove(self, run: "Run", external_id: str, memory_id: str) -> None:
        if self._memory(memory_id).exists:
            self.memories.forget(run.acting, memory_id, managed=True)
        self._write(run, i.MirrorDropped(external_id))

    def _link(self, run: "Run", listed: Mapping[str, Item], changed: Mapping[str, str]) -> None:
        """The items' links to one another (a note's [[wikilinks]]) as edges between their mirrors: those of the
        items this sync changed, and those to the items it created, where both ends are mirrored (an edge to an item
        a later sync creates is made by that sync)."""
        integration, mirrored = run.integration, run.held.mirrors
        created = {external_id for external_id, outcome in changed.items() if outcome == "created"}
        keys = sorted({endpoints(mirrored[item.external_id], mirrored[target], "relates_to") + ("relates_to",)
                       for item in listed.values() if item.external_id in mirrored
                       for target in item.links
                       if target in mirrored and (item.external_id in changed or target in created)})
        if keys:
            self.links.append_decisions(run.acting, keys, lambda edge: decide_link(edge, 1.0, "system"),
                                        integration.workspace)
        # A link taken out upstream (a [[wikilink]] deleted from a note) takes its edge out: the edges this
        # integration made (relates_to, provenance system) from an updated item to another of its mirrors that
        # neither item links to now. Edges a person made, or the brain inferred, stay.
        by_memory = {memory_id: external_id for external_id, memory_id in mirrored.items()}
        stale = set()
        for external_id in (x for x, outcome in changed.items() if outcome == "updated"):
            memory_id = mirrored[external_id]
            for edge in self.links.read_model.connections(memory_id, (integration.workspace,), "relates_to",
                                                          MOST_EDGES, deprecated=True):
                other = by_memory.get(edge.entry.id)
                if (other is None or edge.provenance != "system" or other in listed[external_id].links
                        or (other in listed and external_id in listed[other].links)):
                    continue
                stale.add(endpoints(memory_id, edge.entry.id, "relates_to") + ("relates_to",))
        if stale:
            self.links.append_decisions(run.acting, sorted(stale), decide_unlink, integration.workspace)

    # --- reading ---

    def _listed(self) -> Sequence[str]:
        return i.listed(self.store.read_stream(i.REGISTRY_STREAM))

    def _load(self, integration_id: str) -> i.Integration:
        return i.fold(self.store.read_stream(i.integration_stream(integration_id)), integration_id)

    def _settings(self, integration: i.Integration) -> dict[str, str]:
        """Its settings as its connector reads them: those in the log, and its secrets unsealed."""
        settings = dict(integration.settings)
        if integration.secret_names:
            held = self.secrets.get(integration.id)
            if held is None:
                raise StoreUnavailable(f"{integration.name}'s {' and '.join(integration.secret_names)} is no longer "
                                       "kept here (a brain restored without its secrets?): disconnect it and "
                                       "connect it again")
            settings |= held
        return settings

    def _owned(self, ctx: Context, integration_id: str) -> i.Integration:
        """An integration the caller may sync or disconnect: theirs, or any of the company's for an admin."""
        integration = self._load(integration_id.strip())
        if not integration.exists or integration.workspace not in ctx.identity.readable:
            raise NotFound(f"No integration found with ID: {shorten(integration_id)}")
        if integration.actor != ctx.identity.actor_id and ctx.identity.role != "admin":
            raise Forbidden("Only who connected an integration, or an admin, may sync or disconnect it")
        return integration

    def _memory(self, memory_id: str) -> Memory:
        return self.memories.streams.state_of(memory_id)[0]

    def _source(self, integration: i.Integration) -> str:
        """The source its mirrors carry, as its connector names it (a mailbox's from its host: `email-gmail`)."""
        connector = self.connectors.get(integration.kind)
        return connector.spec.source_of(dict(integration.settings)) if connector else integration.kind

    def _connector(self, kind: str) -> Connector:
        """The connector of `kind`, if this deployment runs it (a notes folder is registered on Lambda too, as
        Unavailable)."""
        connector = self.connectors.get(kind)
        if connector is None or isinstance(connector, Unavailable):
            raise InvalidInput(f"Integrations of kind {shorten(kind)} are not available here")
        return connector

    @staticmethod
    def _acting(integration: i.Integration) -> Context:
        """The sync acts as whoever connected the integration (its mirrors are theirs), in its workspace."""
        identity = Identity(integration.actor, "", "admin", integration.workspace)
        return Context(identity, f"sync-{integration.id}")


def _noted(held: i.Integration, event: object, by: Context, now: int) -> list[Envelope]:
    """`event` on the integration's stream after the version `held` is at, unless it was disconnected."""
    if not held.connected:
        raise InvalidInput(f"Integration {held.id} was disconnected meanwhile")
    return envelopes(by, i.integration_stream(held.id), held.version, [event], held.workspace, now)


def _shown_settings(integration: i.Integration) -> dict[str, str]:
    """Settings as `GET /integrations` shows them: a secret never (only that it is set). A calendar connected
    before feed addresses were sealed has its address in the log: only its host shows (whoever holds a secret iCal
    URL reads the calendar)."""
    shown = dict(integration.settings)
    if (url := shown.get("url")) and integration.kind == "calendar":
        parts = urlsplit(url)
        shown["url"] = f"{parts.scheme}://{parts.hostname or ''}/…"
    return shown | {name: "(secret, kept sealed)" for name in integration.secret_names}
