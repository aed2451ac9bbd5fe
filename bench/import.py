"""Restoring a large backup over HTTP: how long POST /import takes, and how long until it is all searchable.

Builds a version-3 export of N synthetic memories (with edges and a project), starts a real `brain serve`,
pages the payload through POST /import as a client would (each page carrying only its slice, which the
contract allows), then measures:

- import time (every memory stored and keyword-searchable: the keyword index is written in the same
  transaction);
- time until fully searchable (the background indexer has embedded every memory: semantic recall too);
- that a rare word of the last memory is found, and that a second run imports nothing.

Usage: .venv/bin/python bench/import.py [--memories 20000] [--page 1000]
"""

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from scale import note  # noqa: E402

from tests.e2e.conftest import Server  # noqa: E402


def backup(count: int) -> dict:
    rng = random.Random(7)
    start = 1_700_000_000_000
    entries = [{"id": f"bench-{n:06d}", "content": note(rng, n, rare=False), "tags": ["bench", "project:restore"],
                "source": "api", "created_at": start + n * 60_000, "updated_at": start + n * 60_000}
               for n in range(count)]
    entries[-1]["content"] += " zygomorphic"
    edges = [{"source_id": f"bench-{n:06d}", "target_id": f"bench-{n + 1:06d}", "type": "caused_by", "weight": 1,
              "provenance": "explicit", "created_at": start + n * 60_000}
             for n in range(0, count - 1, 10)]
    projects = [{"id": "restore", "name": "Restore", "description": "", "aliases": [], "status": "active"}]
    return {"version": 3, "entries": entries, "edges": edges, "projects": projects}


def page_through(api, payload: dict, page: int) -> dict[str, int]:
    totals: dict[str, int] = {}
    offset = edge_offset = 0
    while True:
        # Send the page's slice only: offsets restart at 0 within it, and the totals move on by its size.
        if offset < len(payload["entries"]):
            body = {"entries": payload["entries"][offset : offset + page],
                    "projects": payload["projects"] if offset == 0 else []}
        else:
            body = {"entries": [], "edges": payload["edges"][edge_offset : edge_offset + page]}
        response = api.post("/import", params={"limit": page}, json=body)
        response.raise_for_status()
        result = response.json()
        for key, value in result.items():
            if key.endswith(("imported", "skipped", "failed")):
                totals[key] = totals.get(key, 0) + value
        if offset < len(payload["entries"]):
            offset += result["next_offset"]
        else:
            edge_offset += result["next_edge_offset"]
        if offset >= len(payload["entries"]) and edge_offset >= len(payload["edges"]):
            return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--page", type=int, default=1000)
    args = parser.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}")
    payload = backup(args.memories)
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "brain", in_process=False).start()
        try:
            with server.client() as api:
                api.timeout = 600
                started = time.perf_counter()
                totals = page_through(api, payload, args.page)
                imported = time.perf_counter() - started
                found = api.get("/recall", params={"query": "zygomorphic"}).json()["results"]
                assert found and found[0]["id"] == f"bench-{args.memories - 1:06d}", found
                while api.post("/vectorize-pending", params={"limit": 1}).json()["remaining"]:
                    time.sleep(0.5)  # the background worker does the embedding; this only asks how far it got
                searchable = time.perf_counter() - started
                again = page_through(api, payload, args.page)
        finally:
            server.stop()
    print(f"{args.memories} memories, {len(payload['edges'])} edges, pages of {args.page}")
    print(f"import (stored, keyword-searchable): {imported:.1f} s ({args.memories / imported:.0f} memories/s)")
    print(f"fully searchable (embedded):         {searchable:.1f} s")
    print(f"counters: {totals}")
    print(f"second run: imported {again['imported']}, skipped {again['skipped']}, "
          f"edges skipped {again['edges_skipped']}")


if __name__ == "__main__":
    main()
