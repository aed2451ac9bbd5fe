"""Writers on unrelated memories against the DynamoDB event log: appends a second and retries per append with 1, 8,
32 and 128 writers at once, the log as it was (one `$head` counter moved in every transaction) against the log as it
is (time-ordered positions, no shared item), side by side in one run.

Usage: .venv/bin/python bench/contention.py [--appends 1024] [--latency-ms 10] [--writers 1,8,32,128]

DynamoDB is moto, with what moto lacks put back: a network round trip (`--latency-ms` before and after each call,
outside any lock, so calls overlap as they do against the service) and serialisable transactions (moto's own are
not thread-safe, so each call runs under one lock: DynamoDB's work is instant, the waiting is the round trip's).
Each writer appends captures to memories of its own (a new stream per append: what capture does), `--appends`
in all per run; a recall's count is an append of the same kind. The old log is read from git (`--before`, the
commit before issue 46's item 1). Each figure: appends/s, transactions cancelled per append, and appends refused
("the event log is too busy").
"""

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
from botocore.exceptions import ClientError
from moto import mock_aws

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from second_brain.adapters.event_store.dynamodb import DynamoDBEventStore, table_definition  # noqa: E402
from second_brain.domain.errors import StoreUnavailable  # noqa: E402
from second_brain.domain.events import Envelope, MemoryCaptured  # noqa: E402

BEFORE = "c962b10"  # the log with its `$head` counter
MODULE = "src/second_brain/adapters/event_store/dynamodb.py"


class Network:
    """A DynamoDB client whose every call waits a round trip and runs alone in the fake; counts cancellations."""

    def __init__(self, client, latency_s: float) -> None:
        self.client, self.latency = client, latency_s
        self.lock = threading.Lock()
        self.calls = self.cancelled = 0

    def __getattr__(self, name: str):
        call = getattr(self.client, name)

        def remote(**kwargs):
            time.sleep(self.latency)  # the request on its way
            try:
                with self.lock:
                    self.calls += 1
                    return call(**kwargs)
            except ClientError as exc:
                if exc.response["Error"]["Code"] == "TransactionCanceledException":
                    with self.lock:
                        self.cancelled += 1
                raise
            finally:
                time.sleep(self.latency)  # the answer on its way back

        return remote


def old_store_class():
    """The event store as it was at BEFORE, imported from git under a module name of its own."""
    source = subprocess.run(["git", "show", f"{BEFORE}:{MODULE}"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout
    path = Path(tempfile.mkdtemp()) / "dynamodb_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("second_brain.adapters.event_store.dynamodb_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.DynamoDBEventStore


def capture(n: int) -> Envelope:
    text = f"Note {n}: the supplier for part {n % 97} changed to vendor {n % 13}, delivery on day {n % 28 + 1}"
    return Envelope(stream_id=f"memory-{uuid.uuid4()}", version=1,
                    event=MemoryCaptured(text, ("work",), "api", "personal-owner"), actor="owner",
                    workspace="personal-owner", request_id=f"req-{n}", at=int(time.time() * 1000))


def run(store_class, writers: int, appends: int, latency_s: float) -> dict[str, float]:
    with mock_aws():
        raw = boto3.client("dynamodb", region_name="us-east-1")
        raw.create_table(**table_definition("events"))
        network = Network(raw, latency_s)
        store = store_class(network, "events")
        refused = 0

        def write(n: int) -> None:
            nonlocal refused
            try:
                store.append([capture(n)])
            except StoreUnavailable:
                refused += 1

        start = time.perf_counter()
        with ThreadPoolExecutor(writers) as pool:
            list(pool.map(write, range(appends)))
        seconds = time.perf_counter() - start
        stored = len(store.read_all(0, appends + 10))
    return {"per_s": (appends - refused) / seconds, "cancelled": network.cancelled / appends,
            "calls": network.calls / appends, "refused": refused, "stored": stored}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=1024)
    parser.add_argument("--latency-ms", type=float, default=10.0)
    parser.add_argument("--writers", default="1,8,32,128")
    args = parser.parse_args()
    logs = {"before ($head)": old_store_class(), "after (no shared item)": DynamoDBEventStore}
    print(f"{args.appends} appends per run, {args.latency_ms:g} ms each way per call\n")
    print(f"{'writers':>7}  {'log':<24}{'appends/s':>10}{'cancelled/append':>18}{'calls/append':>14}{'refused':>9}")
    for writers in map(int, args.writers.split(",")):
        for name, store_class in logs.items():
            figures = run(store_class, writers, args.appends, args.latency_ms / 1000)
            assert figures["stored"] == args.appends - figures["refused"], figures
            print(f"{writers:>7}  {name:<24}{figures['per_s']:>10.1f}{figures['cancelled']:>18.2f}"
                  f"{figures['calls']:>14.2f}{figures['refused']:>9}", flush=True)


if __name__ == "__main__":
    main()
