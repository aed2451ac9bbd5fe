"""Every Lambda path of the AWS deployment, offline: DynamoDB (with Streams) and Secrets Manager through
moto, OpenSearch as the real test node, the handlers in functions/ fed the sample events in events/."""

import asyncio
import base64
import copy
import importlib.util
import json
import random
import threading
import uuid
from importlib.resources import files
from pathlib import Path
from types import SimpleNamespace

import boto3
import pytest
import requests
from botocore.exceptions import ClientError
from moto import mock_aws
from opensearchpy import OpenSearch

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.aws import composition
from second_brain.domain.text import MAX_CONTENT_CHARS
from tests.support.cloudformation import load_template

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
TOKEN = "lambda-owner-token"
CONTEXT = SimpleNamespace(function_name="test", function_version="$LATEST", memory_limit_in_mb=512,
                          get_remaining_time_in_millis=lambda: 120_000,
                          invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:test",
                          aws_request_id="req-1", log_group_name="/aws/lambda/test", log_stream_name="s")


def load(name: str):
    """A fresh copy of functions/<name>/app.py (its cached brain goes with it)."""
    spec = importlib.util.spec_from_file_location(f"fn_{name}_{uuid.uuid4().hex}", ROOT / "functions" / name / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Streams:
    """The events table's stream, read as Lambda's event source mapping would, batch by batch.

    moto implements the stream itself (records appended on every write, transactions included), but its
    dynamodbstreams API answers "Not yet implemented" with this botocore, so the records are read from
    moto's table model; they are the same StreamRecord objects get_records would serve.
    """

    def __init__(self, table: str) -> None:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        self.table = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].get_table(table)
        self.arn = boto3.client("dynamodb").describe_table(TableName=table)["Table"]["LatestStreamArn"]
        self.seen = 0

    def batch(self) -> dict:
        records = self.table.stream_shard.items[self.seen :]
        self.seen += len(records)
        return {"Records": [{**json.loads(json.dumps(r.to_json(), default=str)), "eventSourceARN": self.arn}
                            for r in records]}


@pytest.fixture
def aws(monkeypatch, opensearch_url):
    """The deployed defaults (the API projects its own writes inline; an embedder), with the fake embedder in
    place of Bedrock, and the events table made from template.yaml's own definition."""
    prefix = f"lambda-{uuid.uuid4().hex[:8]}"
    for key, value in {"AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "x",
                       "AWS_SECRET_ACCESS_KEY": "x", "POWERTOOLS_TRACE_DISABLED": "1",
                       "POWERTOOLS_SERVICE_NAME": "second-brain", "BRAIN_EVENTS_TABLE": "events",
                       "BRAIN_OPENSEARCH_URL": opensearch_url, "BRAIN_OPENSEARCH_PREFIX": prefix,
                       "BRAIN_EMBEDDER": "bedrock", "BRAIN_AUTH_TOKEN_SECRET": "brain/owner-token",
                       "BRAIN_TRANSFER_BUCKET": "brain-transfers"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("BRAIN_PROJECT_INLINE", raising=False)
    embedder = FakeEmbedder(64)
    monkeypatch.setattr(composition, "aws_embedder", lambda settings, clients: embedder)
    with mock_aws():
        boto3.client("dynamodb").create_table(**table_from_template("events"))
        # each memory's events sealed with its own key, as deployed (template.yaml's KeysTable and DataKey)
        boto3.client("dynamodb").create_table(**table_from_template("keys", "KeysTable"))
        monkeypatch.setenv("BRAIN_KEYS_TABLE", "keys")
        monkeypatch.setenv("BRAIN_DATA_KEY_ID", boto3.client("kms").create_key()["KeyMetadata"]["Arn"])
        boto3.client("secretsmanager").create_secret(Name="brain/owner-token", SecretString=TOKEN)
        boto3.client("s3").create_bucket(Bucket="brain-transfers")
        yield SimpleNamespace(api=load("api"), projector=load("projector"), streams=Streams("events"),
                              search=OpenSearch(opensearch_url), prefix=prefix, embedder=embedder)


def table_from_template(name: str, resource: str = "EventsTable") -> dict:
    """create_table's arguments for a table exactly as template.yaml declares it."""
    template = load_template()
    table = dict(template["Resources"][resource]["Properties"])
    table.pop("PointInTimeRecoverySpecification", None)  # not create_table's: set by a later call on AWS
    table.pop("TimeToLiveSpecification", None)  # likewise (update_time_to_live)
    if "StreamSpecification" in table:
        table["StreamSpecification"] = {"StreamEnabled": True, **table["StreamSpecification"]}
    if "SSESpecification" in table:
        table["SSESpecification"] = {"Enabled": table["SSESpecification"]["SSEEnabled"]}
    return {"TableName": name, **table}


def call(api, method: str, path: str, body: dict | None = None, query: dict | None = None, token: str = TOKEN,
         headers: dict | None = None):
    response = handle(api, method, path, body, query, token, headers)
    return response["statusCode"], json.loads(response["body"])


def handle(api, method: str, path: str, body: dict | None = None, query: dict | None = None, token: str = TOKEN,
           headers: dict | None = None) -> dict:
    """API Gateway's event for this request, through the handler: its raw response."""
    event = json.loads((EVENTS / "api-capture.json").read_text())
    event["requestContext"]["path"] = "/prod" + path  # the public path, under the stage
    event |= {"path": path, "httpMethod": method, "body": json.dumps(body) if body is not None else None,
              "queryStringParameters": query, "multiValueQueryStringParameters":
                  {k: [v] for k, v in query.items()} if query else None}
    event["headers"]["Authorization"] = f"Bearer {token}"
    event["multiValueHeaders"]["Authorization"] = [f"Bearer {token}"]
    for name, value in (headers or {}).items():
        event["headers"][name], event["multiValueHeaders"][name] = value, [value]
    return api.handler(event, CONTEXT)


def project(aws) -> dict:
    """Feed everything new on the table's stream to the projector, as one batch."""
    return aws.projector.handler(aws.streams.batch(), CONTEXT)


def passages(aws, memory_id: str) -> int:
    """The memory's vectors in OpenSearch."""
    index = f"{aws.prefix}-passages"
    aws.search.indices.refresh(index=index)
    return aws.search.count(index=index, body={"query": {"term": {"entry_id": memory_id}}})["count"]


def table_text() -> str:
    return json.dumps(boto3.client("dynamodb").scan(TableName="events")["Items"], default=str)


def test_a_capture_flows_from_api_gateway_through_the_stream_to_a_recall(aws):
    status, captured = call(aws.api, "POST", "/capture", {"content": "The pricing floor is $6k per year #pricing"})
    assert status == 200 and captured["ok"] is True
    memory_id = captured["id"]
    # the event is in the table, its data sealed with the memory's own key
    assert memory_id in table_text() and "The pricing floor" not in table_text()
    # The API projected its own write: readable and searchable at once, before the stream projector runs.
    assert call(aws.api, "GET", "/entry", query={"id": memory_id})[0] == 200
    assert [r["id"] for r in call(aws.api, "GET", "/recall", query={"query": "pricing floor"})[1]["results"]] == [
        memory_id]

    assert project(aws) == {"batchItemFailures": []}  # the projector redoes it idempotently, then embeds
    assert passages(aws, memory_id) == 1
    status, found = call(aws.api, "GET", "/recall", query={"query": "pricing floor"})
    assert status == 200 and [r["id"] for r in found["results"]] == [memory_id]

    call(aws.api, "POST", "/append", {"id": memory_id, "addition": "Raised to $7k."})
    other = call(aws.api, "POST", "/capture", {"content": "Dana owns the enterprise pricing sheet"})[1]["id"]
    project(aws)  # a link needs both ends readable
    assert call(aws.api, "POST", "/link", {"source_id": memory_id, "target_id": other, "type": "caused_by"})[0] == 200
    project(aws)
    entry = call(aws.api, "GET", "/entry", query={"id": memory_id})[1]["entry"]
    assert entry["content"].endswith("Raised to $7k.") and [t["event"] for t in entry["timeline"]][-1] == "appended"
    [edge] = call(aws.api, "GET", "/connections", query={"id": memory_id})[1]["connections"]
    assert (edge["id"], edge["type"]) == (other, "caused_by")

    call(aws.api, "POST", "/update", {"id": other, "content": "Dana and Lee own the pricing sheet"})
    project(aws)
    entry = call(aws.api, "GET", "/entry", query={"id": other})[1]["entry"]
    assert entry["content"] == "Dana and Lee own the pricing sheet"

    assert call(aws.api, "POST", "/forget", {"id": memory_id})[1]["ok"] is True
    project(aws)
    assert call(aws.api, "GET", "/entry", query={"id": memory_id})[0] == 404
    assert "pricing floor is $6k" not in table_text()  # the tombstone erased the content from the table
    assert call(aws.api, "GET", "/connections", query={"id": other})[1]["connections"] == []
    assert call(aws.api, "GET", "/count")[1] == {"count": 1}


def test_a_capture_retried_by_the_client_with_its_idempotency_key_lands_once(aws):
    body, key = {"content": "Order the replacement router"}, {"Idempotency-Key": "lambda-retry-1"}
    first = call(aws.api, "POST", "/capture", body, headers=key)
    assert first[0] == 200 and call(aws.api, "POST", "/capture", body, headers=key) == first
    project(aws)
    assert call(aws.api, "GET", "/count")[1] == {"count": 1}


def test_the_largest_note_in_cjk_is_captured_projected_and_forgotten(aws):
    """What the local service accepts, AWS accepts: 200,000 CJK characters (600 KB of UTF-8, past DynamoDB's
    400 KB item) go in through API Gateway and come back whole from OpenSearch."""
    rng = random.Random(11)
    text = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(MAX_CONTENT_CHARS))
    status, captured = call(aws.api, "POST", "/capture", {"content": text})
    assert status == 200 and captured["ok"] is True, captured
    assert project(aws) == {"batchItemFailures": []}
    assert call(aws.api, "GET", "/entry", query={"id": captured["id"]})[1]["entry"]["content"] == text
    assert call(aws.api, "POST", "/forget", {"id": captured["id"]})[1]["ok"] is True
    project(aws)
    assert call(aws.api, "GET", "/entry", query={"id": captured["id"]})[0] == 404
    assert not [i for i in boto3.client("dynamodb").scan(TableName="events")["Items"]
                if {"packed", "parts", "chunk"} & i.keys()]


def test_an_export_is_measured_as_lambda_carries_it_so_cjk_text_under_the_limit_still_redirects(aws, monkeypatch):
    """Issue 46: the limit compared the UTF-8 body, but Lambda's answer carries the body as escaped JSON, a CJK
    character taking 6 bytes instead of 3: an export under the limit became one over Lambda's 6 MB (a 502)."""
    monkeypatch.setenv("BRAIN_EXPORT_INLINE_BYTES", "30000")
    api = load("api")
    assert call(api, "POST", "/capture", {"content": "鳥の観察記録。" * 1000})[0] == 200  # 21 KB of UTF-8
    response = handle(api, "GET", "/export")
    assert response["statusCode"] == 303, "the escaped body is over the limit: it must go through S3"
    location = response["headers"]["location"]
    key = location[location.index("exports/") : location.index(".json") + 5]
    body = boto3.client("s3").get_object(Bucket="brain-transfers", Key=key)["Body"].read()
    assert len(body) < 30000 < len(json.dumps(body.decode()))  # under the limit as UTF-8, over it as carried
    monkeypatch.setenv("BRAIN_EXPORT_INLINE_BYTES", "50000")
    response = handle(load("api"), "GET", "/export")
    assert response["statusCode"] == 200 and len(json.dumps(response)) < 50000  # what Lambda would carry


def test_a_brain_past_lambdas_payload_exports_and_imports_through_s3(aws, monkeypatch, opensearch_url):
    """Past the inline limit (5 MB by default; 3 KB here) the export is a redirect to the file in S3, and a backup
    too large to send is uploaded there and imported page by page from it, into another brain."""
    monkeypatch.setenv("BRAIN_EXPORT_INLINE_BYTES", "3000")
    api = load("api")
    for n in range(30):
        call(api, "POST", "/capture", {"content": f"Stonechat pair {n} on the gorse, ring number {n * 13}"})
    response = handle(api, "GET", "/export")
    assert response["statusCode"] == 303 and not response["body"]
    location = response["headers"]["location"]
    key = location[location.index("exports/") : location.index(".json") + 5]
    backup = json.loads(boto3.client("s3").get_object(Bucket="brain-transfers", Key=key)["Body"].read())
    assert len(json.dumps(backup)) > 3000 and len(backup["entries"]) == 30
    monkeypatch.setenv("BRAIN_EXPORT_INLINE_BYTES", "5000000")
    inline = call(load("api"), "GET", "/export")[1]
    assert {k: v for k, v in inline.items() if k != "exported_at"} == {
        k: v for k, v in backup.items() if k != "exported_at"}

    # Another brain (its own table and indexes) restores it from an upload.
    boto3.client("dynamodb").create_table(**table_from_template("events-restored"))
    monkeypatch.setenv("BRAIN_EVENTS_TABLE", "events-restored")
    monkeypatch.setenv("BRAIN_OPENSEARCH_PREFIX", f"{aws.prefix}-restored")
    monkeypatch.setenv("BRAIN_IMPORT_UPLOAD_BYTES", "1000000")
    restored = load("api")
    status, upload = call(restored, "POST", "/import/upload")
    assert status == 200 and upload["method"] == "POST" and upload["max_bytes"] == 1_000_000
    # S3 refuses a file past the cap itself: the signed policy says so (moto accepts any size, so the policy is
    # read here, and the import's own check below refuses what got past it)
    policy = json.loads(base64.b64decode(upload["fields"]["policy"]))
    assert ["content-length-range", 1, 1_000_000] in policy["conditions"]
    assert {"key": upload["upload"]} in policy["conditions"] or upload["fields"]["key"] == upload["upload"]
    sent = requests.post(upload["url"], data=upload["fields"],
                         files={upload["file_field"]: ("brain.json", json.dumps(backup).encode(), "application/json")})
    assert sent.status_code in (200, 204), sent.text
    def stored() -> list[str]:
        listed = boto3.client("s3").list_objects_v2(Bucket="brain-transfers", Prefix=upload["upload"])
        return [item["Key"] for item in listed.get("Contents", [])]

    offset, edge_offset, imported = 0, 0, 0
    while True:  # until every entry and every edge is in, as a client pages
        status, page = call(restored, "POST", "/import", query={
            "upload": upload["upload"], "offset": str(offset), "edge_offset": str(edge_offset), "limit": "12"})
        assert status == 200, page
        imported += page["imported"]
        if not page["remaining_entries"] and not page["remaining_edges"]:
            break
        assert upload["upload"] in stored() and len(stored()) > 1  # the file, and its parts laid out
        offset, edge_offset = page["next_offset"], page["next_edge_offset"]
    assert imported == 30 and call(restored, "GET", "/count")[1] == {"count": 30}
    # Imported: the uploaded backup and its parts are gone from the bucket (issue 66 item 3: not a day later)
    assert stored() == []
    _, large = call(restored, "POST", "/import/upload")
    boto3.client("s3").put_object(Bucket="brain-transfers", Key=large["upload"], Body=b" " * 1_000_001 + b"{}")
    status, body = call(restored, "POST", "/import", query={"upload": large["upload"]})
    assert status == 413 and body["ok"] is False and "larger than 1000000 bytes" in body["error"], body
    for bad in ("imports/../exports/x.json", "imports/0123.json"):
        status, body = call(restored, "POST", "/import", query={"upload": bad})
        assert status == 400 and body["ok"] is False, body


def test_bad_tokens_get_the_envelope(aws):
    status, body = call(aws.api, "GET", "/count", token="wrong")
    assert (status, body) == (401, {"ok": False, "error": "Unauthorized", "code": "invalid_token"})


def test_the_dashboard_is_served_through_api_gateway(aws):
    """The shell without a token, its files from the layer's package, references relative to the stage's path."""
    shell = handle(aws.api, "GET", "/", token="")
    assert shell["statusCode"] == 200 and shell["headers"]["content-type"].startswith("text/html")
    assert 'src="dashboard/shell.js"' in shell["body"] and "script-src 'self'" in shell["headers"][
        "content-security-policy"]
    event = json.loads((EVENTS / "api-capture.json").read_text())
    event |= {"path": "/", "httpMethod": "GET", "body": None, "queryStringParameters": None,
              "multiValueQueryStringParameters": None}
    event["requestContext"]["path"] = "/prod"  # https://…/prod, without the folder's slash
    moved = aws.api.handler(event, CONTEXT)
    assert (moved["statusCode"], moved["headers"]["location"]) == (308, "/prod/")
    for path, kind in (("/dashboard/shell.js", "text/javascript"), ("/dashboard/app.js", "text/javascript"),
                       ("/dashboard/views/home.js", "text/javascript"),
                       ("/dashboard/sw.js", "text/javascript"), ("/dashboard/app.css", "text/css")):
        asset = handle(aws.api, "GET", path, token="")
        assert asset["statusCode"] == 200 and asset["headers"]["content-type"].startswith(kind), path
        assert asset["body"] == files("second_brain.dashboard").joinpath(*path.split("/")[2:]).read_text(), path


def test_one_poisoned_record_is_reported_alone(aws):
    """A stream this code cannot fold (an event type from a newer version) fails its record alone."""
    call(aws.api, "POST", "/capture", {"content": "First note about herons"})
    boto3.client("dynamodb").put_item(TableName="events", Item={
        "stream_id": {"S": "memory-from-the-future"}, "version": {"N": "1"}, "type": {"S": "NoSuchEvent"},
        "data": {"S": "{}"}, "log": {"S": "all"}, "position": {"N": "99"}, "schema_version": {"N": "1"},
        "actor": {"S": "owner"}, "workspace": {"S": "personal-owner"}, "request_id": {"S": "r"}, "at": {"N": "1"}})
    call(aws.api, "POST", "/capture", {"content": "Second note about egrets"})
    batch = aws.streams.batch()
    [poisoned] = [r for r in batch["Records"]
                  if r["dynamodb"]["NewImage"]["stream_id"]["S"] == "memory-from-the-future"]
    response = aws.projector.handler(batch, CONTEXT)
    assert response == {"batchItemFailures": [{"itemIdentifier": poisoned["dynamodb"]["SequenceNumber"]}]}
    assert call(aws.api, "GET", "/recall", query={"query": "egrets"})[1]["results"]  # the others went through


def test_a_redelivered_out_of_order_batch_projects_exactly_like_a_clean_one(aws):
    first = call(aws.api, "POST", "/capture", {"content": "Kestrel nest on the north tower"})[1]["id"]
    second = call(aws.api, "POST", "/capture", {"content": "Kestrel chicks fledged in June"})[1]["id"]
    aws.projector.handler(aws.streams.batch(), CONTEXT)
    call(aws.api, "POST", "/append", {"id": first, "addition": "Three eggs."})
    call(aws.api, "POST", "/link", {"source_id": first, "target_id": second})
    call(aws.api, "POST", "/status", {"id": second, "status": "canonical"})
    batch = aws.streams.batch()
    assert aws.projector.handler(batch, CONTEXT) == {"batchItemFailures": []}
    clean = snapshot(aws)

    messy = copy.deepcopy(batch)
    messy["Records"] = list(reversed(messy["Records"])) + messy["Records"][: len(messy["Records"]) // 2]
    assert aws.projector.handler(messy, CONTEXT) == {"batchItemFailures": []}
    assert snapshot(aws) == clean


def test_two_invocations_racing_on_one_memory_lose_nothing(aws):
    memory_id = call(aws.api, "POST", "/capture", {"content": "Osprey count at the lake"})[1]["id"]
    second = load("api")  # another Lambda container
    store = type(aws.api.asgi().app.state.brain.store.inner)
    original = store.append
    raced, started = [], []

    def append_after_a_rival(self, events):
        if not started and events[0].stream_id == f"memory-{memory_id}" and events[0].version > 1:
            started.append(True)  # only the first write is overtaken (the rival's own goes straight through)

            # The rival container runs to completion between our read of the stream and our write.
            def rival() -> None:
                asyncio.set_event_loop(asyncio.new_event_loop())
                raced.append(call(second, "POST", "/append", {"id": memory_id, "addition": "Rival: 4 ospreys."}))

            thread = threading.Thread(target=rival)
            thread.start()
            thread.join()
        return original(self, events)

    store.append = append_after_a_rival
    try:
        status, body = call(aws.api, "POST", "/append", {"id": memory_id, "addition": "Mine: 5 ospreys."})
    finally:
        store.append = original
    assert raced and raced[0][0] == 200 and status == 200 and body["ok"] is True  # lost the race, retried
    project(aws)
    content = call(aws.api, "GET", "/entry", query={"id": memory_id})[1]["entry"]["content"]
    assert "Rival: 4 ospreys." in content and "Mine: 5 ospreys." in content


def test_the_mcp_function_url_lists_tools_and_checks_the_token(aws):
    mcp = load("mcp")
    event = json.loads((EVENTS / "function-url-mcp.json").read_text())
    event["headers"]["authorization"] = f"Bearer {TOKEN}"
    for _ in range(2):  # the session manager runs once per app: a second invocation must work too
        response = mcp.handler(copy.deepcopy(event), CONTEXT)
        assert response["statusCode"] == 200, response
        tools = json.loads(response["body"])["result"]["tools"]
        assert len(tools) == 20 and {"remember", "timeline", "conflicts", "due"} <= {t["name"] for t in tools}
    event["headers"]["authorization"] = "Bearer nope"
    assert mcp.handler(event, CONTEXT)["statusCode"] == 401


def test_a_stranger_on_the_mcp_url_never_builds_the_brain(aws):
    mcp = load("mcp")  # a cold container
    event = json.loads((EVENTS / "function-url-mcp.json").read_text())
    for authorization in ("Bearer nope", None):
        if authorization is None:
            event["headers"].pop("authorization", None)
        else:
            event["headers"]["authorization"] = authorization
        response = mcp.handler(copy.deepcopy(event), CONTEXT)
        assert response["statusCode"] == 401
        assert json.loads(response["body"]) == {"ok": False, "error": "Unauthorized", "code": "invalid_token"}
    assert mcp.brain.cache_info().currsize == 0  # no index checked, no client made for OpenSearch


def test_a_capture_stores_the_vectors_it_computed_and_the_next_capture_reads_no_pending_list(aws):
    """The API function projects its own writes, so the capture can store its memory's vectors at once (the
    duplicate check computed them): searchable by meaning without the projector, and the next capture's
    catch-up has nothing to look for (on OpenSearch that look is a count and a search after a refresh)."""
    memory_id = call(aws.api, "POST", "/capture", {"content": "Grebes dive for a full minute"})[1]["id"]
    assert passages(aws, memory_id) == 1
    index = aws.api.asgi().app.state.brain.vectors
    asked: list[str] = []
    count, pending = index.pending_count, index.pending
    index.pending_count = lambda *args, **kwargs: asked.append("count") or count(*args, **kwargs)
    index.pending = lambda limit, ids=None: asked.append("pending" if ids is None else "by id") or pending(limit, ids)
    second = call(aws.api, "POST", "/capture", {"content": "Coots bob their heads when they swim"})[1]["id"]
    assert asked == ["by id"] and passages(aws, second) == 1


def test_an_embedding_failure_leaves_the_batch_projected_and_the_nightly_run_embeds_it(aws, monkeypatch):
    def down(texts):
        raise TimeoutError("the model endpoint timed out")

    with monkeypatch.context() as patch:
        patch.setattr(aws.embedder, "embed_batch", down)
        # the capture's own duplicate check fails too: stored, with no vector at hand, so left pending
        memory_id = call(aws.api, "POST", "/capture", {"content": "Grebes dive for a full minute"})[1]["id"]
        assert project(aws) == {"batchItemFailures": []}  # projected; the embedding failure is not the batch's
        assert call(aws.api, "GET", "/entry", query={"id": memory_id})[0] == 200 and passages(aws, memory_id) == 0
    maintenance = load("maintenance")
    event = json.loads((EVENTS / "scheduler-nightly.json").read_text())
    assert job(maintenance.handler(event, CONTEXT), "housekeeping")["counts"] == {"embedded": 1}
    assert passages(aws, memory_id) == 1
    assert job(maintenance.handler(event, CONTEXT), "housekeeping")["counts"] == {}


def test_a_forget_whose_erasure_stopped_halfway_is_finished_by_the_nightly_run(aws, monkeypatch):
    memory_id = call(aws.api, "POST", "/capture", {"content": "Bittern booming SECRET-4411 in the reeds"})[1]["id"]
    call(aws.api, "POST", "/append", {"id": memory_id, "addition": "Twice at dusk."})
    client = aws.api.asgi().app.state.brain.store.inner.client

    def throttled(**kwargs):
        raise ClientError({"Error": {"Code": "ThrottlingException"}}, "UpdateItem")

    with monkeypatch.context() as patch:
        patch.setattr(client, "update_item", throttled)
        assert call(aws.api, "POST", "/forget", {"id": memory_id})[1]["ok"] is True  # the forget is committed
        assert aws.api.asgi().app.state.brain.store.inner.pending_erasures() == 2  # what the alarm counts
    stream = {"S": f"memory-{memory_id}"}
    data = [i for i in boto3.client("dynamodb").scan(TableName="events")["Items"]
            if i["stream_id"] == stream and "packed" in i]
    assert len(data) >= 2 and "SECRET-4411" not in table_text()  # left, sealed, as is its key (throttled too)
    maintenance = load("maintenance")
    event = json.loads((EVENTS / "scheduler-nightly.json").read_text())
    # the memory's, and its text's claim (which memory held it); none left for the backlog alarm
    done = maintenance.handler(event, CONTEXT)
    assert (done["erasures_finished"], done["erasures_pending"]) == (2, 0)
    key = boto3.client("dynamodb").get_item(TableName="keys", Key={"scope": {"S": memory_id}})["Item"]
    assert "wrapped" not in key and key["destroyed"] == {"BOOL": True}
    assert not [i for i in boto3.client("dynamodb").scan(TableName="events")["Items"]
                if i["stream_id"] == stream and "packed" in i]


def test_the_projector_stops_before_its_timeout_and_the_rest_is_retried(aws):
    for n in range(3):
        call(aws.api, "POST", "/capture", {"content": f"Swift sighting number {n}"})
    batch = aws.streams.batch()
    short = SimpleNamespace(**{**vars(CONTEXT), "get_remaining_time_in_millis": lambda: 15_000})
    response = aws.projector.handler(batch, short)  # under the reserve: no stream is projected
    events = [r for r in batch["Records"] if not r["dynamodb"]["NewImage"]["stream_id"]["S"].startswith("$")]
    assert sorted(f["itemIdentifier"] for f in response["batchItemFailures"]) == sorted(
        r["dynamodb"]["SequenceNumber"] for r in events)
    assert aws.projector.handler(batch, CONTEXT) == {"batchItemFailures": []}  # Lambda's retry


def test_the_opensearch_client_signs_every_request_with_sigv4(monkeypatch):
    """An https endpoint is an AWS domain: each request carries a SigV4 signature for the `es` service."""
    import requests
    from requests.adapters import BaseAdapter

    from second_brain.settings import Settings

    for key, value in {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "x", "AWS_REGION": "eu-west-1",
                       "AWS_DEFAULT_REGION": "eu-west-1"}.items():
        monkeypatch.setenv(key, value)
    sent: list[requests.PreparedRequest] = []

    class Recording(BaseAdapter):
        def send(self, request, **kwargs):
            sent.append(request)
            response = requests.Response()
            response.status_code, response._content = 200, b'{"count": 0}'
            response.headers["content-type"] = "application/json"
            response.request, response.url = request, request.url
            return response

        def close(self):
            pass

    client = composition.opensearch_client(Settings(opensearch_url="https://search-brain.eu-west-1.es.amazonaws.com"))
    for connection in client.transport.connection_pool.connections:
        connection.session.mount("https://", Recording())
    client.count(index="brain-entries")
    [request] = sent
    authorization = request.headers["Authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/es/aws4_request" in authorization and "x-amz-date" in request.headers


def test_the_owner_token_is_read_again_when_rotated(aws):
    from second_brain.settings import Settings

    token = composition.owner_token(Settings(), composition.Clients(), max_age=0)
    assert token() == TOKEN
    boto3.client("secretsmanager").put_secret_value(SecretId="brain/owner-token", SecretString="rotated-token")
    assert token() == "rotated-token"


def test_the_nightly_run_merges_forgotten_documents_out_of_the_index_segments(aws, monkeypatch):
    """Issue 66 item 3: a deleted OpenSearch document stays in its segment (on disk, and in every hourly snapshot)
    until a merge rewrites it. After its jobs (which rewrite documents too), the nightly run asks the domain for a
    merge that drops the deleted documents of every index of the brain, and the domain takes it. (The node keeps a
    deletion for about 30 s before a merge may drop it, for its own recovery: the effect is bench-sized, see
    docs/OPERATIONS.md.)"""
    from opensearchpy.client.indices import IndicesClient

    asked, merge = [], IndicesClient.forcemerge

    def recorded(self, *args, **kwargs):
        answer = merge(self, *args, **kwargs)
        asked.append((kwargs.get("index"), kwargs.get("params"), answer))
        return answer

    monkeypatch.setattr(IndicesClient, "forcemerge", recorded)
    gone = call(aws.api, "POST", "/capture", {"content": "Osprey nest SECRET-7310 by the dam"})[1]["id"]
    project(aws)
    assert call(aws.api, "POST", "/forget", {"id": gone})[1]["ok"] is True
    project(aws)
    event = json.loads((EVENTS / "scheduler-nightly.json").read_text())
    assert load("maintenance").handler(event, CONTEXT)["deletes_expunged"] is True
    [(indexes, params, answer)] = asked
    assert set(indexes.split(",")) == {f"{aws.prefix}-{kind}" for kind in
                                       ("entries", "passages", "edges", "projects", "embeddings")}
    assert params["only_expunge_deletes"] == "true" and "task" in answer  # taken, and running on the domain
    hourly = load("maintenance").handler({"schedule": "hourly"}, CONTEXT)
    assert "deletes_expunged" not in hourly and len(asked) == 1  # once a night


def test_the_nightly_schedule_runs_every_nightly_job_and_the_hourly_one_the_hourly_jobs(aws):
    maintenance = load("maintenance")
    event = json.loads((EVENTS / "scheduler-nightly.json").read_text())
    nightly = maintenance.handler(event, CONTEXT)
    assert nightly["ok"] and nightly["schedule"] == "nightly" and nightly["erasures_finished"] == 0
    brain = maintenance.brain().brain
    assert [run["job"] for run in nightly["runs"]] == brain.maintenance.names("nightly")
    assert all(run["errors"] == [] and run["complete"] for run in nightly["runs"])
    assert [row["runs"] for row in brain.maintenance.status() if row["schedule"] == "nightly"] == \
        [1] * len(nightly["runs"])  # each run is on record in the log
    hourly = maintenance.handler({**event, "schedule": "hourly"}, CONTEXT)
    assert [run["job"] for run in hourly["runs"]] == brain.maintenance.names("hourly")


def test_a_recall_writes_no_log_event_and_the_hourly_run_counts_it(aws):
    """Recalls are noted beside the log (one PutItem, no transaction) and folded into it by the hourly job."""
    status, captured = call(aws.api, "POST", "/capture", {"content": "The kestrel hunts over the east meadow"})
    assert status == 200
    events = boto3.client("dynamodb").scan(TableName="events")["Items"]
    logged = len([i for i in events if "type" in i])
    status, found = call(aws.api, "GET", "/recall", query={"query": "kestrel meadow"})
    assert status == 200 and captured["id"] in [e["id"] for e in found["results"]]
    after = boto3.client("dynamodb").scan(TableName="events")["Items"]
    assert len([i for i in after if "type" in i]) == logged  # no event appended for the recall
    assert [i for i in after if i["stream_id"]["S"].startswith("$recalls#")]  # but noted
    maintenance = load("maintenance")
    event = json.loads((EVENTS / "scheduler-nightly.json").read_text())
    hourly = maintenance.handler({**event, "schedule": "hourly"}, CONTEXT)
    [fold] = [run for run in hourly["runs"] if run["job"] == "recalls"]
    assert fold["counts"] == {"counted": 1, "recalls_folded": 1} and fold["complete"], fold
    project(aws)
    assert call(aws.api, "GET", "/entry", query={"id": captured["id"]})[1]["entry"]["recall_count"] == 1
    remaining = boto3.client("dynamodb").scan(TableName="events")["Items"]
    assert not [i for i in remaining if i["stream_id"]["S"].startswith("$recalls#")]  # dropped once folded


def test_a_nightly_run_short_of_time_stops_between_jobs_and_says_so(aws):
    maintenance = load("maintenance")
    event = json.loads((EVENTS / "scheduler-nightly.json").read_text())
    short = SimpleNamespace(**{**vars(CONTEXT), "get_remaining_time_in_millis": lambda: 1_000})  # under the reserve
    runs = maintenance.handler(event, short)["runs"]
    assert runs and all(run == {"job": run["job"], "skipped": "out of time"} for run in runs)


def job(result: dict, name: str) -> dict:
    return next(run for run in result["runs"] if run["job"] == name)


def snapshot(aws) -> dict:
    found = {}
    for suffix in ("entries", "edges", "projects"):
        index = f"{aws.prefix}-{suffix}"
        hits = aws.search.search(index=index, body={"size": 1000, "query": {"match_all": {}}})["hits"]["hits"]
        found[suffix] = sorted((h["_id"], json.dumps(h["_source"], sort_keys=True)) for h in hits)
    return found


def test_brain_replay_rebuilds_the_indexes_from_the_log(aws, capsys, monkeypatch):
    from second_brain.adapters.event_store import dynamodb
    from second_brain.entrypoints.cli import replay_aws
    from second_brain.settings import Settings

    monkeypatch.setattr(dynamodb, "SETTLE_MS", 1_000)  # the replay waits until what came before it has settled

    memory_id = call(aws.api, "POST", "/capture", {"content": "Wren song recorded at dawn"})[1]["id"]
    project(aws)
    before = call(aws.api, "GET", "/recall", query={"query": "wren song"})[1]["results"]
    aws.search.indices.delete(index=f"{aws.prefix}-entries")  # the index is lost
    assert replay_aws(Settings()) == 0 and "Replayed" in capsys.readouterr().out
    # Searchable when the replay returns: another process (this client) counts every document without refreshing.
    counted = {kind: aws.search.count(index=f"{aws.prefix}-{kind}")["count"] for kind in ("entries", "passages")}
    assert counted == {"entries": 1, "passages": 1}
    after = call(aws.api, "GET", "/recall", query={"query": "wren song"})[1]["results"]
    assert [r["id"] for r in after] == [r["id"] for r in before] == [memory_id]


def test_brain_replay_aws_without_the_aws_extra_says_what_to_install(monkeypatch, capsys):
    """`make run`'s venv holds the local extra only: `brain replay --aws` there used to end in a traceback."""
    import sys

    from second_brain.entrypoints.cli import replay_aws
    from second_brain.settings import Settings

    monkeypatch.delitem(sys.modules, "second_brain.aws.composition", raising=False)
    monkeypatch.setitem(sys.modules, "boto3", None)  # as if it were not installed
    assert replay_aws(Settings()) == 2
    said = capsys.readouterr().err
    assert "boto3 is not installed" in said and "pip install -e '.[aws]'" in said


def test_a_member_works_through_both_functions_and_a_suspended_one_is_told_so(aws):
    status, added = call(aws.api, "POST", "/team/members", {"name": "Bob"})
    assert status == 200 and added["token"].startswith("sbm_")
    member = added["token"]
    assert member not in table_text()  # only its hash is stored
    memory = call(aws.api, "POST", "/capture", {"content": "Bob's private note on kestrels"}, token=member)[1]["id"]
    project(aws)
    assert call(aws.api, "GET", "/entry", query={"id": memory}, token=member)[1]["entry"]["workspace"] == "personal"
    assert call(aws.api, "GET", "/entry", query={"id": memory})[0] == 404  # not even the owner reads it
    assert call(aws.api, "POST", "/share", {"id": memory}, token=member)[1]["status"] == "shared"
    project(aws)
    assert call(aws.api, "GET", "/entry", query={"id": memory})[1]["entry"]["actor_name"] == "Bob"

    mcp = load("mcp")
    event = json.loads((EVENTS / "function-url-mcp.json").read_text())
    event["headers"]["authorization"] = f"Bearer {member}"
    assert mcp.handler(copy.deepcopy(event), CONTEXT)["statusCode"] == 200
    assert call(aws.api, "GET", "/.well-known/oauth-authorization-server")[0] == 404  # the MCP URL's, not the API's
    call(aws.api, "POST", "/team/members/suspend", {"id": added["member"]["id"], "suspended": True})
    status, body = call(aws.api, "GET", "/count", token=member)
    assert (status, body["code"]) == (401, "suspended")
    response = mcp.handler(copy.deepcopy(event), CONTEXT)
    assert (response["statusCode"], json.loads(response["body"])["code"]) == (401, "suspended")


def test_a_full_digest_and_the_forget_of_one_of_its_sources_each_fit_one_transaction(aws):
    topics = ["harbour", "glacier", "orchard", "violin", "lantern", "canyon", "meadow", "falcon", "copper", "tundra",
              "saffron", "quarry", "lagoon", "walnut", "beacon", "cobalt", "prairie", "marble", "thistle", "juniper",
              "basalt", "heron", "cedar", "amber", "delta", "fjord", "granite", "hazel", "ivory", "jasmine", "kelp"]
    ids = [call(aws.api, "POST", "/capture", {"content": f"Standup {n}: the {word} build {4100 + n} shipped",
                                              "tags": ["standup"]})[1]["id"] for n, word in enumerate(topics)]
    status, digest = call(aws.api, "GET", "/digest", query={"tag": "standup"})
    assert status == 200 and digest["source_count"] == 30, digest  # the most one digest takes
    rolled = [i for i in ids if "rolled-up" in call(aws.api, "GET", "/entry", query={"id": i})[1]["entry"]["tags"]]
    assert len(rolled) == 30
    assert call(aws.api, "POST", "/forget", {"id": rolled[0]})[0] == 200  # the source, the digest, 29 releases
    assert call(aws.api, "GET", "/entry", query={"id": digest["entry_id"]})[0] == 404
    assert all("rolled-up" not in call(aws.api, "GET", "/entry", query={"id": i})[1]["entry"]["tags"]
               for i in rolled[1:])


def test_a_mailbox_is_connected_through_the_api_synced_hourly_and_its_password_kept_in_secrets_manager(
        aws, monkeypatch, greenmail, mailbox):
    """Issue 47 on AWS: the API function connects (its first sync at once), the maintenance function's hourly run
    syncs what came since, the password lives in Secrets Manager under the stack's prefix and nowhere in the log,
    and a disconnect deletes it."""
    from tests.support.greenmail import PASSWORD, message

    monkeypatch.setenv("BRAIN_PUSH_ALLOW_LOOPBACK", "true")  # GreenMail is on this machine
    monkeypatch.setenv("BRAIN_SECRETS_PREFIX", "brain-stack")
    api = load("api")
    greenmail.append(message("Kestrel survey", "Counted four kestrels over the east meadow."), mailbox)
    status, connected = call(api, "POST", "/integrations", {"kind": "imap", "name": "Field notes",
                                                            "settings": greenmail.settings(mailbox)})
    assert status == 200, connected
    assert connected["integration"]["source"] == "email-imap" and connected["sync"]["created"] == 1
    integration = connected["integration"]["id"]
    secrets = boto3.client("secretsmanager")
    kept = secrets.get_secret_value(SecretId=f"brain-stack/integrations/{integration}")
    assert json.loads(kept["SecretString"]) == {"password": PASSWORD}
    assert PASSWORD not in table_text()  # not in any event, sealed or not
    status, kinds = call(api, "GET", "/integrations")
    assert PASSWORD not in json.dumps(kinds)
    refused = call(api, "POST", "/integrations", {"kind": "notes", "settings": {"path": "/tmp"}})
    assert refused[0] == 400 and "not available here" in refused[1]["error"]  # no folder on a function's disk

    greenmail.append(message("Owl pellets", "Found owl pellets under the barn beam."), mailbox)
    maintenance = load("maintenance")
    event = json.loads((EVENTS / "scheduler-nightly.json").read_text())
    hourly = maintenance.handler({**event, "schedule": "hourly"}, CONTEXT)
    [sync] = [run for run in hourly["runs"] if run["job"] == "integrations"]
    assert sync["errors"] == [] and sync["complete"] and sync["counts"]["created"] == 1, sync
    project(aws)
    status, found = call(api, "GET", "/recall", query={"query": "owl pellets barn"})
    assert status == 200 and found["results"] and found["results"][0]["source"] == "email-imap"

    status, gone = call(api, "POST", "/integrations/disconnect", {"id": integration, "forget_mirrors": True})
    assert status == 200 and gone["forgotten"] == 2
    with pytest.raises(ClientError):
        secrets.get_secret_value(SecretId=f"brain-stack/integrations/{integration}")


def test_brain_replay_without_the_key_settings_refuses_before_it_changes_anything(aws, capsys, monkeypatch):
    """Issue 66 item 1: a sealed log replayed as the docs said, without BRAIN_KEYS_TABLE and BRAIN_DATA_KEY_ID,
    dropped the indexes and then stopped with 'this log's events are sealed'. It now refuses first, in a sentence."""
    from second_brain.entrypoints.cli import replay_aws
    from second_brain.settings import Settings

    call(aws.api, "POST", "/capture", {"content": "Kingfisher seen by the mill race"})
    project(aws)
    monkeypatch.delenv("BRAIN_KEYS_TABLE")
    assert replay_aws(Settings()) == 2
    said = capsys.readouterr().err
    assert "BRAIN_KEYS_TABLE and BRAIN_DATA_KEY_ID" in said and "Nothing was changed." in said
    assert aws.search.count(index=f"{aws.prefix}-entries")["count"] == 1  # the index is as it was
