"""DynamoDB event store: PK stream_id, SK version; conditional TransactWriteItems; a global position counter.

The counter item is advanced in the same transaction as the events, so positions are gap-free and
`read_all` can page through a GSI on (log, position). A conflict on the counter alone means another
stream was written at the same moment: re-read the counter and try again. A conflict on a stream item
is the caller's ConcurrencyConflict.
"""

import json
import random
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from botocore.exceptions import ClientError

from ...domain.errors import ConcurrencyConflict, StoreUnavailable
from ...domain.events import Envelope, from_data, is_tombstone, to_data
from .checks import expected_versions

HEAD_STREAM = "$head"
LOG_INDEX = "by_position"
MAX_COUNTER_RETRIES = 25


class DynamoDBEventStore:
    def __init__(self, client: Any, table_name: str) -> None:
        self.client = client
        self.table = table_name

    def append(self, events: Sequence[Envelope]) -> list[Envelope]:
        expected = expected_versions(events)
        if len(events) + len(expected) + 1 > 100:
            raise ValueError("a batch is limited to what one DynamoDB transaction holds")
        for attempt in range(MAX_COUNTER_RETRIES):
            head = self.head()
            stored = [replace(e, position=head + i + 1) for i, e in enumerate(events)]
            try:
                self.client.transact_write_items(TransactItems=self._items(stored, expected, head))
            except ClientError as exc:
                if exc.response["Error"]["Code"] != "TransactionCanceledException":
                    raise StoreUnavailable(f"DynamoDB append failed: {exc}") from exc
                reasons = [r.get("Code", "None") for r in exc.response.get("CancellationReasons", [])]
                if any(code == "ConditionalCheckFailed" for code in reasons[:-1]):
                    raise ConcurrencyConflict("a stream moved on before this append") from exc
                time.sleep(random.uniform(0, 0.005 * (attempt + 1)))  # only the counter moved: retry
                continue
            for event in stored:
                if is_tombstone(event.event):
                    self._erase(event.stream_id, before=event.version)
            return stored
        raise StoreUnavailable("the event log is too busy: global position kept moving")

    def _items(self, stored: list[Envelope], expected: dict[str, int], head: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for stream_id, version in expected.items():
            if version > 0:  # the stream must be exactly at `version`: that item exists, the next does not
                items.append({"ConditionCheck": {
                    "TableName": self.table, "Key": _key(stream_id, version),
                    "ConditionExpression": "attribute_exists(stream_id)",
                }})
        for event in stored:
            items.append({"Put": {
                "TableName": self.table, "Item": _item(event),
                "ConditionExpression": "attribute_not_exists(stream_id)",
            }})
        items.append({"Update": {
            "TableName": self.table, "Key": _key(HEAD_STREAM, 0),
            "UpdateExpression": "SET head_position = :new",
            "ConditionExpression": "attribute_not_exists(head_position) OR head_position = :old"
            if head == 0 else "head_position = :old",
            "ExpressionAttributeValues": {":new": {"N": str(head + len(stored))}, ":old": {"N": str(head)}},
        }})
        return items

    def _erase(self, stream_id: str, before: int) -> None:
        for version in range(1, before):
            self.client.update_item(
                TableName=self.table, Key=_key(stream_id, version),
                UpdateExpression="SET #d = :empty, erased = :yes",
                ExpressionAttributeNames={"#d": "data"},
                ExpressionAttributeValues={":empty": {"S": "{}"}, ":yes": {"BOOL": True}},
            )

    def read_stream(self, stream_id: str) -> list[Envelope]:
        items = self._query(
            TableName=self.table, ConsistentRead=True,
            KeyConditionExpression="stream_id = :s", ExpressionAttributeValues={":s": {"S": stream_id}},
        )
        return [envelope_from_item(item) for item in items]

    def read_all(self, after: int = 0, limit: int = 1000) -> list[Envelope]:
        items = self._query(
            TableName=self.table, IndexName=LOG_INDEX, Limit=limit,
            KeyConditionExpression="log = :log AND #p > :after",
            ExpressionAttributeNames={"#p": "position"},
            ExpressionAttributeValues={":log": {"S": "all"}, ":after": {"N": str(after)}},
            max_items=limit,
        )
        return [envelope_from_item(item) for item in items]

    def head(self) -> int:
        item = self.client.get_item(TableName=self.table, Key=_key(HEAD_STREAM, 0), ConsistentRead=True).get("Item")
        return int(item["head_position"]["N"]) if item and "head_position" in item else 0

    def _query(self, max_items: int | None = None, **kwargs: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        while True:
            page = self.client.query(**kwargs)
            items.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page or (max_items is not None and len(items) >= max_items):
                return items[:max_items] if max_items is not None else items
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def table_definition(table_name: str) -> dict[str, Any]:
    """The table this store expects (the SAM template declares the same)."""
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": "stream_id", "AttributeType": "S"},
            {"AttributeName": "version", "AttributeType": "N"},
            {"AttributeName": "log", "AttributeType": "S"},
            {"AttributeName": "position", "AttributeType": "N"},
        ],
        "KeySchema": [
            {"AttributeName": "stream_id", "KeyType": "HASH"},
            {"AttributeName": "version", "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [{
            "IndexName": LOG_INDEX,
            "KeySchema": [
                {"AttributeName": "log", "KeyType": "HASH"},
                {"AttributeName": "position", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    }


def _key(stream_id: str, version: int) -> dict[str, Any]:
    return {"stream_id": {"S": stream_id}, "version": {"N": str(version)}}


def _item(event: Envelope) -> dict[str, Any]:
    return {
        **_key(event.stream_id, event.version),
        "log": {"S": "all"},
        "position": {"N": str(event.position)},
        "type": {"S": event.type},
        "schema_version": {"N": str(event.schema_version)},
        "data": {"S": json.dumps(to_data(event.event), ensure_ascii=False)},
        "actor": {"S": event.actor},
        "workspace": {"S": event.workspace},
        "request_id": {"S": event.request_id},
        "at": {"N": str(event.at)},
    }


def envelope_from_item(item: dict[str, Any]) -> Envelope:
    """An event as stored in the table (and as a DynamoDB Streams NewImage carries it)."""
    return Envelope(
        stream_id=item["stream_id"]["S"],
        version=int(item["version"]["N"]),
        event=from_data(item["type"]["S"], json.loads(item["data"]["S"]), erased=item.get("erased", {}).get("BOOL", False)),
        actor=item["actor"]["S"],
        workspace=item["workspace"]["S"],
        request_id=item["request_id"]["S"],
        at=int(item["at"]["N"]),
        position=int(item["position"]["N"]),
        schema_version=int(item["schema_version"]["N"]),
    )
