"""The suite's faster moto (tests/support/moto_speed.py) answers exactly as moto's own. Its queries: on the log's
table (a partition and its range, newest first, pages, filters, projections), on its position index, and on a table
keyed by its partition alone. Its transactions: the items and stream records they leave, written or refused. Its
answers to item reads: each one the workloads below get is compared with what moto's serializer writes."""

import json
import random
from collections import Counter

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.responses import DynamoResult

from second_brain.adapters.event_store.dynamodb import LOG_INDEX, table_definition
from second_brain.adapters.event_store.keys import keys_table_definition
from tests.support import moto_speed


def queries(rng: random.Random) -> list[dict]:
    asked = []
    for _ in range(30):
        stream = f"memory-{rng.randrange(12)}"
        page = {"Limit": rng.choice([2, 5, 50])} if rng.random() < 0.5 else {}
        asked += [
            {"TableName": "events", "KeyConditionExpression": "stream_id = :s",
             "ExpressionAttributeValues": {":s": {"S": stream}}, "ScanIndexForward": rng.random() < 0.5, **page},
            {"TableName": "events", "KeyConditionExpression": "stream_id = :s AND #v > :v",
             "ExpressionAttributeNames": {"#v": "version"},
             "ExpressionAttributeValues": {":s": {"S": stream}, ":v": {"N": str(rng.randrange(8))}},
             "FilterExpression": "attribute_not_exists(erased)", "ProjectionExpression": "stream_id, version, #v",
             **page},
            {"TableName": "events", "IndexName": LOG_INDEX,
             "KeyConditionExpression": "#l = :l AND #p BETWEEN :a AND :b",
             "ExpressionAttributeNames": {"#l": "log", "#p": "position"},
             "ExpressionAttributeValues": {":l": {"S": f"all#{rng.randrange(3):02d}"},
                                           ":a": {"N": str(rng.randrange(500))},
                                           ":b": {"N": str(rng.randrange(500, 1000))}},
             "ScanIndexForward": rng.random() < 0.5, **page},
            {"TableName": "keys", "KeyConditionExpression": "#s = :s", "ExpressionAttributeNames": {"#s": "scope"},
             "ExpressionAttributeValues": {":s": {"S": f"scope-{rng.randrange(20)}"}}},
        ]
    return asked


def every_page(client, query: dict) -> list[dict]:
    pages, start = [], {}
    while True:
        answer = client.query(**query, **start)
        pages.append({k: answer.get(k) for k in ("Items", "Count", "ScannedCount", "LastEvaluatedKey")})
        if "LastEvaluatedKey" not in answer or len(pages) > 200:
            return pages
        start = {"ExclusiveStartKey": answer["LastEvaluatedKey"]}


def compare_answers(monkeypatch) -> Counter[str]:
    """From now on every item read's answer is written both ways and compared; the operations compared, counted."""
    counted: Counter[str] = Counter()

    def both(self, context):
        fast = moto_speed.answer(self, context)
        if context.operation_model.name in moto_speed.ITEM_READS:
            status, headers, body = moto_speed._original_answer(self, context)
            assert (fast[0], fast[1], json.loads(fast[2])) == (status, headers, json.loads(body))
            counted[context.operation_model.name] += 1
        return fast
    monkeypatch.setattr(DynamoResult, "execute_result", both)
    return counted


@pytest.fixture
def tables():
    rng = random.Random(5)
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**table_definition("events"))
        client.create_table(**keys_table_definition("keys"))
        for n in range(250):
            item = {"stream_id": {"S": f"memory-{rng.randrange(12)}"}, "version": {"N": str(rng.randrange(40))},
                    "data": {"S": "x" * rng.randrange(50)}}
            if rng.random() < 0.8:  # in the index: a partition and a position
                item |= {"log": {"S": f"all#{rng.randrange(3):02d}"}, "position": {"N": str(rng.randrange(1000))}}
            if rng.random() < 0.2:
                item["erased"] = {"BOOL": True}
            if rng.random() < 0.5:  # sealed, as the keyring writes them: binary, and sets of each kind
                item |= {"sealed": {"B": rng.randbytes(rng.randrange(1, 40))}, "tags": {"SS": ["a", f"t{n}"]},
                         "sizes": {"NS": ["1", str(n)]}, "parts": {"BS": [b"\x00", rng.randbytes(3)]},
                         "nested": {"M": {"l": {"L": [{"NULL": True}, {"B": b"\xff"}]}}}}
            client.put_item(TableName="events", Item=item)
            client.put_item(TableName="keys", Item={"scope": {"S": f"scope-{rng.randrange(20)}"}, "n": {"N": str(n)}})
        yield client, rng


def reads(client, rng: random.Random) -> list[dict]:
    """Gets, batch gets and transactional gets of items there and not, and a scan in pages."""
    def key() -> dict:
        return {"stream_id": {"S": f"memory-{rng.randrange(14)}"}, "version": {"N": str(rng.randrange(40))}}
    answers = [client.get_item(TableName="events", Key=key()) for _ in range(40)]
    answers += [client.get_item(TableName="events", Key=key(), ProjectionExpression="absent_field") for _ in range(40)]
    answers += [client.batch_get_item(RequestItems={"events": {"Keys": list({repr(k): k for k in (
        key() for _ in range(10))}.values())}}) for _ in range(10)]
    answers += [client.transact_get_items(TransactItems=[{"Get": {"TableName": "events", "Key": key()}}])
                for _ in range(10)]
    answers.append(client.scan(TableName="events", Limit=7))
    return [{k: v for k, v in answer.items() if k != "ResponseMetadata"} for answer in answers]


def test_the_faster_queries_answer_as_motos_own(tables, monkeypatch):
    client, rng = tables
    asked = queries(rng)
    moto_speed.uninstall()
    try:
        motos = [every_page(client, query) for query in asked]
        motos_reads = reads(client, random.Random(3))
    finally:
        moto_speed.install()
    compared = compare_answers(monkeypatch)
    assert [every_page(client, query) for query in asked] == motos
    assert reads(client, random.Random(3)) == motos_reads
    assert sum(page["Count"] for pages in motos for page in pages) > 500  # the queries found things
    assert sum("Item" in answer for answer in motos_reads) > 5  # and the gets
    assert set(compared) == moto_speed.ITEM_READS


def transactions(rng: random.Random) -> list[list[dict]]:
    """Transactions on the log's table and on a table keyed by its partition alone: Puts of new and existing items,
    Updates (in place, in moto) and Deletes, about a third of them refused by a condition on their last item, after
    the others have been applied (moto must then put everything back)."""
    def key() -> dict:
        return {"stream_id": {"S": f"memory-{rng.randrange(6)}"}, "version": {"N": str(rng.randrange(6))}}

    def operation() -> dict:
        kind = rng.choice(["Put", "Put", "Update", "Delete", "ConditionCheck"])
        if rng.random() < 0.3:
            return {"Update": {"TableName": "keys", "Key": {"scope": {"S": f"scope-{rng.randrange(4)}"}},
                               "UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}}
        if kind == "Put":
            return {"Put": {"TableName": "events", "Item": key() | {"data": {"S": f"put {rng.random()}"}}}}
        if kind == "Update":
            return {"Update": {"TableName": "events", "Key": key(), "UpdateExpression": "SET #d = :d ADD n :one",
                               "ExpressionAttributeNames": {"#d": "data"},
                               "ExpressionAttributeValues": {":d": {"S": f"update {rng.random()}"},
                                                             ":one": {"N": "1"}}}}
        if kind == "Delete":
            return {"Delete": {"TableName": "events", "Key": key()}}
        return {"ConditionCheck": {"TableName": "events", "Key": key(),
                                   "ConditionExpression": "attribute_exists(stream_id)"}}

    def target(op: dict) -> tuple[str, str]:
        item = next(iter(op.values()))
        keys = item.get("Key") or {k: item["Item"][k] for k in ("stream_id", "version")}
        return item["TableName"], repr(sorted(keys.items()))

    asked = []
    for _ in range(60):
        ops: dict[tuple[str, str], dict] = {}
        for op in [operation() for _ in range(rng.randrange(1, 5))]:
            ops.setdefault(target(op), op)  # one operation an item, as DynamoDB requires
        if rng.random() < 0.35:  # refused at the end: an item that must not exist but does, or must but does not
            refusal = {"ConditionCheck": {"TableName": "events", "Key": {"stream_id": {"S": "settled"},
                                                                          "version": {"N": "0"}},
                                          "ConditionExpression": rng.choice(["attribute_not_exists(stream_id)",
                                                                             "attribute_exists(absent_field)"])}}
            ops[target(refusal)] = refusal
        asked.append(list(ops.values()))
    return asked


def run(transacted: list[list[dict]]) -> tuple[list, list, list]:
    """Each transaction's outcome, then every item of both tables and every stream record, as moto answers them."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**table_definition("events"))
        client.create_table(**keys_table_definition("keys") | {
            "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}})
        client.put_item(TableName="events", Item={"stream_id": {"S": "settled"}, "version": {"N": "0"}})
        outcomes = []
        for ops in transacted:
            try:
                client.transact_write_items(TransactItems=ops)
                outcomes.append("written")
            except client.exceptions.TransactionCanceledException as refused:
                outcomes.append([reason["Code"] for reason in refused.response["CancellationReasons"]])
        items = [sorted(client.scan(TableName=name)["Items"], key=repr) for name in ("events", "keys")]
        streams = boto3.client("dynamodbstreams", region_name="us-east-1")
        records = []
        for name in ("events", "keys"):
            arn = client.describe_table(TableName=name)["Table"]["LatestStreamArn"]
            shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
            iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                                  ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            records.append([{k: r["dynamodb"].get(k) for k in ("Keys", "NewImage", "OldImage", "SequenceNumber")}
                            | {"eventName": r["eventName"]}
                            for r in streams.get_records(ShardIterator=iterator, Limit=1000)["Records"]])
        return outcomes, items, records


def test_the_cheaper_transactions_write_and_put_back_as_motos_own():
    asked = transactions(random.Random(11))
    moto_speed.uninstall()
    try:
        motos = run(asked)
    finally:
        moto_speed.install()
    assert run(asked) == motos
    outcomes, items, records = motos
    assert outcomes.count("written") > 20 and len(outcomes) - outcomes.count("written") > 10  # both kinds ran
    assert any(r["eventName"] == "MODIFY" for r in records[0]) and len(records[1]) > 10  # updates in both tables
