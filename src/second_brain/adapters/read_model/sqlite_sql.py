"""SQL pieces every SQLite read shares: the scope of a filter set, rows back into entries, term quoting."""

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache

from ...domain import text
from ...ports.read_model import ENTRY_FIELDS, EntryRow, Filters
from ..sqlite_database import SQLiteDatabase
from ..sqlite_sql import marks as marks  # shared with the vector index; the read model's modules import it here

NOT_DEPRECATED = f"NOT EXISTS (SELECT 1 FROM entry_tags d WHERE d.entry_rid = e.rid AND d.tag = '{text.DEPRECATED}')"
# Parameters: text.NEVER_RECALLED.
# One read of the few memories so tagged, kept for the query (SQLite makes the uncorrelated subquery an ephemeral
# index once), rather than a correlated look-up per candidate: 1.1 ms less in a bm25 search of 1,100 matches.
ALWAYS_EXCLUDED = ("e.rid NOT IN (SELECT entry_rid FROM entry_tags"
                   f" WHERE tag IN ({', '.join('?' for _ in text.NEVER_RECALLED)}))")


class SQLiteReads:
    """Base of the read side: reads go through the calling thread's connection."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self.db = db

    def _read(self, sql: str, params: Sequence[object]) -> sqlite3.Cursor:
        return self.db.connection().execute(sql, tuple(params))


def scope_sql(filters: Filters, by_id: bool = False) -> tuple[str, list[object]]:
    """SQL conditions on the entries alias `e` for a filter set; the workspace scope is never optional.

    `by_id`: the query looks rows up by id, so the workspace index must not be chosen to drive it
    (the unary plus keeps SQLite from scanning a whole workspace to check a few ids).
    """
    if not filters.workspaces:
        return "0", []
    column = "+e.workspace" if by_id else "e.workspace"
    clauses = [f"{column} IN ({', '.join('?' for _ in filters.workspaces)})"]
    params: list[object] = list(filters.workspaces)
    for tag in (filters.tag, f"kind:{filters.kind}" if filters.kind else None):
        if tag:
            clauses.append("EXISTS (SELECT 1 FROM entry_tags f WHERE f.entry_rid = e.rid AND f.tag = ?)")
            params.append(tag)
    if filters.any_tags:
        marks = ", ".join("?" for _ in filters.any_tags)
        clauses.append(f"EXISTS (SELECT 1 FROM entry_tags p WHERE p.entry_rid = e.rid AND p.tag IN ({marks}))")
        params.extend(filters.any_tags)
    if filters.after is not None:
        clauses.append("e.created_at >= ?")
        params.append(filters.after)
    if filters.before is not None:
        clauses.append("e.created_at <= ?")
        params.append(filters.before)
    if filters.actor is not None:
        clauses.append("e.actor = ?")
        params.append(filters.actor)
    if filters.born_by is not None:
        clauses.append("e.position <= ?")
        params.append(filters.born_by)
    return " AND ".join(clauses), params


def recall_scope_sql(filters: Filters, by_id: bool = False) -> tuple[str, list[object]]:
    where, params = scope_sql(filters, by_id)
    return f"{where} AND {ALWAYS_EXCLUDED}", [*params, *text.NEVER_RECALLED]


def newest_in_scope(columns: str, filters: Filters, limit: int, condition: str = "1",
                 condition_params: Sequence[object] = (), scope: Callable[..., tuple[str, list[object]]] = scope_sql,
                 ) -> tuple[str, list[object]]:
    """The newest `limit` entries in scope meeting `condition`: one walk of the (workspace, created_at) index per
    workspace, merged. With `workspace IN (a, b)` SQLite would sort every matching memory of both (the owner reads
    their own layer and the company's). Needs at least one workspace."""
    parts, params = [], []
    for workspace in filters.workspaces:
        where, scoped = scope(replace(filters, workspaces=(workspace,)))
        parts.append(f"SELECT * FROM (SELECT {columns}, e.rid AS rid_ FROM entries e WHERE ({condition}) AND {where}"
                     " ORDER BY e.created_at DESC, e.rid DESC LIMIT ?)")
        params += [*condition_params, *scoped, limit]
    return " UNION ALL ".join(parts) + " ORDER BY created_at DESC, rid_ DESC LIMIT ?", [*params, limit]


def phrase(term: str) -> str:
    """An FTS5 string: quotes doubled, and no NUL (which ends SQLite's reading of the string: "unterminated")."""
    return '"' + term.replace("\x00", " ").replace('"', '""') + '"'


def escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


ENTRY_COLUMNS = ", ".join(f"e.{name}" for name in ENTRY_FIELDS)
_ENTRY_WIDTH = len(ENTRY_FIELDS)
assert ENTRY_FIELDS[:3] == ("id", "content", "tags"), "entry_of parses the third column as the tags"


def entry_of(row: sqlite3.Row) -> EntryRow:
    """A row selected as ENTRY_COLUMNS (EntryRow's fields, in its order; a query may add columns after them), read
    by position: recall reads hundreds per query, and by name each column is a search through the row's names."""
    return EntryRow(row[0], row[1], _tags(row[2]), *row[3:_ENTRY_WIDTH])


@lru_cache(maxsize=4096)
def _tags(column: str) -> tuple[str, ...]:
    """A tags column parsed; memories share a few tag sets, and parsing is a third of reading a row."""
    return tuple(json.loads(column))


def row_of(row: sqlite3.Row) -> EntryRow:
    """A row of `entries` selected with all its columns, read by EntryRow's field names."""
    return EntryRow(**{name: row[name] for name in ENTRY_FIELDS} | {"tags": _tags(row["tags"])})
