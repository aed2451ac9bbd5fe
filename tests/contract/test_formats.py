"""Stored formats carry a number the code reads: an older one is opened (and marked as this build's), a newer one
is refused in words before anything is read or written, on SQLite (the file's user_version) and on DynamoDB (the
log's `$log` item)."""

import hashlib
import sqlite3

import boto3
import pytest
from moto import mock_aws

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.adapters.event_store import dynamodb as dynamodb_store
from second_brain.adapters.event_store import sqlite as sqlite_store
from second_brain.adapters.event_store.dynamodb import LOG_ITEM, DynamoDBEventStore, table_definition
from second_brain.adapters.event_store.sqlite import SQLiteEventStore
from second_brain.adapters.sqlite_database import SQLiteDatabase
from second_brain.bootstrap import build
from second_brain.domain.errors import NewerFormat
from second_brain.domain.events import MemoryCaptured
from second_brain.settings import Settings
from tests.conftest import envelope


def captured(text: str = "hello") -> MemoryCaptured:
    return MemoryCaptured(text, ("work",), "api", "personal-owner")


def user_version(path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA user_version").fetchone()[0]


def set_user_version(path, number: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {number}")
    conn.close()


def digest(folder) -> dict[str, str]:
    """Every file under the folder, by name, and a hash of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_new_brain_file_carries_this_builds_format(tmp_path):
    db = SQLiteDatabase(tmp_path / "brain.sqlite3")
    SQLiteEventStore(db)
    db.close()
    assert user_version(tmp_path / "brain.sqlite3") == sqlite_store.FORMAT == 1


def test_a_brain_file_from_before_formats_were_kept_opens_with_its_events_and_is_marked(tmp_path):
    db = SQLiteDatabase(tmp_path / "brain.sqlite3")
    SQLiteEventStore(db).append([envelope("memory-a", 1, captured())])
    db.close()
    set_user_version(tmp_path / "brain.sqlite3", 0)  # as every build before this one left it
    db = SQLiteDatabase(tmp_path / "brain.sqlite3")
    [event] = SQLiteEventStore(db).read_stream("memory-a")
    db.close()
    assert event.event == captured() and user_version(tmp_path / "brain.sqlite3") == 1


def test_a_brain_folder_of_a_newer_format_is_refused_in_words_and_left_as_it_was(tmp_path, clock):
    folder = tmp_path / "brain"
    build(Settings(data_dir=folder), clock=clock, embedder=FakeEmbedder()).close()
    set_user_version(folder / "brain.sqlite3", 2)
    before = digest(folder)
    with pytest.raises(NewerFormat) as refused:
        build(Settings(data_dir=folder), clock=clock, embedder=FakeEmbedder())
    assert refused.value.message.startswith(f"{folder / 'brain.sqlite3'} was written by a newer version of Second "
                                            f"Brain (data format 2); this version (")
    assert "reads data formats up to 1: upgrade Second Brain to open it" in refused.value.message
    assert digest(folder) == before


@pytest.fixture
def dynamodb():
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**table_definition("events"))
        yield client


def test_a_new_dynamodb_log_carries_this_builds_format(dynamodb, clock):
    DynamoDBEventStore(dynamodb, "events", clock.now_ms, settle_ms=0).append([envelope("memory-a", 1, captured())])
    item = dynamodb.get_item(TableName="events", Key={"stream_id": {"S": LOG_ITEM}, "version": {"N": "0"}})["Item"]
    assert item["format"] == {"N": str(dynamodb_store.FORMAT)} and dynamodb_store.FORMAT == 1


def test_a_dynamodb_log_from_before_formats_were_kept_is_read(dynamodb, clock):
    DynamoDBEventStore(dynamodb, "events", clock.now_ms, settle_ms=0).append([envelope("memory-a", 1, captured())])
    dynamodb.update_item(TableName="events", Key={"stream_id": {"S": LOG_ITEM}, "version": {"N": "0"}},
                         UpdateExpression="REMOVE #f", ExpressionAttributeNames={"#f": "format"})
    store = DynamoDBEventStore(dynamodb, "events", clock.now_ms, settle_ms=0)
    assert [e.event for e in store.read_stream("memory-a")] == [captured()]
    assert [e.event for e in store.read_all()] == [captured()]


def test_a_dynamodb_log_of_a_newer_format_is_refused_in_words_before_any_read_or_write(dynamodb, clock):
    DynamoDBEventStore(dynamodb, "events", clock.now_ms, settle_ms=0).append([envelope("memory-a", 1, captured())])
    dynamodb.update_item(TableName="events", Key={"stream_id": {"S": LOG_ITEM}, "version": {"N": "0"}},
                         UpdateExpression="SET #f = :two", ExpressionAttributeNames={"#f": "format"},
                         ExpressionAttributeValues={":two": {"N": "2"}})
    items = dynamodb.scan(TableName="events")["Items"]
    for attempt in (lambda s: s.read_stream("memory-a"), lambda s: s.read_all(),
                    lambda s: s.append([envelope("memory-b", 1, captured())])):
        store = DynamoDBEventStore(dynamodb, "events", clock.now_ms, settle_ms=0)
        with pytest.raises(NewerFormat, match=r"the DynamoDB log events was written by a newer version of Second "
                                              r"Brain \(log format 2\); this version \(.*\) reads log formats up to 1"):
            attempt(store)
    assert dynamodb.scan(TableName="events")["Items"] == items
