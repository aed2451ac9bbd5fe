"""Starting fast without answering wrong: the embedding model loads on a thread while the brain serves (recall by
keywords meanwhile, saying so; a capture waits for the duplicate check), and the REST API starts without the `mcp`
package, which /mcp and the OAuth routes import when they are first made."""

import contextlib
import subprocess
import sys
import threading
from collections.abc import AsyncIterator

import httpx
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.routing import Route

from second_brain.adapters.embedder.background import BackgroundEmbedder
from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.entrypoints.api.app import McpEndpoint, create_app
from tests.support.brains import sqlite_brain


class Gate:
    """A model load held until the test opens the gate (or made to fail)."""

    def __init__(self, fail: bool = False) -> None:
        self.open = threading.Event()
        self.fail = fail

    def load(self) -> FakeEmbedder:
        self.open.wait(10)
        if self.fail:
            raise RuntimeError("the model file is damaged")
        return FakeEmbedder()


def loading(gate: Gate) -> BackgroundEmbedder:
    model = FakeEmbedder()
    return BackgroundEmbedder(gate.load, model.model_id, model.dimension, model.query_floor)


def test_recall_answers_by_keywords_while_the_model_loads_and_by_meaning_after(tmp_path, clock, ctx):
    gate = Gate()
    brain = sqlite_brain(tmp_path, clock, loading(gate))
    try:
        captured: list[str] = []
        writer = threading.Thread(target=lambda: captured.append(
            ops.capture(brain, ctx, "The quarterly revenue review is on Thursday")["id"]))
        writer.start()
        writer.join(0.3)
        assert writer.is_alive()  # the duplicate check waits for the model: a repeat is never let through
        gate.open.set()
        writer.join(10)
        held = BackgroundEmbedder(Gate().load, "fake-hash-v1", 64, 0.3)  # a second load, never let through
        brain.recall.embedder = held
        early = ops.recall(brain, ctx, "revenue review")
        assert early["semantic_unavailable"] is True and [r["id"] for r in early["results"]] == captured
        missing = ops.recall(brain, ctx, "zeppelin")
        assert missing["message"].startswith("Nothing found matching that query. The embedding model is still "
                                             "loading")
        brain.recall.embedder = brain.indexer.embedder
        brain.indexer.run_once(10)
        later = ops.recall(brain, ctx, "revenue review")
        assert later["semantic_unavailable"] is False and [r["id"] for r in later["results"]] == captured
    finally:
        gate.open.set()
        brain.close()


def test_a_model_that_fails_to_load_leaves_recall_on_keywords_and_captures_stored(tmp_path, clock, ctx):
    gate = Gate(fail=True)
    gate.open.set()
    embedder = loading(gate)
    assert embedder.wait(10) is False and embedder.ready is False
    brain = sqlite_brain(tmp_path, clock, embedder)
    try:
        stored = ops.capture(brain, ctx, "Passport renewal is due in March")
        assert stored["ok"] is True
        found = ops.recall(brain, ctx, "passport renewal")
        assert found["semantic_unavailable"] is True and [r["id"] for r in found["results"]] == [stored["id"]]
        nothing = ops.recall(brain, ctx, "zeppelin")  # not "still loading": it never will
        assert nothing["semantic_unavailable"] is True and "Semantic search is unavailable" in nothing["message"]
    finally:
        brain.close()


def test_the_rest_api_starts_without_the_mcp_package():
    probe = ("import sys; import second_brain.entrypoints.api.app, second_brain.entrypoints.cli; "
             "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))))")
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "[]"


def test_mcp_answers_once_made(tmp_path, clock):
    brain = sqlite_brain(tmp_path, clock, FakeEmbedder())
    try:
        with TestClient(create_app(brain, "owner-token"), base_url="http://127.0.0.1:8787") as client:
            answer = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                                 headers={"Authorization": "Bearer owner-token",
                                          "Accept": "application/json, text/event-stream"})
            assert answer.status_code == 200, answer.text
            assert '"name":"remember"' in answer.text.replace(" ", "")
    finally:
        brain.close()


def endpoint_app(endpoint: McpEndpoint) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with endpoint.running():
            yield

    return Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])], lifespan=lifespan)


def test_a_request_that_comes_before_the_server_is_made_waits_for_it():
    made = threading.Event()

    def make() -> object:
        made.wait(10)
        raise ImportError("the mcp package is not installed")

    with TestClient(endpoint_app(McpEndpoint(make))) as client:
        answers: list[httpx.Response] = []
        asking = threading.Thread(target=lambda: answers.append(client.post("/mcp", json={})))
        asking.start()
        asking.join(0.3)
        assert asking.is_alive() and not answers  # waiting, not refused
        made.set()
        asking.join(10)
    assert (answers[0].status_code, answers[0].json()) == (
        503, {"ok": False, "error": "The MCP endpoint is unavailable: see the server log"})
