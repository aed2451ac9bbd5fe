"""One schema for a memory's row: EntryRow's stored fields (ENTRY_FIELDS) are what the SQLite table holds and the
projection writes, what the OpenSearch mapping declares and the projection indexes, and what both backends read
back, by name. A field added to one of them and not the others fails here, not in a query."""

import json
import sqlite3

import pytest

from second_brain.adapters.opensearch import queries
from second_brain.adapters.opensearch.indexes import mapping
from second_brain.adapters.read_model import sqlite_projection, sqlite_sql
from second_brain.domain.memory import Memory
from second_brain.ports.read_model import ENTRY_FIELDS, EntryRow

MEMORY = Memory(id="m1", exists=True, content="Pricing floor is $6k", tags=("pricing", "q3"), source="api",
                workspace="personal-owner", actor="owner", created_at=1_000, updated_at=2_000, importance=4,
                recall_count=3, use_count=2, contradiction_wins=1, contradiction_losses=5,
                when_at=1_800_000_000_000, when_kind="due")
ROW = EntryRow.of(MEMORY)


def entries_table() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    for statement in sqlite_projection.TABLES:
        conn.execute(statement)
    return conn


def test_every_stored_field_is_a_column_of_the_sqlite_table_and_written_by_the_projection():
    conn = entries_table()
    columns = {column["name"] for column in conn.execute("PRAGMA table_info(entries)")}
    assert set(ENTRY_FIELDS) - columns == set()
    assert set(ENTRY_FIELDS) - set(sqlite_projection._columns(MEMORY)) == set()


def test_the_sqlite_table_reads_back_the_row_it_was_written_from_by_name_and_by_position():
    conn = entries_table()
    written = sqlite_projection._columns(MEMORY)
    conn.execute(f"INSERT INTO entries ({', '.join(written)}) VALUES ({', '.join('?' * len(written))})",
                 list(written.values()))
    assert sqlite_sql.row_of(conn.execute("SELECT * FROM entries").fetchone()) == ROW
    # a query may select more columns after ENTRY_COLUMNS (a score): they are not read into the row
    assert sqlite_sql.entry_of(conn.execute(f"SELECT {sqlite_sql.ENTRY_COLUMNS}, 0.5 FROM entries e").fetchone()) \
        == ROW


def test_every_stored_field_is_in_the_opensearch_mapping_and_read_back_from_a_document():
    properties = mapping("entries", 384)["mappings"]["properties"]
    assert set(ENTRY_FIELDS) - set(properties) == set()
    document = json.loads(json.dumps({name: getattr(ROW, name) for name in ENTRY_FIELDS}))  # as stored: JSON
    assert queries.row_of(document) == ROW


@pytest.mark.parametrize("missing", ["use_count", "when_at", "when_kind"])
def test_a_document_written_before_a_later_field_reads_with_the_value_it_then_had(missing):
    document = {name: getattr(ROW, name) for name in ENTRY_FIELDS if name != missing}
    assert getattr(queries.row_of(document), missing) == EntryRow.__dataclass_fields__[missing].default
