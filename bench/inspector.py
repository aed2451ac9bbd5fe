"""The MCP server as a client nobody here wrote sees it: the official MCP Inspector CLI lists the tools and calls every
one of them, over streamable HTTP (with a token) and over stdio (`brain mcp`), and recall's latency over MCP is
printed beside REST's.

Usage: .venv/bin/python bench/inspector.py [--calls 50]

The Inspector (@modelcontextprotocol/inspector 2.12.0) needs Node >= 22, which npm's `node` package provides: both
are installed from the npm registry into ~/.cache/second-brain/mcp-inspector on the first run (nothing else is
downloaded). A fresh brain is served by `brain serve` (the packaged model); each tool is called once over each
transport with arguments a first-time agent would send, and the script fails (exit 1) on any tool answering an
error it should not, or any description an agent would read badly (indentation, another parameter's text).

Latency: --calls distinct recall queries each, over one MCP session (the `mcp` Python SDK's client over streamable
HTTP, as an agent keeps its session) and over REST (GET /recall, a fresh connection each), interleaved.
"""

import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from tests.e2e.conftest import BRAIN, TOKEN, Server  # noqa: E402

HOME = Path.home() / ".cache/second-brain/mcp-inspector"
PACKAGES = ["node@22", "@modelcontextprotocol/inspector@2.12.0"]
TOOLS = ["remember", "append", "update", "set_status", "recall", "list_recent", "get", "link", "connections",
         "unlink", "timeline", "conflicts", "answer_conflict", "list_teams", "list_projects", "share", "forget",
         "due", "snooze", "clear_reminder"]
TOPICS = ["pricing floor", "hiring plan", "offsite venue", "backup schedule", "design review", "quarterly budget",
          "security audit", "customer churn", "release train", "onboarding checklist"]


def inspector() -> list[str]:
    """The Inspector CLI's command line, installed on first use."""
    binary = HOME / "node_modules/.bin"
    if not (binary / "mcp-inspector").exists():
        HOME.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(HOME), "--no-audit", "--no-fund", *PACKAGES], check=True,
                       stdout=subprocess.DEVNULL)
    return [str(binary / "node"), str(binary / "mcp-inspector"), "--cli"]


class Inspector:
    """Runs the Inspector CLI against one target: `options` name a URL and its header; `after` is a stdio server's
    command line, given after `--` (its list options take every word up to the next option)."""

    def __init__(self, env: dict[str, str], options: list[str] = (), after: list[str] = ()) -> None:  # type: ignore[assignment]
        self.options, self.after, self.env = list(options), list(after), env
        self.command = inspector()

    def run(self, method: str, *args: str) -> dict:
        tail = ["--", *self.after] if self.after else []
        done = subprocess.run([*self.command, *self.options, "--method", method, *args, *tail], capture_output=True,
                              text=True, timeout=120, env=self.env)
        if done.returncode != 0:
            said = done.stderr.strip() or done.stdout.strip()
            if '"tool_is_error"' in said:  # the CLI exits 1 on a tool's error answer, and keeps only its own line
                return {"isError": True, "content": [{"text": said}]}
            raise RuntimeError(f"{method} {args}: {said}")
        return json.loads(done.stdout)

    def tool(self, name: str, **arguments: object) -> tuple[bool, str]:
        pairs = [f"{key}={value if isinstance(value, str) else json.dumps(value)}" for key, value in arguments.items()]
        answer = self.run("tools/call", "--tool-name", name, *(arg for pair in pairs for arg in ("--tool-arg", pair)))
        return bool(answer.get("isError")), answer["content"][0]["text"]


def description_problems(tools: list[dict]) -> list[str]:
    problems = []
    for tool in tools:
        if re.search(r"\n[ \t]", tool["description"]) or tool["description"] != tool["description"].strip():
            problems.append(f"{tool['name']}: its description is indented")
        texts = [prop.get("description", "") for prop in tool["inputSchema"]["properties"].values()]
        if len(set(texts)) != len(texts):
            problems.append(f"{tool['name']}: two parameters share one description")
        if not tool.get("annotations"):
            problems.append(f"{tool['name']}: no annotations")
    return problems


def exercise(client: Inspector, label: str) -> list[str]:
    """List the tools, then call each once as an agent would; what went wrong, as lines."""
    tools = client.run("tools/list")["tools"]
    listed = json.dumps(tools)
    print(f"  {label:5} tools/list: {len(tools)} tools, {len(listed):,} characters "
          f"({sum('outputSchema' in t for t in tools)} with an outputSchema)")
    problems = description_problems(tools)
    if sorted(t["name"] for t in tools) != sorted(TOOLS):
        problems.append(f"tools listed: {sorted(t['name'] for t in tools)}")
    results: dict[str, tuple[bool, str]] = {}

    def call(name: str, **arguments: object) -> str:
        results[name] = client.tool(name, **arguments)
        return results[name][1]

    first = json.loads(call("remember", content=f"Dana is allergic to peanuts ({label})", tags=["people"]))["id"]
    second = json.loads(client.tool("remember", content=f"The offsite is in Lisbon in May ({label})")[1])["id"]
    call("append", id=second, addition="Hotel booked near the river", when="2031-05-12", when_kind="event")
    call("due", days=366)
    call("snooze", id=second, until="in 3 days")
    call("clear_reminder", id=second)
    call("update", id=second, content=f"The offsite is in Porto in May ({label})", tags=["offsite"])
    call("set_status", id=second, status="canonical")
    call("recall", query="where is the offsite", topK=3)
    call("list_recent", n=5)
    call("get", id=second)
    call("link", source_id=second, target_id=first, type="relates_to")
    call("connections", id=second)
    call("unlink", source_id=second, target_id=first)
    call("timeline", limit=10)
    conflicts = json.loads(call("conflicts", limit=5))
    pending = [c["conflict"] for c in conflicts.get("conflicts", [])]
    if pending:
        call("answer_conflict", conflict=pending[0], keep="both")
    else:  # none waiting (over stdio each call is a new process: remember ran before the model had loaded)
        failed, text = client.tool("answer_conflict", conflict=f"{first}@1", keep="both")
        results["answer_conflict"] = (not failed, f"refused, as it should be: {text}")
    call("list_teams")
    call("list_projects")
    call("share", id=second, workspace="personal")
    call("forget", id=first)
    for name in TOOLS:
        failed, text = results.get(name, (True, "never called"))
        print(f"  {label:5} {name:16} {'ERROR ' if failed else 'ok    '} {text[:90]!r}")
        if failed:
            problems.append(f"{label} {name}: {text[:200]}")
    resources = client.run("resources/templates/list").get("resourceTemplates", [])
    prompts = [p["name"] for p in client.run("prompts/list").get("prompts", [])]
    print(f"  {label:5} resource templates {[r['uriTemplate'] for r in resources]}, prompts {prompts}")
    return problems


def latency(server: Server, calls: int) -> tuple[list[float], list[float]]:
    queries = [f"{topic} {n}" for n in range(calls // len(TOPICS) + 1) for topic in TOPICS][:calls]
    rest: list[float] = []

    def over_rest(query: str) -> None:
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", server.port)
        connection.request("GET", "/recall?" + urlencode({"query": query}),
                           headers={"Authorization": f"Bearer {TOKEN}"})
        assert connection.getresponse().read()
        connection.close()
        rest.append((time.perf_counter() - started) * 1000)

    async def session() -> list[float]:
        spent = []
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
            await client.list_tools()
            for query in queries:
                started = time.perf_counter()
                assert not (await client.call_tool("recall", {"query": f"the {query}"})).is_error
                spent.append((time.perf_counter() - started) * 1000)
                over_rest(query)
        return spent

    return anyio.run(session), rest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="inspector-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")} | {"BRAIN_MAINTENANCE_AT": "off"}
    problems: list[str] = []
    server = Server(data / "http", in_process=False).start()
    try:
        with server.client() as api:
            for n, topic in enumerate(TOPICS * 3):
                api.post("/capture", json={"content": f"Notes on the {topic}, round {n}: decided to revisit in June"})
        print("over streamable HTTP, with a bearer token:")
        options = ["--server-url", f"{server.url}/mcp", "--transport", "http",
                   "--header", f"Authorization: Bearer {TOKEN}"]
        problems += exercise(Inspector(env, options=options), "http")
        mcp, rest = latency(server, args.calls)
        print(f"recall, {args.calls} distinct queries each: MCP (one session) p50 {statistics.median(mcp):.1f} ms "
              f"p95 {sorted(mcp)[int(len(mcp) * 0.95) - 1]:.1f} ms | REST (fresh connection) p50 "
              f"{statistics.median(rest):.1f} ms p95 {sorted(rest)[int(len(rest) * 0.95) - 1]:.1f} ms")
    finally:
        server.stop()
    print("over stdio (brain mcp, a process per Inspector call):")
    stdio = Inspector(env, options=["-e", "BRAIN_MAINTENANCE_AT=off"],
                      after=[*BRAIN, "mcp", "--data-dir", str(data / "stdio")])
    problems += exercise(stdio, "stdio")
    shutil.rmtree(data, ignore_errors=True)
    print("\n".join(["problems:", *problems]) if problems else "every tool listed cleanly and answered, on both")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
