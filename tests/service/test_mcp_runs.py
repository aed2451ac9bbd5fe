"""An app is built once and run many times (on Lambda, the MCP function keeps one per container and Mangum runs its
lifespan for every invocation): /mcp's tools are made once, and each run gets a session manager of its own, since
one runs only once."""

from fastapi.testclient import TestClient

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.entrypoints import mcp
from second_brain.entrypoints.api.app import create_app
from tests.support.brains import sqlite_brain

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
HEADERS = {"Authorization": "Bearer owner-token", "Accept": "application/json, text/event-stream"}


def test_one_app_serves_mcp_run_after_run_with_tools_made_once(tmp_path, clock, monkeypatch):
    made = []
    build_mcp = mcp.build_mcp
    monkeypatch.setattr(mcp, "build_mcp", lambda *args: made.append(args) or build_mcp(*args))
    brain = sqlite_brain(tmp_path, clock, FakeEmbedder())
    try:
        app = create_app(brain, "owner-token")
        for _ in range(3):
            with TestClient(app, base_url="http://127.0.0.1:8787") as client:  # one run: the lifespan, once
                answer = client.post("/mcp", json=LIST_TOOLS, headers=HEADERS)
                assert answer.status_code == 200, answer.text
                assert '"name":"remember"' in answer.text.replace(" ", "")
        assert len(made) == 1
    finally:
        brain.close()
