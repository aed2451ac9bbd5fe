"""Capture latency (p50/p95/p99) and throughput over HTTP against a real `brain serve` process.

Usage: .venv/bin/python bench/capture.py [--sequential 500] [--threads 8] [--per-thread 250]
Runs once per SQLite synchronous mode (FULL is the default; NORMAL survives crashes but not power loss),
side by side in one run, each on a fresh data directory.
"""

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.e2e.conftest import Server


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def note(n: int) -> dict:
    return {"content": f"Benchmark note {n}: decided to ship build {n} after the review. #bench", "tags": ["work"]}


def measure(mode: str, sequential: int, threads: int, per_thread: int, where: str | None) -> dict:
    os.environ["BRAIN_SQLITE_SYNCHRONOUS"] = mode
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        server = Server(Path(tmp) / "brain", in_process=False).start()
        try:
            with server.client() as api:
                for n in range(20):  # warm up connections and SQLite caches
                    api.post("/capture", json=note(-n))
                latencies = []
                for n in range(sequential):
                    started = time.perf_counter()
                    response = api.post("/capture", json=note(n))
                    latencies.append((time.perf_counter() - started) * 1000)
                    assert response.status_code == 200, response.text

            def worker(t: int) -> int:
                with server.client() as client:
                    return sum(client.post("/capture", json=note(t * per_thread + n)).status_code == 200
                               for n in range(per_thread))

            started = time.perf_counter()
            with ThreadPoolExecutor(threads) as pool:
                ok = sum(pool.map(worker, range(threads)))
            elapsed = time.perf_counter() - started
        finally:
            server.stop()
            os.environ.pop("BRAIN_SQLITE_SYNCHRONOUS", None)
    return {
        "mode": mode, "p50": statistics.median(latencies), "p95": percentile(latencies, 95),
        "p99": percentile(latencies, 99), "throughput": ok / elapsed, "ok": ok, "total": threads * per_thread,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequential", type=int, default=500)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--per-thread", type=int, default=250)
    parser.add_argument("--dir", default="bench/results", help="where the data directories go (its disk is measured)")
    args = parser.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}, "
          f"SQLite {__import__('sqlite3').sqlite_version}")
    Path(args.dir).mkdir(parents=True, exist_ok=True)
    print(f"data on: {Path(args.dir).resolve()}")
    print(f"sequential captures: {args.sequential}; concurrent: {args.threads} threads x {args.per_thread}")
    print(f"{'synchronous':<12} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'captures/s':>11} {'stored':>11}")
    for mode in ("FULL", "NORMAL"):
        r = measure(mode, args.sequential, args.threads, args.per_thread, args.dir)
        print(f"{r['mode']:<12} {r['p50']:>8.2f} {r['p95']:>8.2f} {r['p99']:>8.2f} {r['throughput']:>11.0f} "
              f"{r['ok']:>5}/{r['total']:<5}")


if __name__ == "__main__":
    main()
