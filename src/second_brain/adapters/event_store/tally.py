"""Noted recalls on DynamoDB, in the log's table but outside the log: one plain PutItem per recall (no transaction,
no item shared with any writer), folded into `MemoryRecalled` events by the hourly job, then deleted.

Items are keyed `$recalls#<day>#<NN>` (16 partitions a day, picked at random) with a random sort key; they carry
no `type`, so the projector never hears of them, and expire after TALLY_LIFETIME_S should no fold ever come.
"""

import random
import time
from collections.abc import Iterator, Sequence
from typing import Any

from ...ports.recall_tally import Tallied
from .dynamodb import paged
from .keys import aws_call

TALLY_PREFIX = "$recalls#"
TALLY_PARTITIONS = 16
TALLY_LIFETIME_S = 8 * 86_400  # a week of missed folds, and a day


class DynamoDBRecallTally:
    def __init__(self, client: Any, table_name: str) -> None:
        self.client = client
        self.table = table_name

    def note(self, tallied: Tallied) -> None:
        partition = f"{TALLY_PREFIX}{tallied.day}#{random.randrange(TALLY_PARTITIONS):02d}"
        self._call(self.client.put_item, TableName=self.table, Item={
            "stream_id": {"S": partition}, "version": {"N": str(random.getrandbits(62))},
            "key": {"S": tallied.key}, "actor": {"S": tallied.actor}, "request_id": {"S": tallied.request_id},
            "ids": {"L": [{"S": i} for i in tallied.memory_ids]}, "at": {"N": str(tallied.at)},
            "expires": {"N": str(int(time.time()) + TALLY_LIFETIME_S)}})

    def due(self, days: Sequence[str]) -> Iterator[Tallied]:
        for day in days:
            for n in range(TALLY_PARTITIONS):
                request: dict[str, Any] = {
                    "TableName": self.table, "ConsistentRead": True, "KeyConditionExpression": "stream_id = :s",
                    "ExpressionAttributeValues": {":s": {"S": f"{TALLY_PREFIX}{day}#{n:02d}"}}}
                query = lambda **asked: self._call(self.client.query, **asked)  # noqa: E731
                for item in paged(query, query(**request), **request):
                    yield Tallied(f"{item['stream_id']['S']}|{item['version']['N']}", item["actor"]["S"],
                                  item["request_id"]["S"], tuple(i["S"] for i in item["ids"]["L"]), day,
                                  int(item["at"]["N"]))

    def drop(self, tallied: Tallied) -> None:
        partition, version = tallied.key.split("|")
        self._call(self.client.delete_item, TableName=self.table,
                   Key={"stream_id": {"S": partition}, "version": {"N": version}})

    @staticmethod
    def _call(method: Any, **kwargs: Any) -> dict[str, Any]:
        return aws_call("the recall tally", method, **kwargs)


class InMemoryRecallTally:
    """The same, in a dict: for tests of what folds it."""

    def __init__(self) -> None:
        self.noted: dict[str, Tallied] = {}

    def note(self, tallied: Tallied) -> None:
        self.noted[tallied.key] = tallied

    def due(self, days: Sequence[str]) -> Iterator[Tallied]:
        yield from [t for t in self.noted.values() if t.day in days]

    def drop(self, tallied: Tallied) -> None:
        self.noted.pop(tallied.key, None)
