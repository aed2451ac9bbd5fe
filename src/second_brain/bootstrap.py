"""The composition root: settings in, a wired brain out. Nothing else builds adapters."""

import os
import secrets
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from .adapters.event_store.sqlite import SQLiteEventStore
from .adapters.read_model.sqlite import SQLiteReadModel
from .adapters.sqlite_database import SQLiteDatabase
from .app.memories import MemoryService
from .app.queries import MemoryQueries
from .domain.identity import Identity, owner
from .ports.clock import Clock, SystemClock
from .settings import Settings


@dataclass
class Brain:
    """Everything an entry point needs, wired once."""

    settings: Settings
    db: SQLiteDatabase
    store: SQLiteEventStore
    memories: MemoryService
    queries: MemoryQueries
    owner: Identity

    def close(self) -> None:
        self.db.close()


def build(settings: Settings, clock: Clock | None = None) -> Brain:
    clock = clock or SystemClock()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = SQLiteDatabase(settings.database_path, synchronous=settings.sqlite_synchronous)
    read_model = SQLiteReadModel(db)
    store = SQLiteEventStore(db, projections=[read_model])
    store.catch_up()
    return Brain(
        settings=settings,
        db=db,
        store=store,
        memories=MemoryService(store, clock, ZoneInfo(settings.timezone)),
        queries=MemoryQueries(read_model, store, clock, settings.vectorize_grace_ms),
        owner=owner(settings.owner_name),
    )


def resolve_token(settings: Settings) -> tuple[str, bool]:
    """The owner token: from the environment, else the saved one, else a new one saved owner-only."""
    if settings.auth_token is not None and settings.auth_token.get_secret_value().strip():
        return settings.auth_token.get_secret_value().strip(), False
    path = settings.token_path
    if path.exists():
        return path.read_text().strip(), False
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    return token, True
