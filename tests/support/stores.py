"""The event stores the contract suites run on: in memory, SQLite on a real file, DynamoDB through moto, and the
in-memory log behind the projecting store."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import boto3
from moto import mock_aws

from second_brain.adapters.event_store.dynamodb import DynamoDBEventStore, table_definition
from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.adapters.event_store.projecting import ProjectingEventStore
from second_brain.adapters.event_store.sqlite import SQLiteEventStore
from second_brain.adapters.sqlite_database import SQLiteDatabase
from second_brain.ports.clock import Clock
from second_brain.ports.event_store import EventStore


@contextmanager
def event_store(kind: str, tmp_path: Path, clock: Clock | None = None) -> Iterator[EventStore]:
    """A fresh, empty store of `kind`: memory, sqlite, dynamodb or projecting. With the test's `clock`, DynamoDB
    gives positions by it and reads as settled what was just written (one process writes and reads); without,
    it keeps the wall clock and the deployed settling time."""
    if kind == "memory":
        yield InMemoryEventStore()
    elif kind == "projecting":
        yield ProjectingEventStore(InMemoryEventStore(), [])
    elif kind == "sqlite":
        db = SQLiteDatabase(tmp_path / "events.sqlite3")
        yield SQLiteEventStore(db)
        db.close()
    else:
        with mock_aws():
            client = boto3.client("dynamodb", region_name="us-east-1")
            client.create_table(**table_definition("events"))
            yield (DynamoDBEventStore(client, "events", clock.now_ms, settle_ms=0) if clock
                   else DynamoDBEventStore(client, "events"))
