"""A full nightly maintenance run on a big brain, through HTTP, with recalls asked all the while.

Usage: .venv/bin/python bench/maintenance.py DIR [--repeat 50] [--in-place]

DIR is a brain a bench left behind (e.g. bench/results/scale-… from bench/scale.py, 100k memories); it is copied
to a temporary directory first (the run changes it) unless --in-place. One `brain serve` runs on it. First each
recall query of bench/scale.py is asked --repeat times on the idle server (one fresh connection per request), and
GET /brief likewise; then `POST /maintenance/run` starts every nightly job while another client keeps asking the
same recalls, one after another, until the run answers. Printed: each job's time and counts (from the run's own
summaries), and recall p50 / p95 idle and during the run, side by side.
"""

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scale import QUERIES, Client, rss_mb, timed  # noqa: E402
from tests.e2e.conftest import Server  # noqa: E402


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--in-place", action="store_true")
    args = parser.parse_args()
    data_dir = args.dir
    scratch = None
    if not args.in_place:
        scratch = Path(tempfile.mkdtemp(prefix="bench-maintenance-"))
        data_dir = scratch / args.dir.name
        started = time.perf_counter()
        shutil.copytree(args.dir, data_dir)
        print(f"copied {args.dir} in {time.perf_counter() - started:.0f} s", flush=True)
    started = time.perf_counter()
    server = Server(data_dir, in_process=False).start()
    try:
        client = Client(server)
        print(f"served in {time.perf_counter() - started:.0f} s; {client.call('GET', '/count')[1]['count']} "
              f"memories; RSS {rss_mb(server.process.pid)[0]:.0f} MB", flush=True)
        idle = {}
        for name, text in QUERIES.items():
            p50, p95, _ = timed(client, "/recall", {"query": text, "topK": 10}, args.repeat)
            idle[name] = (p50, p95)
        brief = timed(client, "/brief", None, args.repeat)
        print(f"GET /brief idle: p50 {brief[0]:.1f} ms  p95 {brief[1]:.1f} ms", flush=True)

        answer: dict = {}

        def nightly() -> None:
            answer["took"], answer["body"] = client.call("POST", "/maintenance/run")

        runner = threading.Thread(target=nightly)
        runner.start()
        during: dict[str, list[float]] = {name: [] for name in QUERIES}
        while runner.is_alive():
            for name, text in QUERIES.items():
                during[name].append(client.call("GET", "/recall", {"query": text, "topK": 10})[0])
        runner.join()
        runs = answer["body"]["runs"]
        print(f"\nnightly run over HTTP: {answer['took'] / 1000:.1f} s; RSS after "
              f"{rss_mb(server.process.pid)[0]:.0f} MB (peak {rss_mb(server.process.pid)[1]:.0f})")
        for run in runs:
            if "skipped" in run:
                print(f"  {run['job']:<13} skipped: {run['skipped']}")
                continue
            seconds = (run["finished_at"] - run["started_at"]) / 1000
            more = "" if run["complete"] else "  (more left for the next run)"
            errors = f"  errors: {run['errors']}" if run["errors"] else ""
            print(f"  {run['job']:<13} {seconds:7.1f} s  {json.dumps(run['counts'])}{more}{errors}")
        print("\nrecall p50 / p95 ms: idle | during the nightly run (n during)")
        for name in QUERIES:
            p50, p95 = percentiles(during[name])
            print(f"  {name:<13} {idle[name][0]:6.1f} / {idle[name][1]:6.1f} | {p50:6.1f} / {p95:6.1f}  "
                  f"(n={len(during[name])})")
    finally:
        server.stop()
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
