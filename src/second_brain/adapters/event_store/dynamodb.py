"""DynamoDB event store: PK stream_id, SK version; conditional TransactWriteItems; a global position counter.

The counter item is advanced in the same transaction as the events, so positions are gap-free and
`read_all` can page through a GSI on (log, position). A conflict on the counter alone means another
stream was written at the same moment: re-read the counter and try again. A conflict on a stream item
is the caller's ConcurrencyConflict.

An item holds at most 400 KB, and a note may be 200,000 characters (600 KB of UTF-8 in CJK): an event's data
past ITEM_DATA_BYTES is stored compressed, and past that again in parts, items of their own written in the same
transaction (keys `$part#<stream>#<version>`, outside the log index) and read back with the event.
"""

import json
import logging
import random
import time
import zlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...domain.errors import ConcurrencyConflict, StoreUnavailable
from ...domain.events import Envelope, from_data, is_tombstone, to_data
from ...ports.event_store import EVERY, EventMatch, Touch
from .checks import begun_after, expected_versions, touched

HEAD_STREAM = "$head"
PART_PREFIX = "$part#"
# One partition listing the forgets whose erasure has not completed: a marker is written in the tombstone's
# transaction and deleted once every earlier event of the stream is erased, so a failure halfway is finished
# by `complete_erasures` (the nightly job) instead of leaving the text behind for good.
ERASURES = "$erase#pending"
LOG_INDEX = "by_position"
MAX_COUNTER_RETRIES = 25
ITEM_DATA_BYTES = 300_000  # of an item's 400 KB: the key, the envelope and the attribute names fit in the rest
TRANSACTION_ITEMS = 100
# How much later than a neighbour an event may be stored than the time it carries: its time is read in the request
# that appends it, and no function runs longer than Lambda's 15 minutes.
CLOCK_SKEW_MS = 15 * 60_000

log = logging.getLogger("second_brain.dynamodb")


class DynamoDBEventStore:
    def __init__(self, client: Any, table_name: str) -> None:
        self.client = client
        self.table = table_name

    def append(self, events: Sequence[Envelope]) -> list[Envelope]:
        expected = expected_versions(events)
        for attempt in range(MAX_COUNTER_RETRIES):
            head = self.head()
            stored = [replace(e, position=head + i + 1) for i, e in enumerate(events)]
            items = self._items(stored, expected, head)
            if len(items) > TRANSACTION_ITEMS:
                raise ValueError("a batch is limited to what one DynamoDB transaction holds")
            try:
                self.client.transact_write_items(TransactItems=items)
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
                    self._finish_erasure(event.stream_id, event.version, event.position)
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
            item, parts = _item(event)
            items.append({"Put": {
                "TableName": self.table, "Item": item, "ConditionExpression": "attribute_not_exists(stream_id)",
            }})
            items.extend({"Put": {"TableName": self.table, "Item": part}} for part in parts)
            if is_tombstone(event.event):
                items.append({"Put": {"TableName": self.table, "Item": {
                    **_key(ERASURES, event.position), "target": {"S": event.stream_id},
                    "before": {"N": str(event.version)}}}})
        items.append({"Update": {
            "TableName": self.table, "Key": _key(HEAD_STREAM, 0),
            "UpdateExpression": "SET head_position = :new",
            "ConditionExpression": "attribute_not_exists(head_position) OR head_position = :old"
            if head == 0 else "head_position = :old",
            "ExpressionAttributeValues": {":new": {"N": str(head + len(stored))}, ":old": {"N": str(head)}},
        }})
        return items

    def complete_erasures(self) -> int:
        """Finish every erasure a failure left halfway; how many were finished."""
        markers = self._query(
            TableName=self.table, ConsistentRead=True,
            KeyConditionExpression="stream_id = :s", ExpressionAttributeValues={":s": {"S": ERASURES}},
        )
        return sum(self._finish_erasure(m["target"]["S"], int(m["before"]["N"]), int(m["version"]["N"]))
                   for m in markers)

    def _finish_erasure(self, stream_id: str, before: int, position: int) -> bool:
        """Erase the stream's events before `before`, then strike its marker; False if that stopped halfway
        (the forget is committed: the marker stays for the next `complete_erasures`)."""
        try:
            self._erase(stream_id, before)
            self.client.delete_item(TableName=self.table, Key=_key(ERASURES, position))
        except (ClientError, BotoCoreError):
            log.exception("erasing %s stopped halfway; the nightly run finishes it", stream_id)
            return False
        return True

    def _erase(self, stream_id: str, before: int) -> None:
        for version in range(1, before):
            old = self.client.update_item(
                TableName=self.table, Key=_key(stream_id, version),
                UpdateExpression="SET #d = :empty, erased = :yes REMOVE packed, parts",
                ExpressionAttributeNames={"#d": "data"},
                ExpressionAttributeValues={":empty": {"S": "{}"}, ":yes": {"BOOL": True}},
                ReturnValues="UPDATED_OLD",
            ).get("Attributes", {})
            for part in range(int(old.get("parts", {}).get("N", 0))):
                self.client.delete_item(TableName=self.table, Key=_key(_part_stream(stream_id, version), part))

    def read_stream(self, stream_id: str) -> list[Envelope]:
        items = self._query(
            TableName=self.table, ConsistentRead=True,
            KeyConditionExpression="stream_id = :s", ExpressionAttributeValues={":s": {"S": stream_id}},
        )
        return self._envelopes(items)

    def _envelopes(self, items: list[dict[str, Any]]) -> list[Envelope]:
        """The events of these items, with the data of those stored in parts read back."""
        wanted = [_key(_part_stream(i["stream_id"]["S"], int(i["version"]["N"])), part)
                  for i in items for part in range(int(i.get("parts", {}).get("N", 0)))]
        chunks: dict[tuple[str, int], bytes] = {}
        while wanted:
            batch, wanted = wanted[:100], wanted[100:]
            request: dict[str, Any] | None = {self.table: {"Keys": batch, "ConsistentRead": True}}
            while request:
                page = self.client.batch_get_item(RequestItems=request)
                for part in page.get("Responses", {}).get(self.table, []):
                    chunks[(part["stream_id"]["S"], int(part["version"]["N"]))] = part["chunk"]["B"]
                request = page.get("UnprocessedKeys") or None
        envelopes = []
        for item in items:
            if "parts" in item:
                stream = _part_stream(item["stream_id"]["S"], int(item["version"]["N"]))
                packed = b"".join(chunks[(stream, part)] for part in range(int(item["parts"]["N"])))
                item = {**item, "packed": {"B": packed}}
            envelopes.append(envelope_from_item(item))
        return envelopes

    def read_all(self, after: int = 0, limit: int = 1000) -> list[Envelope]:
        items = self._query(
            TableName=self.table, IndexName=LOG_INDEX, Limit=limit,
            KeyConditionExpression="log = :log AND #p > :after",
            ExpressionAttributeNames={"#p": "position"},
            ExpressionAttributeValues={":log": {"S": "all"}, ":after": {"N": str(after)}},
            max_items=limit,
        )
        return self._envelopes(items)

    def read_page(self, before: int, after: int = 0, limit: int = 1000,
                  match: EventMatch = EVERY) -> list[Envelope]:
        if limit <= 0 or before - after <= 1:
            return []
        # The key condition bounds the items read to the window; the filter only narrows what comes back.
        names = {"#p": "position"}
        values: dict[str, Any] = {":log": {"S": "all"}, ":lo": {"N": str(after + 1)}, ":hi": {"N": str(before - 1)}}
        where = []
        if match.types:
            names["#t"] = "type"
            values |= {f":t{i}": {"S": t} for i, t in enumerate(match.types)}
            where.append(f"#t IN ({', '.join(f':t{i}' for i in range(len(match.types)))})")
        for name, op, value in (("actor", "=", match.actor), ("at", ">=", match.since), ("at", "<=", match.until)):
            if value is not None:
                key = f":v{len(values)}"
                names[f"#{name}"] = name
                values[key] = {"S": value} if isinstance(value, str) else {"N": str(value)}
                where.append(f"#{name} {op} {key}")
        if match.streams or match.naming:
            values |= {f":s{i}": {"S": s} for i, s in enumerate(match.streams)}
            listed = ", ".join(f":s{i}" for i in range(len(match.streams)))
            streams = [f"stream_id IN ({listed})"] if match.streams else []
            if match.naming:
                values[":naming"] = {"S": match.naming}
                streams.append("contains(stream_id, :naming)")
            where.append(f"({' OR '.join(streams)})")
        filters = {"FilterExpression": " AND ".join(where)} if where else {}
        items = self._query(
            TableName=self.table, IndexName=LOG_INDEX, ScanIndexForward=False,
            KeyConditionExpression="log = :log AND #p BETWEEN :lo AND :hi",
            ExpressionAttributeNames=names, ExpressionAttributeValues=values, max_items=limit, **filters,
        )
        return self._envelopes(items)

    def cut(self, at: int) -> int:
        """Bisection over the gap-free positions, for the first event stored after `at` less the longest a request
        can take: events come in time order only within that allowance."""
        return self._bisect(at - CLOCK_SKEW_MS)

    def last_by(self, at: int) -> int:
        """Past the last event stored by `at` plus the longest a request can take, every event is later."""
        return self._bisect(at + CLOCK_SKEW_MS)

    def _bisect(self, bound: int) -> int:
        """The last position stored by `bound`, were the log in time order."""
        low, high = 0, self.head()  # every event up to `low` is early enough; `high` is an upper bound
        while low < high:
            middle = (low + high + 1) // 2
            if self._time_at(middle) <= bound:
                low = middle
            else:
                high = middle - 1
        return low

    def _time_at(self, position: int) -> int:
        items = self.client.query(
            TableName=self.table, IndexName=LOG_INDEX, KeyConditionExpression="log = :log AND #p = :p",
            ProjectionExpression="#at", ExpressionAttributeNames={"#p": "position", "#at": "at"},
            ExpressionAttributeValues={":log": {"S": "all"}, ":p": {"N": str(position)}},
        ).get("Items", [])
        return int(items[0]["at"]["N"]) if items else 0

    def begun_after(self, prefix: str, after: int, at: int) -> list[str]:
        return begun_after(self._touches(prefix, after), at)

    def touches(self, prefix: str, after: int, at: int) -> list[Touch]:
        return touched(self._touches(prefix, after), at)

    def _touches(self, prefix: str, after: int) -> list[Touch]:
        items = self._query(
            TableName=self.table, IndexName=LOG_INDEX,
            KeyConditionExpression="log = :log AND #p > :after", FilterExpression="begins_with(stream_id, :prefix)",
            ProjectionExpression="stream_id, version, #t, #at, #p",
            ExpressionAttributeNames={"#p": "position", "#at": "at", "#t": "type"},
            ExpressionAttributeValues={":log": {"S": "all"}, ":after": {"N": str(after)}, ":prefix": {"S": prefix}},
        )
        return [Touch(i["stream_id"]["S"], int(i["version"]["N"]), i["type"]["S"], int(i["at"]["N"]),
                      int(i["position"]["N"])) for i in items]

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


def _part_stream(stream_id: str, version: int) -> str:
    return f"{PART_PREFIX}{stream_id}#{version}"


def _item(event: Envelope) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The event's item, and the part items holding its data when it is too large for one item."""
    item = {
        **_key(event.stream_id, event.version),
        "log": {"S": "all"},
        "position": {"N": str(event.position)},
        "type": {"S": event.type},
        "schema_version": {"N": str(event.schema_version)},
        "actor": {"S": event.actor},
        "workspace": {"S": event.workspace},
        "request_id": {"S": event.request_id},
        "at": {"N": str(event.at)},
    }
    data = json.dumps(to_data(event.event), ensure_ascii=False)
    if len(data.encode()) <= ITEM_DATA_BYTES:
        return item | {"data": {"S": data}}, []
    packed = zlib.compress(data.encode(), 6)
    if len(packed) <= ITEM_DATA_BYTES:
        return item | {"packed": {"B": packed}}, []
    chunks = [packed[i : i + ITEM_DATA_BYTES] for i in range(0, len(packed), ITEM_DATA_BYTES)]
    stream = _part_stream(event.stream_id, event.version)
    return item | {"parts": {"N": str(len(chunks))}}, [
        _key(stream, part) | {"chunk": {"B": chunk}} for part, chunk in enumerate(chunks)]


def envelope_from_item(item: dict[str, Any]) -> Envelope:
    """An event as stored in the table, its data in parts already joined as `packed`."""
    if "packed" in item:
        data = json.loads(zlib.decompress(item["packed"]["B"]))
    else:
        data = json.loads(item["data"]["S"])
    return Envelope(
        stream_id=item["stream_id"]["S"],
        version=int(item["version"]["N"]),
        event=from_data(item["type"]["S"], data, erased=item.get("erased", {}).get("BOOL", False),
                        schema_version=int(item["schema_version"]["N"])),
        actor=item["actor"]["S"],
        workspace=item["workspace"]["S"],
        request_id=item["request_id"]["S"],
        at=int(item["at"]["N"]),
        position=int(item["position"]["N"]),
        schema_version=int(item["schema_version"]["N"]),
    )
