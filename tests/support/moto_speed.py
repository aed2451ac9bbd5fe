"""moto's DynamoDB queries and transactions at the cost of what they touch: the same answers, for the suite's time.

moto 5 answers every Query by sorting every item of the table (`Table.all_items`, comparing DynamoType values) and
then keeping those of the partition asked for. The AWS tests' logs hold a few thousand items and are queried tens of
thousands of times, so most of their time went into those sorts. Here a Query is given a view of its table whose
`all_items` holds only the items the query's partition condition can keep: the one partition of the base table,
or, on an index, the items whose index key equals the value asked for (unsorted: moto sorts them by the index's
keys itself). Everything else (ranges, filters, pages, limits, projections) is moto's own code, unchanged;
tests/contract/test_moto_speed.py checks the answers against moto's own on tables of every shape.

moto 5 also takes a deep copy of every table a TransactWriteItems names, once per item of the transaction, to put
back if it fails: an append to the log copied the whole log two or three times (every Item, every DynamoType), and
that was 40% of an AWS test's time. Here the copy it takes is a cheap one with the same contents: a table object
of its own with its own item containers holding the same Item objects (a Put or a Delete replaces or removes an
Item, never changes it), deep copies of the Items an Update of the transaction will change in place, and its own
list of the stream's records. moto's own code then runs the transaction and, if it fails, puts that copy back, as
it would its deep one; test_moto_speed.py checks tables and streams after transactions that fail and succeed.

And moto 5 writes each answer by walking the operation's output shape from botocore's model, value by value: for a
Query of a few hundred items that walk took longer than the query. The items an item read answers (Query, Scan,
GetItem, BatchGetItem, TransactGetItems) are already DynamoDB's JSON, but for binary values: here they are written
with json.dumps, binary values in base64, as moto's serializer writes them (test_moto_speed.py compares every
answer of its workloads with what moto's serializer writes).
"""

import base64
import copy
import json
import threading
from collections import defaultdict
from typing import Any

from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoResult

_original_query = Table.query
_original_answer = DynamoResult.execute_result
ITEM_READS = frozenset({"Query", "Scan", "GetItem", "BatchGetItem", "TransactGetItems"})
_original_transact = DynamoDBBackend.transact_write_items
_before: threading.local = threading.local()  # the copies of the tables the running transaction names, by id


class _Partition:
    """The table, but for `all_items`: those the query's partition condition keeps."""

    def __init__(self, table: Table, keep: Any) -> None:
        self._table = table
        self._keep = keep

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    def all_items(self) -> list[Any]:
        return self._keep(self._table)


def _base_partition(hash_key: Any) -> Any:
    def keep(table: Table) -> list[Any]:
        found = table.items.get(hash_key)
        if found is None:
            return []
        if not table.range_key_attr:
            return [found]
        return sorted(list(found.values()), key=lambda item: item.range_key)
    return keep


def _index_partition(conditions: list[tuple[str, Any]]) -> Any:
    wanted = [(name, value.type, value.value) for name, value in conditions]

    def keep(table: Table) -> list[Any]:
        items = [item for hash_set in list(table.items.values())
                 for item in (list(hash_set.values()) if table.range_key_attr else [hash_set])]
        return [item for item in items if all((found := item.attrs.get(name)) is not None and found.type == kind
                                              and found.value == value for name, kind, value in wanted)]
    return keep


def query(self: Table, hash_key: Any, range_comparison: Any, range_objs: Any, limit: Any, exclusive_start_key: Any,
          scan_index_forward: Any, projection_expressions: Any, index_name: str | None = None, *args: Any,
          **kwargs: Any) -> Any:
    conditions = kwargs.get("hash_key_conditions")
    if index_name is None and hash_key is not None:
        view: Any = _Partition(self, _base_partition(hash_key))
    elif index_name is not None and conditions:
        view = _Partition(self, _index_partition(conditions))
    else:
        view = self
    return _original_query(view, hash_key, range_comparison, range_objs, limit, exclusive_start_key,
                           scan_index_forward, projection_expressions, index_name, *args, **kwargs)


def _copy_before(table: Table, updated: list[dict[str, Any]]) -> Table:
    """What moto's deep copy of `table` would hold for a transaction that updates `updated` (keys) in place."""
    before = copy.copy(table)
    before.items = defaultdict(dict, {hash_key: dict(ranged) for hash_key, ranged in table.items.items()}
                               if table.range_key_attr else table.items)
    for key in updated:
        hash_key = DynamoType(key[table.hash_key_attr])
        range_key = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
        item = table.get_item(hash_key, range_key)
        if item is None:
            continue
        if range_key is None:
            before.items[hash_key] = copy.deepcopy(item)
        else:
            before.items[hash_key][range_key] = copy.deepcopy(item)
    if table.stream_shard is not None:
        before.stream_shard = copy.copy(table.stream_shard)
        before.stream_shard.table = before
        before.stream_shard.items = list(table.stream_shard.items)
    return before


def transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
    updated: dict[str, list[dict[str, Any]]] = {}
    for item in transact_items:
        for kind, op in item.items():
            if op.get("TableName") in self.tables:
                updated.setdefault(op["TableName"], []).extend([op["Key"]] if kind == "Update" else [])
    _before.tables = {id(self.tables[name]): _copy_before(self.tables[name], keys) for name, keys in updated.items()}
    try:
        _original_transact(self, transact_items)
    finally:
        _before.tables = {}


def _deepcopy(self: Table, memo: dict[int, Any]) -> Table:
    """The copy taken above for a table the running transaction names; otherwise the deep copy itself."""
    taken = getattr(_before, "tables", {}).get(id(self))
    if taken is not None:
        return taken  # type: ignore[no-any-return]
    reduced = self.__reduce_ex__(4)
    return copy._reconstruct(self, memo, *reduced)  # type: ignore[attr-defined,no-any-return]


def _binary(value: Any) -> str:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} in an item read's answer")


def answer(self: DynamoResult, context: Any) -> tuple[int, dict[str, str], str]:
    """An item read's answer as json.dumps writes it; any other answer as moto's serializer does."""
    if context.operation_model.name not in ITEM_READS or not isinstance(self.result, dict):
        return _original_answer(self, context)  # type: ignore[no-any-return]
    body = json.dumps(self.result, default=_binary)
    return 200, {"Content-Type": "application/x-amz-json-1.0"}, body


def install() -> None:
    Table.query = query  # type: ignore[method-assign]
    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
    Table.__deepcopy__ = _deepcopy  # type: ignore[attr-defined]
    DynamoResult.execute_result = answer  # type: ignore[method-assign,assignment]


def uninstall() -> None:
    Table.query = _original_query  # type: ignore[method-assign]
    DynamoDBBackend.transact_write_items = _original_transact  # type: ignore[method-assign]
    del Table.__deepcopy__  # type: ignore[attr-defined]
    DynamoResult.execute_result = _original_answer  # type: ignore[method-assign]
