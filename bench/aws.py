"""The AWS deployment's request paths against a real OpenSearch node: capture latency, an import page, the projector.

Usage: .venv/bin/python bench/aws.py [--captures 50] [--records 300]

Runs the Lambda handlers in functions/ as the deployment runs them (the deployed defaults: the API projects its
own writes inline), with DynamoDB and Secrets Manager through moto and OpenSearch as the test node (built with
Maven on first use; or $OPENSEARCH_URL). The embedder is the fake one, so no figure includes model latency:

- capture: POST /capture through API Gateway's event shape, p50 / p95 over --captures notes, and the calls each
  capture makes: DynamoDB requests (every client call), OpenSearch requests (at the client's transport) and
  embedder calls;
- import: one default page (40 entries) of POST /import;
- projector: --records captured with inline projection off, then fed to the projector in stream batches of 100
  (projection only: its embedding step has nothing to do with embedding switched off); then the same batches
  again with the log read on one thread, where the time outside moto's DynamoDB can be told apart exactly.

Each figure is printed beside what issue 15 measured before the change, and the issue's target.

With --cold-start BUILD (a `sam build` output, as `make layer` leaves in .aws-sam/build) it measures instead what a
cold start spends importing each function's handler against the built layers merged as Lambda merges them in /opt:
a fresh `python3.11 -S -E -B` per run (nothing written, as /opt is read-only), the layer as built (its bytecode
shipped) against the same layer without its __pycache__ folders (as before issue 46), the two interleaved,
--runs of each.
"""

import argparse
import json
import logging
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import boto3
from botocore.client import BaseClient
from moto import mock_aws
from opensearchpy.transport import Transport

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from second_brain.adapters.embedder.fake import FakeEmbedder  # noqa: E402  (after the path is set)
from second_brain.adapters.event_store.dynamodb import table_definition  # noqa: E402  (after the path is set)
from second_brain.adapters.event_store.keys import keys_table_definition  # noqa: E402  (after the path is set)
from second_brain.aws import composition  # noqa: E402  (after the path is set)
from second_brain.aws import streams as projecting  # noqa: E402  (after the path is set)
from tests.aws.test_lambda_paths import CONTEXT, TOKEN, Streams, call, load  # noqa: E402  (after the path is set)

BEFORE = {"capture": 1020.0, "import": 41_000.0, "projector": 121 / 40}  # ms, ms, records/s (issue 15)
TARGET = {"capture": 100.0, "import": 5_000.0, "projector": 300.0}


def environment(opensearch_url: str, inline: bool) -> None:
    os.environ.update({
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x", "POWERTOOLS_TRACE_DISABLED": "1", "POWERTOOLS_METRICS_NAMESPACE": "bench",
        "BRAIN_EVENTS_TABLE": "events", "BRAIN_OPENSEARCH_URL": opensearch_url,
        "BRAIN_OPENSEARCH_PREFIX": f"bench-{uuid.uuid4().hex[:8]}", "BRAIN_EMBEDDER": "none",
        "BRAIN_AUTH_TOKEN_SECRET": "brain/owner-token", "BRAIN_PROJECT_INLINE": "true" if inline else "false",
        "BRAIN_IMPORT_REQUEST_SECONDS": "15", "BRAIN_KEYS_TABLE": "keys",
        "BRAIN_CONFIG_FRESH_SECONDS": "2"})  # as template.yaml deploys


def fresh_account() -> None:
    boto3.client("dynamodb").create_table(**table_definition("events"))
    boto3.client("dynamodb").create_table(**keys_table_definition("keys"))  # each memory's key, as deployed
    os.environ["BRAIN_DATA_KEY_ID"] = boto3.client("kms").create_key()["KeyMetadata"]["Arn"]
    boto3.client("secretsmanager").create_secret(Name="brain/owner-token", SecretString=TOKEN)


class DynamoDBClock:
    """Time spent inside DynamoDB calls. moto's in-process DynamoDB deep-copies the whole table on every
    transaction (and scans it on every query), which DynamoDB does not: its share is printed apart."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self.by: Counter[str] = Counter()  # DynamoDB calls by operation and the kind of key they touch
        self.kms = 0  # calls to KMS (each memory's data key made, or unwrapped once per process)
        original = BaseClient._make_api_call
        clock = self

        def timed(client, operation, params):
            if client.meta.service_model.service_name == "kms":
                clock.kms += 1
            if client.meta.service_model.service_name != "dynamodb":
                return original(client, operation, params)
            clock.calls += 1
            clock.by[f"{operation} {_key_kind(params)}".strip()] += 1
            started = time.perf_counter()
            try:
                return original(client, operation, params)
            finally:
                clock.seconds += time.perf_counter() - started

        BaseClient._make_api_call = timed


def _key_kind(params: dict) -> str:
    """What a DynamoDB call touches, by the shape of its keys: `$slot#`, `$content#`, a memory's stream..."""
    text = json.dumps(params.get("TransactItems") or params.get("Key") or params.get("Item")
                      or params.get("ExpressionAttributeValues") or params.get("RequestItems") or {}, default=str)
    kinds = sorted(set(re.findall(r'"S": "(\$?[a-z]+)[#:-]', text))) or re.findall(r'"S": "([^"]{1,16})', text)[:1]
    return "/".join(kinds)[:60]


class OpenSearchRequests:
    """Requests made to the OpenSearch node, counted at the client's transport."""

    def __init__(self) -> None:
        self.count = 0
        original = Transport.perform_request
        counter = self

        def counted(transport, *args, **kwargs):
            counter.count += 1
            return original(transport, *args, **kwargs)

        Transport.perform_request = counted


def bench_capture(count: int, embedder: FakeEmbedder) -> float:
    api, dynamodb, search = load("api"), DynamoDBClock(), OpenSearchRequests()
    call(api, "POST", "/capture", {"content": "warm-up note, the first request builds the brain"})
    times, without = [], []
    calls_before = (dynamodb.calls, search.count, embedder.calls, dynamodb.kms)
    dynamodb.by.clear()
    for n in range(count):
        started, before = time.perf_counter(), dynamodb.seconds
        status, body = call(api, "POST", "/capture", {"content": f"Bench note {n}: the heron count was {n * 7}"})
        elapsed = time.perf_counter() - started
        times.append(elapsed * 1000)
        without.append((elapsed - (dynamodb.seconds - before)) * 1000)
        assert status == 200 and body["ok"], body
    for label, sample in (("capture (inline projection)", times), ("  of which not in DynamoDB", without)):
        p50, p95 = statistics.median(sample), sorted(sample)[int(0.95 * (len(sample) - 1))]
        print(f"{label:29s} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms")
    made = [(after - before) / count for before, after in zip(calls_before, (dynamodb.calls, search.count,
                                                                             embedder.calls, dynamodb.kms),
                                                              strict=True)]
    print(f"  calls per capture: DynamoDB {made[0]:.1f}, OpenSearch {made[1]:.1f}, embedder {made[2]:.1f}, "
          f"KMS {made[3]:.1f} (issue 46 counted 14.5, 8 and one per text; no KMS then)")
    print("  DynamoDB calls per capture, by operation:",
          ", ".join(f"{name} {n / count:.1f}" for name, n in dynamodb.by.most_common(12)))
    print(f"  (before: {BEFORE['capture']:.0f} ms; target p50 <= {TARGET['capture']:.0f} ms without model latency)")
    return statistics.median(times)


def bench_import() -> float:
    api = load("api")
    entries = [{"id": f"imported-{n}", "content": f"Imported note {n} about the kestrel survey, plot {n % 9}",
                "tags": ["survey"], "created_at": 1_700_000_000_000 + n * 1000} for n in range(400)]
    body = {"version": 3, "entries": entries}
    call(api, "GET", "/count")  # the brain is built before the clock starts
    started = time.perf_counter()
    status, report = call(api, "POST", "/import", body)
    elapsed = (time.perf_counter() - started) * 1000
    assert status == 200 and report["imported"] == 40, report
    print(f"import, one default page (40) {elapsed:7.0f} ms"
          f"   (before: {BEFORE['import'] / 1000:.0f} s; target <= {TARGET['import'] / 1000:.0f} s)")
    # The largest page a client may ask for, within the 15 s a page may take as deployed: how far it gets.
    entries = [{"id": f"paged-{n}", "content": f"Paged note {n} about the heron survey, transect {n % 11}",
                "tags": ["survey"], "created_at": 1_800_000_000_000 + n * 1000} for n in range(1000)]
    started = time.perf_counter()
    status, report = call(api, "POST", "/import", {"version": 3, "entries": entries}, query={"limit": "1000"})
    page = time.perf_counter() - started
    assert status == 200 and report["imported"] == report["next_offset"], report
    print(f"import, one page of limit 1000: {report['imported']} entries in {page:.1f} s "
          f"({page * 1000 / max(1, report['imported']):.0f} ms each; the client resumes at next_offset "
          f"{report['next_offset']})")
    return elapsed


def bench_projector(records: int) -> float:
    api, projector = load("api"), load("projector")
    for n in range(records):
        call(api, "POST", "/capture", {"content": f"Projector note {n}: the osprey nest {n} was checked"})
    streams = Streams("events")
    batch = streams.batch()
    events = [r for r in batch["Records"] if r["dynamodb"]["NewImage"]["stream_id"]["S"].startswith("memory-")]
    projector.handler({"Records": events[:1]}, CONTEXT)  # warm: the first invocation builds the brain
    dynamodb = DynamoDBClock()
    started = time.perf_counter()
    for start in range(1, len(events), 100):
        response = projector.handler({"Records": events[start : start + 100]}, CONTEXT)
        assert response == {"batchItemFailures": []}, response
    elapsed = time.perf_counter() - started
    assert call(api, "GET", "/count")[1]["count"] == records
    # Stream reads run on 8 threads: the DynamoDB time measured is summed over them, so it is subtracted only
    # as far as it could have overlapped nothing (a lower bound on the rate without moto).
    print(f"projector, batches of 100    {(len(events) - 1) / elapsed:7.0f} records/s, "
          f"{len(events) - 1} records in {elapsed:.1f} s, {dynamodb.seconds:.1f} s of it summed in moto's DynamoDB"
          f"   (before: {BEFORE['projector']:.0f}/s; target >= {TARGET['projector']:.0f}/s)")
    # The same batches delivered again (Lambda redelivers), the log read on one thread: moto's time is then
    # exactly the wall time it took, and what is left is the projector's own work and OpenSearch's.
    projecting.PROJECTION_THREADS, threads = 1, projecting.PROJECTION_THREADS
    try:
        before, started = dynamodb.seconds, time.perf_counter()
        for start in range(1, len(events), 100):
            assert projector.handler({"Records": events[start : start + 100]}, CONTEXT) == {"batchItemFailures": []}
        elapsed, in_moto = time.perf_counter() - started, dynamodb.seconds - before
    finally:
        projecting.PROJECTION_THREADS = threads
    print(f"  again, log read on 1 thread {(len(events) - 1) / elapsed:7.0f} records/s; outside moto's DynamoDB "
          f"{(len(events) - 1) / (elapsed - in_moto):.0f} records/s ({elapsed - in_moto:.2f} of {elapsed:.1f} s)")
    return (len(events) - 1) / elapsed


IMPORT_TIME = """
import sys, time
sys.path[:0] = [sys.argv[1], sys.argv[2]]
started = time.perf_counter()
import app
print(time.perf_counter() - started, "mcp" in sys.modules)
"""


def bench_cold_start(build: Path, runs: int) -> None:
    """Seconds to import each handler, with the layer's bytecode and without it, side by side."""
    with tempfile.TemporaryDirectory() as scratch:
        shipped, stripped = Path(scratch) / "shipped", Path(scratch) / "stripped"
        for layer in ("CoreLayer", "DashboardLayer"):  # merged in one folder, as Lambda unpacks them into /opt
            shutil.copytree(build / layer / "python", shipped, dirs_exist_ok=True)
        shutil.copytree(shipped, stripped, ignore=shutil.ignore_patterns("__pycache__"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | {"AWS_DEFAULT_REGION": "us-east-1"}
        print(f"cold start: importing each handler, median of {runs} fresh processes (min-max)")
        print(f"  {'function':22} {'with bytecode':>22} {'without (before)':>22}  imports mcp")
        for function in sorted(p.parent for p in build.glob("*/app.py")):
            times: dict[Path, list[float]] = {shipped: [], stripped: []}
            mcp = False
            for _ in range(runs):
                for site in (shipped, stripped):
                    out = subprocess.run(["python3.11", "-S", "-E", "-B", "-c", IMPORT_TIME, str(function), str(site)],
                                         capture_output=True, text=True, env=env, cwd=scratch, check=True).stdout
                    seconds, imported = out.split()
                    times[site].append(float(seconds))
                    mcp = mcp or imported == "True"
            shown = {site: f"{statistics.median(t):.2f} s ({min(t):.2f}-{max(t):.2f})" for site, t in times.items()}
            print(f"  {function.name:22} {shown[shipped]:>22} {shown[stripped]:>22}  {'yes' if mcp else 'no'}")


def main() -> None:
    logging.getLogger("opensearch").setLevel(logging.WARNING)
    logging.getLogger("urllib3").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--captures", type=int, default=50)
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--cold-start", type=Path, metavar="BUILD", help="a sam build output: time the imports")
    parser.add_argument("--runs", type=int, default=5, help="with --cold-start: fresh processes per variant")
    args = parser.parse_args()
    if args.cold_start:
        bench_cold_start(args.cold_start.resolve(), args.runs)
        return
    node = None
    url = os.environ.get("OPENSEARCH_URL")
    if not url:
        from tests.support.opensearch_node import OpenSearchNode

        node = OpenSearchNode(Path(tempfile.mkdtemp(prefix="bench-opensearch-"))).start()
        url = node.url
    # No model latency in any figure: the fake embedder stands in for Bedrock or SageMaker, and the projector
    # is measured projecting only.
    capturing = FakeEmbedder(384)
    phases = [(lambda: bench_capture(args.captures, capturing), True, capturing),
              (bench_import, True, FakeEmbedder(384)), (lambda: bench_projector(args.records), False, None)]
    try:
        for run, inline, embedder in phases:
            environment(url, inline)
            composition.aws_embedder = lambda settings, clients, embedder=embedder: embedder
            with mock_aws():
                fresh_account()
                run()
    finally:
        if node:
            node.stop()


if __name__ == "__main__":
    main()
