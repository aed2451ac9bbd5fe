"""GET /brief (and GET /graph) on a large brain as the dashboard meets them: `brain serve`, asked over HTTP.

Usage: .venv/bin/python bench/brief.py --brain bench/results/scale-1796135278 [--repeat 200] [--recent 20000]
       .venv/bin/python bench/brief.py --fresh 100000 [--embedder none]

--brain: the brain is copied first (to --work, default a temporary directory), so the original stays as it was; a
brain written before the brief's kept counts gets them when it is opened, and the time that takes is printed. With
--recent N, N notes dated over the last 14 days (ten sources, topic tags, some old important ones, a few patterns
and stale ones) are imported over HTTP first, so every window the brief reads is full.
--fresh N: a new brain of N such notes, all within the last 14 days (the worst case for the windows).
The server embeds what was imported before the timing starts (unless --embedder none). Then GET /brief, GET /graph
and GET /stats are each asked --repeat times, one fresh connection per request: p50 / p95.
"""

import argparse
import json
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scale import Client, note, timed  # noqa: E402  (after the path is set)
from second_brain.adapters.read_model.sqlite_projection import SQLiteEntryProjection  # noqa: E402  (after the path is set)
from tests.e2e.conftest import Server  # noqa: E402  (after the path is set)

DAY_MS = 86_400_000
SOURCES = ["claude-desktop", "email-gmail", "api", "slack", "notion", "cursor-session", "codex-session", "web",
           "mobile", "calendar"]
TOPICS = ["signpath", "pricing", "hiring", "billing", "roadmap", "infra", "legal", "design", "sales", "support"]


def backfill(data_dir: Path) -> float:
    """Open the copy's entries projection as the server will, timing the one-off fill of the brief's tables."""
    with sqlite3.connect(data_dir / "brain.sqlite3", isolation_level=None) as conn:
        conn.row_factory = sqlite3.Row
        started = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        SQLiteEntryProjection().create(conn)
        conn.execute("COMMIT")
        return time.perf_counter() - started


def recent_notes(count: int, now: int) -> list[dict]:
    rng = random.Random(17)
    entries = []
    for n in range(count):
        tags = [rng.choice(TOPICS), rng.choice(TOPICS)]
        created = now - rng.randrange(14 * DAY_MS)
        importance = 0
        if n % 500 == 0:
            tags.append("auto-insight")
        elif n % 97 == 0:
            tags.append("stale:as-of")
        if n % 50 == 1:  # an important one, old enough to resurface
            created, importance = now - rng.randrange(31 * DAY_MS, 400 * DAY_MS), 5
        entries.append({"id": f"recent-{n}", "content": note(rng, n, rare=False), "tags": tags,
                        "source": SOURCES[n % len(SOURCES)], "created_at": created, "importance_score": importance})
    return entries


def import_entries(client: Client, entries: list[dict]) -> float:
    started = time.perf_counter()
    for start in range(0, len(entries), 5000):  # a payload of its own per 5,000, paged by 1,000
        body = json.dumps({"version": 3, "entries": entries[start : start + 5000]}).encode()
        offset = 0
        while True:
            _, report = client.call("POST", "/import", {"limit": 1000, "offset": offset}, body)
            if report["failed"]:
                raise RuntimeError(f"import failed: {report['results'][:3]}")
            offset = report["next_offset"]
            if not report["remaining_entries"]:
                break
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brain", type=Path, help="a brain directory to copy and serve")
    parser.add_argument("--fresh", type=int, default=0, help="a new brain of this many recent notes instead")
    parser.add_argument("--recent", type=int, default=0, help="recent notes imported before timing")
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--embedder", default=None, help="BRAIN_EMBEDDER for the server (e.g. none)")
    parser.add_argument("--work", type=Path, default=None, help="where the copy goes (default: a temporary dir)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="brief-bench-"))
    data_dir = work / "brain"
    if args.brain:
        started = time.perf_counter()
        shutil.copytree(args.brain, data_dir)
        print(f"copied {args.brain} in {time.perf_counter() - started:.1f} s", flush=True)
        print(f"brief tables filled from the existing rows in {backfill(data_dir):.2f} s", flush=True)
    env = {"BRAIN_EMBEDDER": args.embedder} if args.embedder else {}
    server = Server(data_dir, env=env, in_process=False).start()
    try:
        client = Client(server)
        extra = args.fresh or args.recent
        if extra:
            took = import_entries(client, recent_notes(extra, int(time.time() * 1000)))
            print(f"imported {extra} recent notes in {took:.0f} s", flush=True)
            if not args.embedder:
                started = time.perf_counter()
                while client.call("GET", "/stats")[1]["unvectorized"]:
                    time.sleep(2)
                print(f"embedded by the server in {time.perf_counter() - started:.0f} s", flush=True)
        total = client.call("GET", "/count")[1]["count"]
        print(f"\n{total} memories; one fresh connection per request, {args.repeat} requests each")
        for path, params in (("/brief", None), ("/graph", None), ("/graph", {"limit": 500}), ("/stats", None)):
            p50, p95, data = timed(client, path, params, args.repeat)
            shown = f"  captured {data['captured']}, {len(data['sources'])} sources" if path == "/brief" else ""
            label = path + (f"?limit={params['limit']}" if params else "")
            print(f"  GET {label:<16} p50 {p50:6.1f} ms  p95 {p95:6.1f} ms{shown}", flush=True)
    finally:
        server.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
