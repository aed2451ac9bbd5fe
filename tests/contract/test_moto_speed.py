"""The suite's faster moto queries (tests/support/moto_speed.py) answer exactly as moto's own: on the log's table
(a partition and its range, newest first, pages, filters, projections) and on its position index, and on a table
keyed by its partition alone."""

import random

import boto3
import pytest
from moto import mock_aws

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
            client.put_item(TableName="events", Item=item)
            client.put_item(TableName="keys", Item={"scope": {"S": f"scope-{rng.randrange(20)}"}, "n": {"N": str(n)}})
        yield client, rng


def test_the_faster_queries_answer_as_motos_own(tables):
    client, rng = tables
    asked = queries(rng)
    moto_speed.uninstall()
    try:
        motos = [every_page(client, query) for query in asked]
    finally:
        moto_speed.install()
    assert [every_page(client, query) for query in asked] == motos
    assert sum(page["Count"] for pages in motos for page in pages) > 500  # the queries found things
