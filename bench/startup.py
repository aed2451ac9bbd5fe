"""Launch to first answer, as a user (or an MCP client that starts the brain per session) waits for it.

Usage: .venv/bin/python bench/startup.py [--runs 10] [--notes 300] [--vs /path/to/other/checkout/src]

- `brain serve`: from starting the process to the first `GET /count` answered 200, and to the first `GET /recall`
  answered 200 (a new connection polls every 20 ms).
- `brain mcp` over stdio, through the `mcp` package's own client: from starting the process to the answer of
  `tools/list` (after the initialize handshake), and to the answer of a first `recall`.

A first recall that came while the model was still loading answers by keywords and says so
(`semantic_unavailable`); the bench counts how many first recalls searched by meaning too.

Each run launches a fresh process on the same brain (made once, with `--notes` distinct memories and their
vectors), recalls a different query each time, and prints the median, minimum and maximum of `--runs` runs.
With `--vs SRC`, the same runs are made alternately with PYTHONPATH=SRC (another checkout's code, the same venv),
so the two are compared side by side under the same machine noise.
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters

BRAIN = [sys.executable, "-m", "second_brain.entrypoints.cli"]
TOKEN = "startup-bench-token"
TOPICS = ["dentist appointment", "pricing floor", "quarterly planning", "kids' school trip", "server migration",
          "book club", "tax return", "garden watering", "team offsite", "car insurance", "passport renewal",
          "marathon training", "database backup", "birthday dinner", "conference talk", "rent increase"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def environment(src: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    env |= {"BRAIN_AUTH_TOKEN": TOKEN, "BRAIN_MAINTENANCE_AT": "off"}
    if src:
        env["PYTHONPATH"] = src
    return env


def make_brain(data_dir: Path, notes: int) -> None:
    """A brain of `notes` distinct memories, embedded, so recall has real work at the first question."""
    port = free_port()
    process = subprocess.Popen([*BRAIN, "serve", "--port", str(port), "--data-dir", str(data_dir)],
                               env=environment(None), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        api = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {TOKEN}"},
                           timeout=60)
        wait_for(lambda: api.get("/count").status_code == 200, 60)
        for n in range(notes):
            topic = TOPICS[n % len(TOPICS)]
            api.post("/capture", json={"content": f"Note {n} about the {topic}: decision {n * 7 % 101} made "
                                                  f"on day {n % 28 + 1}, owner number {n}."})
        while api.post("/vectorize-pending", params={"limit": 500}).json().get("remaining", 0):
            pass
    finally:
        process.terminate()
        process.wait(timeout=30)


def wait_for(ready, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if ready():
                return
        except httpx.TransportError:
            pass
        time.sleep(0.02)
    raise TimeoutError("no answer")


def serve_once(data_dir: Path, src: str | None, query: str) -> tuple[float, float, bool]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    started = time.perf_counter()
    process = subprocess.Popen([*BRAIN, "serve", "--port", str(port), "--data-dir", str(data_dir)],
                               env=environment(src), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: httpx.get(url + "/count", headers=headers, timeout=5).status_code == 200, 60)
        counted = time.perf_counter() - started
        recalled = httpx.get(url + "/recall", params={"query": query}, headers=headers, timeout=60)
        assert recalled.status_code == 200, recalled.text
        return counted, time.perf_counter() - started, not recalled.json()["semantic_unavailable"]
    finally:
        process.terminate()
        process.wait(timeout=30)


def mcp_once(data_dir: Path, src: str | None, query: str) -> tuple[float, float, bool]:
    params = StdioServerParameters(command=BRAIN[0], args=[*BRAIN[1:], "mcp", "--data-dir", str(data_dir)],
                                   env=environment(src))

    async def session() -> tuple[float, float, bool]:
        started = time.perf_counter()
        async with Client(params, read_timeout_seconds=60) as client:
            assert (await client.list_tools()).tools
            listed = time.perf_counter() - started
            result = await client.call_tool("recall", {"query": query})
            assert not result.is_error, result
            text = " ".join(getattr(part, "text", "") for part in result.content)
            return listed, time.perf_counter() - started, "semantic search is unavailable" not in text and \
                "still loading" not in text

    return anyio.run(session)


def summary(label: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"{label:<34} median {statistics.median(ms):7.0f} ms   min {min(ms):7.0f}   max {max(ms):7.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--vs", help="another checkout's src directory, run alternately with this one")
    args = parser.parse_args()
    variants = [("this", None)] + ([("vs", args.vs)] if args.vs else [])
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "brain"
        make_brain(data_dir, args.notes)
        results: dict[str, dict[str, list[float]]] = {name: {} for name, _ in variants}
        semantic = {name: [0, 0] for name, _ in variants}  # first recalls answered with the model (serve, mcp)
        for run in range(args.runs):
            for name, src in variants:
                query = f"{TOPICS[run % len(TOPICS)]} decision"
                counted, recalled, serve_meaning = serve_once(data_dir, src, query)
                listed, mcp_recalled, mcp_meaning = mcp_once(data_dir, src, TOPICS[(run + 5) % len(TOPICS)])
                for key, value in (("serve: launch to GET /count", counted),
                                   ("serve: launch to first recall", recalled),
                                   ("mcp: launch to tools/list", listed),
                                   ("mcp: launch to first recall", mcp_recalled)):
                    results[name].setdefault(key, []).append(value)
                semantic[name][0] += serve_meaning
                semantic[name][1] += mcp_meaning
        print(f"{args.runs} runs, a brain of {args.notes} memories, {os.cpu_count()} cores")
        for name, src in variants:
            print(f"\n{name}{f' ({src})' if src else ''}:")
            for key, values in results[name].items():
                print(summary(key, values))
            print(f"first recalls that searched by meaning too: serve {semantic[name][0]}/{args.runs}, "
                  f"mcp {semantic[name][1]}/{args.runs} (the others by keywords while the model loaded)")


if __name__ == "__main__":
    main()
