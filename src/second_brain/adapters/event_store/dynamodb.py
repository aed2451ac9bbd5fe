"""DynamoDB event store: PK stream_id, SK version; one conditional TransactWriteItems per append; no item or
partition that every write shares.

A stream's version is the only order a write needs: the transaction checks the stream is exactly at the version
the batch expects, so two writers to one memory cannot both land, and writers to different memories share no item.
The global position is a time-ordered number the writer picks, `ms * SLOTS_PER_MS + slot`: the milliseconds of the
append (never earlier than the events' own time) and a slot in a block of BLOCK claimed for that millisecond by a
`$slot#` item in the same transaction (unique; it expires after a day, by when no writer picks that millisecond),
so positions are unique and grow with time but are not gap-free. A stream's next event always lies above its
previous one: the transaction checks that too, and a writer whose clock is behind moves to later milliseconds.

The `by_position` index is spread over partitions (`log = "all#NN"`, chosen at random per event; LOG_SHARDS for a
new log, the count written in its `$log` item at its first use, which every process then reads), and "the events
after X" is a merge of one query per partition, read side by side: the index takes that many times the writes one
partition could. An append in flight may land below a position a reader has already passed, so a
reader that keeps a cursor stops at `settled()`, SETTLE_MS behind the clock (the time an append and the index's
propagation take, with room to spare).

An item holds at most 400 KB, and a note may be 200,000 characters (600 KB of UTF-8 in CJK): an event's data
past ITEM_DATA_BYTES is stored compressed, and past that again in parts, items of their own written in the same
transaction (keys `$part#<stream>#<version>`, outside the log index) and read back with the event.
"""

import heapq
import json
import logging
import random
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from itertools import islice
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ... import __version__
from ...domain.errors import ConcurrencyConflict, NewerFormat, StoreUnavailable
from ...domain.events import Envelope, erased_by, from_data, is_tombstone, memory_of, to_data
from ...ports.event_store import EVERY, EventMatch, Scanned, Touch
from .checks import begun_after, expected_versions, touched
from .keys import KmsKeyring

PART_PREFIX = "$part#"
SLOT_PREFIX = "$slot#"
# One partition listing the forgets whose erasure has not completed: a marker is written in the tombstone's
# transaction and deleted once every earlier event of the stream is erased, so a failure halfway is finished
# by `complete_erasures` (the nightly job) instead of leaving the text behind for good.
ERASURES = "$erase#pending"
LOG_INDEX = "by_position"
LOG_SHARDS = 16  # partitions of a new log's index: 16,000 write units a second where one gives 1,000
LOG_ITEM = "$log"  # the log's own settings: how many partitions its index is spread over, whether it seals, its format
# The layout of the log's items (and of the keys table beside it), kept in the `$log` item: a build refuses a log of
# a newer layout rather than misread it. Logs written before the number was kept have none, and layout 1. Raise it
# when a change would be misread by the builds before it (an attribute they would ignore needs no new number).
FORMAT = 1
SLOTS_PER_MS = 2048  # positions per millisecond: below 2**53 (a JSON number every client reads exactly) to 2109
BLOCK = 64  # positions one claim covers: an append of up to 64 events claims one block, of up to 99 two
BLOCKS_PER_MS = SLOTS_PER_MS // BLOCK
SLOT_LIFETIME_S = 86_400
# How far behind the clock `settled()` stays: longer than an append can take from picking its position to
# committing (3 attempts of 3 s to connect and 10 s to read, aws/composition.py's client) and the index's lag.
SETTLE_MS = 60_000
MAX_ATTEMPTS = 12
ITEM_DATA_BYTES = 300_000  # of an item's 400 KB: the key, the envelope and the attribute names fit in the rest
TRANSACTION_ITEMS = 100
# How much later than a neighbour an event may be stored than the time it carries: its time is read in the request
# that appends it, and no function runs longer than Lambda's 15 minutes.
CLOCK_SKEW_MS = 15 * 60_000

log = logging.getLogger("second_brain.dynamodb")


class DynamoDBEventStore:
    def __init__(self, client: Any, table_name: str, clock: Callable[[], int] | None = None,
                 settle_ms: int | None = None, keyring: KmsKeyring | None = None, partitions: int = LOG_SHARDS
                 ) -> None:
        """`clock`: Unix ms, the application's (positions follow the time events carry); `settle_ms`: SETTLE_MS
        unless given (0 where one process writes and reads, as in tests that read what they just wrote); `keyring`:
        each memory's events sealed with a key of its own, destroyed by its forget (keys.py); `partitions`: of a
        new log's index (an existing log keeps its own)."""
        self.client = client
        self.keyring = keyring
        self.table = table_name
        self.clock = clock or (lambda: time.time_ns() // 1_000_000)
        self.settle_ms = SETTLE_MS if settle_ms is None else settle_ms
        self.retries = 0  # attempts that had to be made again (a claimed slot, a clock behind, a busy item)
        self._last = 0  # the last position this process gave
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._new_partitions = partitions
        self._partitions: tuple[str, ...] = ()
        self._sealed = False

    @property
    def partitions(self) -> tuple[str, ...]:
        """The log index's partition keys, as the log's `$log` item says (written by the first process to use the
        log: a count no process may change, or events would lie where readers do not look)."""
        if not self._partitions:
            item = self.client.get_item(TableName=self.table, Key=_key(LOG_ITEM, 0), ConsistentRead=True).get("Item")
            if item is None:
                item = {**_key(LOG_ITEM, 0), "partitions": {"N": str(self._new_partitions)},
                        "sealed": {"BOOL": self.keyring is not None}, "format": {"N": str(FORMAT)}}
                try:
                    self.client.put_item(TableName=self.table, ConditionExpression="attribute_not_exists(stream_id)",
                                         Item=item)
                except ClientError as exc:
                    if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                        raise StoreUnavailable(f"DynamoDB read failed: {exc}") from exc
                    return self.partitions  # another process laid the log out first
            found = int(item.get("format", {}).get("N", "1"))
            if found > FORMAT:
                raise NewerFormat(f"the DynamoDB log {self.table} was written by a newer version of Second Brain (log "
                                  f"format {found}); this version ({__version__}) reads log formats up to {FORMAT}: "
                                  f"deploy a newer version to read it (nothing was written to it)")
            self._sealed = item.get("sealed", {}).get("BOOL", False)
            self._partitions = tuple(f"all#{n:02d}" for n in range(int(item["partitions"]["N"])))
        return self._partitions

    @property
    def sealed(self) -> bool:
        """Whether the log seals its memories' events (set by the first process to use it, as its layout): a
        process without the keyring may not write to it, or a forget could not shred what it wrote."""
        return bool(self.partitions) and self._sealed

    def append(self, events: Sequence[Envelope]) -> list[Envelope]:
        if not events:
            return []
        expected = expected_versions(events)
        if self.keyring is None and self.sealed:
            raise StoreUnavailable("this log seals its memories' events: set BRAIN_KEYS_TABLE and BRAIN_DATA_KEY_ID")
        # Everything that takes round trips (sealing with the memories' keys, the log's layout) is done before a
        # position is picked: from picking to committing is one transaction, well inside SETTLE_MS.
        made = [_item(e, self.partitions, self.keyring) for e in events]
        floor_ms = 0
        blocks = -(-len(events) // BLOCK)
        for attempt in range(MAX_ATTEMPTS):
            with self._lock:  # above every position this process gave: its appends read in the order they made
                last_ms, last_slot = divmod(self._last, SLOTS_PER_MS)
                ms = max(self.clock(), max(e.at for e in events), floor_ms, last_ms)
                lowest = last_slot // BLOCK + 1 if ms == last_ms else 0  # the block after this process's last
                if lowest + blocks > BLOCKS_PER_MS:  # no room left in that millisecond
                    ms, lowest = ms + 1, 0
                first = random.randrange(lowest, BLOCKS_PER_MS - blocks + 1)
                base = ms * SLOTS_PER_MS + first * BLOCK
                self._last = base + len(events) - 1
            stored = [replace(e, position=base + i) for i, e in enumerate(events)]
            claims = [ms * BLOCKS_PER_MS + first + b for b in range(blocks)]
            items, kinds = self._items(stored, made, expected, claims)
            if len(items) > TRANSACTION_ITEMS:
                raise ValueError("a batch is limited to what one DynamoDB transaction holds")
            try:
                self.client.transact_write_items(TransactItems=items)
            except ClientError as exc:
                if exc.response["Error"]["Code"] != "TransactionCanceledException":
                    raise StoreUnavailable(f"DynamoDB append failed: {exc}") from exc
                reasons = [r.get("Code", "None") for r in exc.response.get("CancellationReasons", [])]
                failed = {kind for kind, code in zip(kinds, reasons, strict=False) if code == "ConditionalCheckFailed"}
                if any(kind[0] == "put" for kind in failed):
                    raise ConcurrencyConflict("a stream moved on before this append") from exc
                for _, stream_id, version in (k for k in failed if k[0] == "check"):
                    previous = self._position_of(stream_id, version)
                    if previous is None:
                        raise ConcurrencyConflict(f"stream {stream_id} is not at version {version}") from exc
                    floor_ms = max(floor_ms, previous // SLOTS_PER_MS + 1)  # a clock behind the last writer's
                self.retries += 1
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))  # a slot taken, or an item busy: again
                continue
            for event in stored:
                if erased := erased_by(event.event, event.version):
                    self._finish_erasure(event.stream_id, erased, event.position, is_tombstone(event.event))
            return stored
        raise StoreUnavailable("the event log is too busy: the append kept meeting other writers")

    def _items(self, stored: list[Envelope], made: list[tuple[dict[str, Any], list[dict[str, Any]]]],
               expected: dict[str, int], claims: list[int]) -> tuple[list[dict[str, Any]], list[tuple[str, str, int]]]:
        """The transaction's items, and what each is: ("check" | "put" | "part" | "claim", stream, version)."""
        items: list[dict[str, Any]] = []
        kinds: list[tuple[str, str, int]] = []
        first: dict[str, int] = {}
        for event in stored:
            first.setdefault(event.stream_id, event.position)
        for stream_id, version in expected.items():
            if version > 0:  # the stream must be exactly at `version`, its last event below this append's
                items.append({"ConditionCheck": {
                    "TableName": self.table, "Key": _key(stream_id, version),
                    "ConditionExpression": "attribute_exists(stream_id) AND #p < :mine",
                    "ExpressionAttributeNames": {"#p": "position"},
                    "ExpressionAttributeValues": {":mine": {"N": str(first[stream_id])}},
                }})
                kinds.append(("check", stream_id, version))
        for event, (sealed, parts) in zip(stored, made, strict=True):
            item = {**sealed, "position": {"N": str(event.position)}}
            items.append({"Put": {
                "TableName": self.table, "Item": item, "ConditionExpression": "attribute_not_exists(stream_id)",
            }})
            kinds.append(("put", event.stream_id, event.version))
            items.extend({"Put": {"TableName": self.table, "Item": part}} for part in parts)
            kinds.extend(("part", event.stream_id, event.version) for _ in parts)
            if erased := erased_by(event.event, event.version):
                # A tombstone erases every earlier version (and its memory's key); another erasure, those it names.
                which = ({"before": {"N": str(event.version)}} if is_tombstone(event.event)
                         else {"versions": {"NS": [str(v) for v in erased]}})
                items.append({"Put": {"TableName": self.table, "Item": {
                    **_key(ERASURES, event.position), "target": {"S": event.stream_id}, **which}}})
                kinds.append(("part", event.stream_id, event.version))
        expires = str(int(time.time()) + SLOT_LIFETIME_S)
        for claim in claims:
            items.append({"Put": {
                "TableName": self.table, "Item": {**_key(f"{SLOT_PREFIX}{claim}", 0), "expires": {"N": expires}},
                "ConditionExpression": "attribute_not_exists(stream_id)",
            }})
            kinds.append(("claim", "", claim))
        return items, kinds

    def _position_of(self, stream_id: str, version: int) -> int | None:
        item = self.client.get_item(TableName=self.table, Key=_key(stream_id, version), ConsistentRead=True,
                                    ProjectionExpression="#p", ExpressionAttributeNames={"#p": "position"}
                                    ).get("Item")
        return int(item["position"]["N"]) if item else None

    def complete_erasures(self) -> int:
        """Finish every erasure a failure left halfway; how many were finished."""
        return sum(self._finish_erasure(m["target"]["S"], versions, int(m["version"]["N"]), shred)
                   for m in self._erasure_markers() for versions, shred in [_erasure(m)])

    def pending_erasures(self) -> int:
        """Forgets whose erasure is still unfinished (their markers): after a nightly run, the backlog it left."""
        return len(self._erasure_markers())

    def _erasure_markers(self) -> list[dict[str, Any]]:
        return self._query(TableName=self.table, ConsistentRead=True, KeyConditionExpression="stream_id = :s",
                           ExpressionAttributeValues={":s": {"S": ERASURES}})

    def _finish_erasure(self, stream_id: str, versions: Sequence[int], position: int, shred: bool) -> bool:
        """For a tombstone (`shred`), destroy the memory's key (every copy of its events is then sealed for good);
        erase the stream's events at `versions`, then strike the marker; False if that stopped halfway (the
        erasure is committed: the marker stays for the next `complete_erasures`)."""
        try:
            if shred and self.keyring is not None and (scope := memory_of(stream_id)) is not None:
                self.keyring.destroy(scope)
            self._erase(stream_id, versions)
            self.client.delete_item(TableName=self.table, Key=_key(ERASURES, position))
        except (ClientError, BotoCoreError, StoreUnavailable):
            log.exception("erasing %s stopped halfway; the nightly run finishes it", stream_id)
            return False
        return True

    def _erase(self, stream_id: str, versions: Sequence[int]) -> None:
        for version in versions:
            old = self.client.update_item(
                TableName=self.table, Key=_key(stream_id, version),
                UpdateExpression="SET #d = :empty, erased = :yes REMOVE packed, parts, sealed_by",
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

    def read_streams(self, stream_ids: Sequence[str],
                     after: Mapping[str, int] | None = None) -> dict[str, list[Envelope]]:
        """One consistent batch read of each stream's next version tells which streams have any (a new edge, a
        stream not moved since: none); only those are queried."""
        after = after or {}
        found: dict[str, list[Envelope]] = {stream_id: [] for stream_id in stream_ids}
        nexts = [_key(stream_id, after.get(stream_id, 0) + 1) for stream_id in found]
        moved = [item["stream_id"]["S"] for item in self._batch_get(nexts, ProjectionExpression="stream_id")]
        for stream_id in moved:
            since = {":s": {"S": stream_id}, ":v": {"N": str(after.get(stream_id, 0))}}
            found[stream_id] = self._envelopes(self._query(
                TableName=self.table, ConsistentRead=True, KeyConditionExpression="stream_id = :s AND #v > :v",
                ExpressionAttributeNames={"#v": "version"}, ExpressionAttributeValues=since))
        return found

    def _batch_get(self, keys: list[dict[str, Any]], **read: Any) -> Iterator[dict[str, Any]]:
        """The items of these keys that exist, read consistently 100 keys a request, the keys DynamoDB left
        unprocessed asked again."""
        for start in range(0, len(keys), 100):
            request: dict[str, Any] | None = {self.table: {"Keys": keys[start:start + 100], "ConsistentRead": True,
                                                           **read}}
            while request:
                page = self.client.batch_get_item(RequestItems=request)
                yield from page.get("Responses", {}).get(self.table, [])
                request = page.get("UnprocessedKeys") or None

    def _envelopes(self, items: list[dict[str, Any]]) -> list[Envelope]:
        """The events of these items, with the data of those stored in parts read back."""
        if items and not self._partitions:
            _ = self.partitions  # the log's layout, read once: a newer one is refused before any item is decoded
        wanted = [_key(_part_stream(i["stream_id"]["S"], int(i["version"]["N"])), part)
                  for i in items for part in range(int(i.get("parts", {}).get("N", 0)))]
        chunks = {(part["stream_id"]["S"], int(part["version"]["N"])): part["chunk"]["B"]
                  for part in self._batch_get(wanted)}
        envelopes = []
        for item in items:
            if "parts" in item:
                stream = _part_stream(item["stream_id"]["S"], int(item["version"]["N"]))
                packed = b"".join(chunks[(stream, part)] for part in range(int(item["parts"]["N"])))
                item = {**item, "packed": {"B": packed}}
            envelopes.append(envelope_from_item(item, self.keyring))
        return envelopes

    def read_all(self, after: int = 0, limit: int = 1000) -> list[Envelope]:
        if limit <= 0:
            return []
        items = self._merged(limit, False, KeyConditionExpression="log = :log AND #p > :after",
                             ExpressionAttributeNames={"#p": "position"},
                             ExpressionAttributeValues={":after": {"N": str(after)}})
        return self._envelopes(list(islice(items, limit)))

    def read_page(self, before: int, after: int = 0, limit: int = 1000,
                  match: EventMatch = EVERY) -> list[Envelope]:
        if limit <= 0 or before - after <= 1:
            return []
        items = self._merged(limit, True, **_window(before, after, match))
        return self._envelopes(list(islice(items, limit)))

    def scan_back(self, before: int, after: int, budget: int, match: EventMatch = EVERY) -> Scanned:
        """One query per partition, side by side, each reading its share of `budget`: the stretch is complete
        down to the highest place a partition stopped at."""
        if budget <= 0 or before - after <= 1:
            return Scanned([], before, 0)
        share = max(1, -(-budget // len(self.partitions)))
        pages = self._each_partition(lambda log: self.client.query(
            **_window(before, after, match, log), TableName=self.table, IndexName=LOG_INDEX, ScanIndexForward=False,
            Limit=share))
        stops = [int(page["LastEvaluatedKey"]["position"]["N"]) for page in pages if "LastEvaluatedKey" in page]
        reached = max(stops, default=after + 1)
        found = heapq.merge(*(page.get("Items", []) for page in pages), key=_position, reverse=True)
        return Scanned(self._envelopes([i for i in found if _position(i) >= reached]), reached,
                       sum(page.get("ScannedCount", 0) for page in pages))

    def cut(self, at: int) -> int:
        """Every position up to the last of `at`'s millisecond was given no earlier than the time its events
        carry (an append's milliseconds are never below its events'), so their events were stored by `at`."""
        return max(0, (at + 1) * SLOTS_PER_MS - 1)

    def last_by(self, at: int) -> int:
        """An event's position is given at most the longest a request can take after the time it carries."""
        return max(0, (at + CLOCK_SKEW_MS + 1) * SLOTS_PER_MS - 1)

    def settled(self) -> int:
        """The last position of the millisecond `settle_ms` ago."""
        return max(0, (self.clock() - self.settle_ms + 1) * SLOTS_PER_MS - 1)

    def begun_after(self, prefix: str, after: int, at: int) -> list[str]:
        return begun_after(self._touches(prefix, after), at)

    def touches(self, prefix: str, after: int, at: int) -> list[Touch]:
        return touched(self._touches(prefix, after), at)

    def _touches(self, prefix: str, after: int) -> list[Touch]:
        items = self._merged(1000, False,
                             KeyConditionExpression="log = :log AND #p > :after",
                             FilterExpression="begins_with(stream_id, :prefix)",
                             ProjectionExpression="stream_id, version, #t, #at, #p",
                             ExpressionAttributeNames={"#p": "position", "#at": "at", "#t": "type"},
                             ExpressionAttributeValues={":after": {"N": str(after)}, ":prefix": {"S": prefix}})
        return [Touch(i["stream_id"]["S"], int(i["version"]["N"]), i["type"]["S"], int(i["at"]["N"]),
                      int(i["position"]["N"])) for i in items]

    def head(self) -> int:
        pages = self._each_partition(lambda log: self.client.query(
            TableName=self.table, IndexName=LOG_INDEX, ScanIndexForward=False, Limit=1,
            KeyConditionExpression="log = :log", ExpressionAttributeValues={":log": {"S": log}},
            ProjectionExpression="#p", ExpressionAttributeNames={"#p": "position"}))
        return max((_position(i) for page in pages for i in page.get("Items", [])), default=0)

    def _each_partition(self, read: Callable[[str], dict[str, Any]]) -> list[dict[str, Any]]:
        """`read(log)` for every partition of the log index, side by side (threads kept for the process: a
        Lambda container serves request after request)."""
        if self._pool is None:
            with self._lock:
                self._pool = self._pool or ThreadPoolExecutor(len(self.partitions),
                                                              thread_name_prefix="log-partition")
        return list(self._pool.map(read, self.partitions))

    def _merged(self, limit: int, newest_first: bool, **query: Any) -> Iterator[dict[str, Any]]:
        """The items of every partition the query finds, merged in position order: each partition's first page
        read side by side, a share of `limit` each, and the next page of one only when the merge needs it."""
        share = max(10, -(-limit // len(self.partitions)) * 2)

        def read(log: str) -> dict[str, Any]:
            values = {**query.get("ExpressionAttributeValues", {}), ":log": {"S": log}}
            return {**query, "TableName": self.table, "IndexName": LOG_INDEX, "ScanIndexForward": not newest_first,
                    "Limit": share, "ExpressionAttributeValues": values}

        firsts = self._each_partition(lambda log: self.client.query(**read(log)))
        return heapq.merge(*(paged(self.client.query, first, **read(log)) for log, first in zip(self.partitions, firsts,
                                                                                            strict=True)),
                           key=_position, reverse=newest_first)

    def _query(self, **kwargs: Any) -> list[dict[str, Any]]:
        return list(paged(self.client.query, self.client.query(**kwargs), **kwargs))


def paged(query: Callable[..., dict[str, Any]], page: dict[str, Any], **request: Any) -> Iterator[dict[str, Any]]:
    """The items of a request's first `page` and of every page after it (asked of `query`), each page read only
    when the items before it have been taken."""
    while True:
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        page = query(**request, ExclusiveStartKey=page["LastEvaluatedKey"])


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


def _position(item: dict[str, Any]) -> int:
    return int(item["position"]["N"])


def _window(before: int, after: int, match: EventMatch, log: str = "") -> dict[str, Any]:
    """A query of the log index for the events strictly between the positions that `match` admits (the key
    condition bounds what is read to the window; the filter only narrows what comes back)."""
    names = {"#p": "position"}
    values: dict[str, Any] = {":lo": {"N": str(after + 1)}, ":hi": {"N": str(before - 1)}}
    if log:
        values[":log"] = {"S": log}
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
    return {"KeyConditionExpression": "log = :log AND #p BETWEEN :lo AND :hi",
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": values, **filters}


def _key(stream_id: str, version: int) -> dict[str, Any]:
    return {"stream_id": {"S": stream_id}, "version": {"N": str(version)}}


def _part_stream(stream_id: str, version: int) -> str:
    return f"{PART_PREFIX}{stream_id}#{version}"


def _item(event: Envelope, partitions: Sequence[str], keyring: KmsKeyring | None = None
          ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The event's item, and the part items holding its data when it is too large for one item. With a keyring, a
    memory's event data is compressed and sealed with the memory's key (`sealed_by` names it)."""
    item = {
        **_key(event.stream_id, event.version),
        "log": {"S": random.choice(partitions)},
        "position": {"N": str(event.position)},
        "type": {"S": event.type},
        "schema_version": {"N": str(event.schema_version)},
        "actor": {"S": event.actor},
        "workspace": {"S": event.workspace},
        "request_id": {"S": event.request_id},
        "at": {"N": str(event.at)},
    }
    data = json.dumps(to_data(event.event), ensure_ascii=False)
    # A tombstone carries nothing to hide, and must read as itself once the key it destroys is gone.
    scope = memory_of(event.stream_id) if keyring is not None and not is_tombstone(event.event) else None
    if keyring is not None and scope is not None:
        packed = keyring.seal(scope, zlib.compress(data.encode(), 6), _bound(event.stream_id, event.version))
        item["sealed_by"] = {"S": scope}
    elif len(data.encode()) <= ITEM_DATA_BYTES:
        return item | {"data": {"S": data}}, []
    else:
        packed = zlib.compress(data.encode(), 6)
    if len(packed) <= ITEM_DATA_BYTES:
        return item | {"packed": {"B": packed}}, []
    chunks = [packed[i : i + ITEM_DATA_BYTES] for i in range(0, len(packed), ITEM_DATA_BYTES)]
    stream = _part_stream(event.stream_id, event.version)
    return item | {"parts": {"N": str(len(chunks))}}, [
        _key(stream, part) | {"chunk": {"B": chunk}} for part, chunk in enumerate(chunks)]


def _erasure(marker: dict[str, Any]) -> tuple[Sequence[int], bool]:
    """The versions a pending erasure's marker names, and whether it is a tombstone's (which shreds the key)."""
    if "versions" in marker:
        return sorted(int(v) for v in marker["versions"]["NS"]), False
    return range(1, int(marker["before"]["N"])), True


def _bound(stream_id: str, version: int) -> str:
    return f"{stream_id}#{version}"


def envelope_from_item(item: dict[str, Any], keyring: KmsKeyring | None = None) -> Envelope:
    """An event as stored in the table, its data in parts already joined as `packed`. A sealed event whose key was
    destroyed (its memory forgotten: a copy from before the forget) reads as erased."""
    erased = item.get("erased", {}).get("BOOL", False)
    stream_id, version = item["stream_id"]["S"], int(item["version"]["N"])
    if "sealed_by" in item and not erased:
        if keyring is None:
            raise StoreUnavailable("this log's events are sealed: the store needs the keyring to read them")
        opened = keyring.open(item["sealed_by"]["S"], item["packed"]["B"], _bound(stream_id, version))
        data, erased = (json.loads(zlib.decompress(opened)), False) if opened is not None else ({}, True)
    elif "packed" in item:
        data = json.loads(zlib.decompress(item["packed"]["B"]))
    else:
        data = json.loads(item["data"]["S"])
    return Envelope(
        stream_id=stream_id,
        version=version,
        event=from_data(item["type"]["S"], data, erased=erased, schema_version=int(item["schema_version"]["N"])),
        actor=item["actor"]["S"],
        workspace=item["workspace"]["S"],
        request_id=item["request_id"]["S"],
        at=int(item["at"]["N"]),
        position=int(item["position"]["N"]),
        schema_version=int(item["schema_version"]["N"]),
    )
