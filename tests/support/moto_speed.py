"""moto's DynamoDB queries without a sort of the whole table each time: the same answers, for the test suite's time.

moto 5 answers every Query by sorting every item of the table (`Table.all_items`, comparing DynamoType values) and
then keeping those of the partition asked for. The AWS tests' logs hold a few thousand items and are queried tens of
thousands of times, so most of their time went into those sorts. Here a Query is given a view of its table whose
`all_items` holds only the items the query's partition condition can keep: the one partition of the base table,
or, on an index, the items whose index key equals the value asked for (unsorted: moto sorts them by the index's
keys itself). Everything else (ranges, filters, pages, limits, projections) is moto's own code, unchanged;
tests/contract/test_moto_speed.py checks the answers against moto's own on tables of every shape.
"""

from typing import Any

from moto.dynamodb.models.table import Table

_original_query = Table.query


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


def install() -> None:
    Table.query = query  # type: ignore[method-assign]


def uninstall() -> None:
    Table.query = _original_query  # type: ignore[method-assign]
