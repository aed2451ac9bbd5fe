"""Integrations: external systems (a notes folder, a mailbox, a calendar, Notion) whose items the brain keeps as
managed mirrors, memories that system owns.

An integration is one stream (`integration-<id>`): connected with its settings, each sync's outcome, which
mirror stands for which upstream item, disconnected. A mirror is an ordinary memory whose stream also carries
`MirrorSynced` (the integration, the item's id and link upstream, and a hash of what was synced): the memory
aggregate refuses to edit or forget it through the API (`ManagedMirror`, answered 409), since the next sync would
overwrite the edit; the sync itself revises it, and removes it when the item is gone upstream.
"""

import hashlib
import hmac
import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import singledispatch
from typing import ClassVar

from .envelope import Envelope, stored
from .errors import InvalidInput, ManagedMirror
from .shown import shows
from .text import shorten

INTEGRATION_STREAM = "integration-"
REGISTRY_STREAM = "integrations"  # every integration ever connected, one event each: what lists them (one read)
NAMESPACE = uuid.UUID("5f0c6a43-51b3-4c63-9a4e-7d0a3c1e2b90")  # mirror ids: one per integration and item


def integration_stream(integration_id: str) -> str:
    return INTEGRATION_STREAM + integration_id


def mirror_id(integration_id: str, external_id: str, generation: int = 0, secret: bytes | None = None,
              taken: int = 0) -> str:
    """The memory that mirrors an item: the same id at every sync, so a sync that stopped halfway and runs again
    finds what it wrote instead of writing it twice. `generation`: how often the item was removed before (a note
    deleted and made again is mirrored again, by a new memory: the old one is forgotten for good). With the
    brain's `secret`, the id is a keyed hash nobody without it can compute (a member who sees an integration's id
    and guesses a file name cannot claim the id first); `taken`: how many ids before it were held by memories
    that are not this item's mirror."""
    key = f"{integration_id}\n{external_id}" + (f"\n{generation}" if generation else "") + (
        f"\ntaken {taken}" if taken else "")
    key = key.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if secret is None:
        return str(uuid.uuid5(NAMESPACE, key))
    digest = hmac.new(secret, b"mirror\n" + key.encode(), hashlib.sha256).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def content_hash(content: str, tags: tuple[str, ...], when_at: int | None = None) -> str:
    anchored = [f"@{when_at}"] if when_at is not None else []
    return hashlib.sha256("\n".join([content, *tags, *anchored]).encode("utf-8", "replace")).hexdigest()[:32]


@dataclass(frozen=True)
class Field:
    """One setting a connector reads: what the published schema of POST /integrations says of it, and how the
    dashboard's connect form asks for it."""

    name: str
    label: str  # what the form calls it, for people
    help: str = ""  # what it is, in the API's words (its description in the published schema)
    required: bool = False  # the schema and the form ask for it; the connector's check says it is missing, in words
    secret: bool = False  # sealed outside the log, never shown back, handed to the connector as typed (not trimmed)
    format: str = "text"  # how the form takes it: text, password (never shown, emptied once sent), url, numeric
    pattern: str = ""  # a regular expression it must match, where the schema can say the shape (`^/`: absolute)
    choices: tuple[tuple[str, str], ...] = ()  # the values it takes, each with its words: a choice in the form
    placeholder: str = ""  # an example the empty field shows


@dataclass(frozen=True)
class ConnectForm:
    """What the dashboard's form to connect one says around its fields."""

    title: str  # "Connect a mailbox"
    button: str  # "Connect mailbox"
    intro: str  # what it mirrors, and what to have at hand
    name: str  # the integration's name when none is typed
    name_placeholder: str = ""


@dataclass(frozen=True)
class ConnectorSpec:
    """A connector as it declares itself, once, in its module (adapters/integrations/<kind>.py): its kind, the
    source its mirrors carry, the settings it reads and which are secrets, and what it may do. The checks below,
    the published schema of POST /integrations, GET /integrations/kinds and the dashboard's connect form are all
    made from it, so a new connector is its module (and its test)."""

    kind: str
    title: str  # what it is called on an integration's card ("Mailbox (IMAP)")
    source: str  # the source its mirrors carry (/brief counts memories by source)
    fields: tuple[Field, ...]  # every setting it reads, in the form's order: any other is refused
    form: ConnectForm
    # Whether it reads the brain's own machine (a folder) with the server's rights: then only the owner connects
    # it, and only where the brain runs on someone's machine (not on Lambda).
    local: bool = False
    # Whether its setting `path` is a folder the brain watches, syncing at once when a file in it changes (the
    # folder watcher, where the brain runs on someone's machine); else it waits for the hourly sync.
    watched: bool = False
    # The setting whose host names the provider the source ends with: a mailbox's mirrors are `email-gmail` from
    # imap.gmail.com, `email-imap` for a host of no known provider (PROVIDERS). A setting kept in the log, not a secret.
    provider_from: str = ""
    one_of: tuple[str, ...] = ()  # settings of which exactly one is given (Notion: a database or a page)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields)

    @property
    def secrets(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields if f.secret)

    def source_of(self, settings: Mapping[str, str]) -> str:
        """The source of its mirrors, for an integration connected with these (kept) settings."""
        if self.provider_from:
            return f"{self.source}-{provider(settings.get(self.provider_from, ''))}"
        return self.source


@stored
@dataclass(frozen=True)
class IntegrationConnected:
    kind: str
    name: str
    workspace: str
    settings: tuple[tuple[str, str], ...]  # never a secret: those are sealed outside the log (ports/secrets.py)
    secret_names: tuple[str, ...] = ()  # the settings kept there, by name
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class IntegrationListed:
    """On the registry stream: an integration was connected (its own stream says the rest)."""

    integration_id: str
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class IntegrationSynced:
    """One sync's outcome: what it changed, and whether it went through every item (a bounded run stops early
    and the next one goes on)."""

    created: int
    updated: int
    removed: int
    complete: bool
    error: str = ""  # in words, for the person who connected it
    versions: tuple[tuple[str, str], ...] = ()  # the items' versions upstream this sync brought (Item.version)
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class MirrorIndexed:
    """The integration holds a mirror of this upstream item."""

    external_id: str
    memory_id: str
    version: str = ""  # the item's version upstream as first mirrored
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class MirrorDropped:
    external_id: str
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class IntegrationDisconnected:
    kept_mirrors: bool
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class MirrorSynced:
    """On a memory's stream: it mirrors `external_id` of the integration, as synced (its hash); `kept` when the
    integration was disconnected with its mirrors kept (they are ordinary memories from then on)."""

    integration_id: str
    source: str
    external_id: str
    url: str
    synced_hash: str
    kept: bool = False
    version: str = ""  # the item's version upstream as synced (Item.version), when its connector gives one
    SCHEMA: ClassVar[int] = 1


# The events of an integration's own stream show by their type's name in the audit feed; a mirror's sync shows on
# the memory's timeline (a change of its text is the MemoryRevised beside it, reason "synced").
shows(MirrorSynced, "synced",
      payload=lambda e: {"source": e.source, "url": e.url, **({"kept": True} if e.kept else {})},
      line=lambda e, other: f"{'released' if e.kept else 'synced'} from {e.source}")


@dataclass(frozen=True)
class Integration:
    id: str
    exists: bool = False
    connected: bool = False
    kind: str = ""
    name: str = ""
    workspace: str = ""
    actor: str = ""  # who connected it
    settings: tuple[tuple[str, str], ...] = ()
    secret_names: tuple[str, ...] = ()
    connected_at: int = 0
    last_sync: int = 0
    last_error: str = ""
    complete: bool = False
    counts: tuple[int, int, int] = (0, 0, 0)  # the last sync's created, updated, removed
    mirrors: dict[str, str] = field(default_factory=dict)  # upstream item → memory id
    dropped: dict[str, int] = field(default_factory=dict)  # upstream item → how often its mirror was removed
    versions: dict[str, str] = field(default_factory=dict)  # upstream item → its version as last synced
    version: int = 0

    def setting(self, name: str) -> str:
        return dict(self.settings).get(name, "")

    def mirror_of(self, external_id: str, secret: bytes | None = None, taken: int = 0) -> str:
        """The memory that mirrors this item now (or will, once synced: keyed with the brain's `secret`)."""
        return self.mirrors.get(external_id) or mirror_id(self.id, external_id, self.dropped.get(external_id, 0),
                                                          secret, taken)


def listed(history: list[Envelope]) -> list[str]:
    """The integrations the registry stream lists, oldest first."""
    return [e.event.integration_id for e in history if isinstance(e.event, IntegrationListed)]


def fold(history: list[Envelope], integration_id: str) -> Integration:
    return fold_more(Integration(integration_id), history)


def fold_more(state: Integration, events: list[Envelope]) -> Integration:
    """`state` with these later events of its stream applied. Its maps are copied once, then changed in place by
    each event (a copy per event made the fold of a 10,000-mirror stream take seconds): `state`, which the caller
    may hold on to, is left as it was."""
    if not events:
        return state
    state = replace(state, mirrors=dict(state.mirrors), dropped=dict(state.dropped), versions=dict(state.versions))
    for envelope in events:
        state = _apply(envelope.event, state, envelope.at, envelope.actor)
    return state


# Each takes the state being folded, whose maps are the fold's own (fold_more), and may change them in place.
@singledispatch
def _apply(event: object, state: Integration, at: int, actor: str) -> Integration:
    return replace(state, version=state.version + 1)  # an erased event: nothing to show


@_apply.register
def _connected(event: IntegrationConnected, state: Integration, at: int, actor: str) -> Integration:
    return replace(state, exists=True, connected=True, kind=event.kind, name=event.name, workspace=event.workspace,
                   actor=actor, settings=event.settings, secret_names=event.secret_names, connected_at=at,
                   version=state.version + 1)


@_apply.register
def _synced(event: IntegrationSynced, state: Integration, at: int, actor: str) -> Integration:
    folded = replace(state, last_sync=at, last_error=event.error, complete=event.complete,
                     counts=(event.created, event.updated, event.removed), version=state.version + 1)
    state.versions.update(event.versions)
    return folded


@_apply.register
def _indexed(event: MirrorIndexed, state: Integration, at: int, actor: str) -> Integration:
    state.mirrors[event.external_id] = event.memory_id
    if event.version:
        state.versions[event.external_id] = event.version
    return replace(state, version=state.version + 1)


@_apply.register
def _dropped(event: MirrorDropped, state: Integration, at: int, actor: str) -> Integration:
    state.mirrors.pop(event.external_id, None)
    state.versions.pop(event.external_id, None)
    state.dropped[event.external_id] = state.dropped.get(event.external_id, 0) + 1
    return replace(state, version=state.version + 1)


@_apply.register
def _disconnected(event: IntegrationDisconnected, state: Integration, at: int, actor: str) -> Integration:
    return replace(state, connected=False, mirrors={}, versions={}, version=state.version + 1)


# Mail providers by the domain of their IMAP host: a mirror's source names the provider (`email-gmail`), as the
# reference's /brief counts them; any other host is `email-imap`.
PROVIDERS = {"gmail.com": "gmail", "googlemail.com": "gmail", "outlook.com": "outlook", "office365.com": "outlook",
             "hotmail.com": "outlook", "fastmail.com": "fastmail", "icloud.com": "icloud", "me.com": "icloud",
             "yahoo.com": "yahoo", "aol.com": "aol", "zoho.com": "zoho", "proton.me": "proton",
             "protonmail.ch": "proton", "gmx.net": "gmx", "gmx.com": "gmx", "yandex.com": "yandex"}


def provider(host: str) -> str:
    labels = host.strip().lower().rstrip(".").split(".")
    return next((PROVIDERS[".".join(labels[i:])] for i in range(len(labels)) if ".".join(labels[i:]) in PROVIDERS),
                "imap")


def check_connect(kind: str, name: str, settings: dict[str, str], kinds: Collection[str]) -> None:
    """A connect's kind (one of `kinds`: every connector registered, available here or not), name and settings as
    any connector takes them."""
    if kind not in kinds:
        raise InvalidInput(f"Unknown integration kind: {shorten(kind)} (one of: {', '.join(sorted(kinds))})")
    if not name.strip() or len(name) > 100:
        raise InvalidInput("name must be 1 to 100 characters")
    if any(not isinstance(v, str) or len(v) > 2000 for v in settings.values()):
        raise InvalidInput("settings must be strings of at most 2,000 characters")
    for key, value in settings.items():
        if any(ord(c) < 32 or ord(c) == 127 for c in value):  # a line break would be another command upstream
            raise InvalidInput(f"settings.{shorten(key)} may not hold control characters (line breaks, tabs)")


def check_fields(spec: ConnectorSpec, settings: Mapping[str, str]) -> None:
    """Only the settings the connector reads: any other (a password given to a folder) would be kept in clear."""
    unknown = sorted(set(settings) - spec.names)
    if unknown:
        raise InvalidInput(f"A {spec.kind} integration takes no {', '.join(shorten(k) for k in unknown[:3])} (it takes "
                           f"{', '.join(sorted(spec.names))})")


def refused(source: str, url: str) -> ManagedMirror:
    """The 409: where the change is to be made instead."""
    where = f" ({url})" if url else ""
    return ManagedMirror(f"This entry is a managed mirror of {source}{where}: change it there, and the next sync "
                         "brings the change here. To take it out of the brain, delete it there, or disconnect the "
                         "integration (POST /integrations/disconnect) with forget_mirrors.")
