"""CORS, as the reference has it: any origin may call the REST API (`*`, no credentials; GET, POST, OPTIONS),
preflights need no token; BRAIN_CORS_ORIGINS narrows the origins; /mcp keeps its own Origin check."""

import httpx
import pytest

from .conftest import Server

ALLOWED = "https://notes.example.com"
ELSEWHERE = "https://evil.example.net"


@pytest.fixture
def narrowed(tmp_path):
    server = Server(tmp_path / "brain", env={"BRAIN_CORS_ORIGINS": f"{ALLOWED}, http://localhost:3000"}).start()
    yield server
    server.stop()


def preflight(server: Server, origin: str, method: str = "POST") -> httpx.Response:
    return httpx.options(server.url + "/capture", headers={
        "Origin": origin, "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": "authorization, content-type"})


def test_by_default_any_origin_may_call_the_api_without_credentials(server):
    for origin in (ELSEWHERE, "http://localhost:5173", server.url):
        answer = preflight(server, origin)  # no token: a browser sends none with a preflight
        assert answer.status_code == 200, answer.text
        assert answer.headers["access-control-allow-origin"] == "*"
        assert set(answer.headers["access-control-allow-methods"].split(", ")) == {"GET", "POST", "OPTIONS"}
        assert "access-control-allow-credentials" not in answer.headers
    with server.client() as api:
        counted = api.get("/count", headers={"Origin": ELSEWHERE})
        refused = httpx.get(server.url + "/count", headers={"Origin": ELSEWHERE})  # no token: still a 401
    assert counted.status_code == 200 and counted.headers["access-control-allow-origin"] == "*"
    assert "x-request-id" in counted.headers["access-control-expose-headers"].lower()
    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == "*"
    assert preflight(server, ELSEWHERE, "PATCH").status_code == 400  # the reference allows GET, POST, OPTIONS


def test_configured_origins_narrow_it_and_others_are_refused_in_the_envelope(narrowed):
    answer = preflight(narrowed, ALLOWED)
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == ALLOWED
    refused = preflight(narrowed, ELSEWHERE)
    assert (refused.status_code, refused.json()) == (400, {"ok": False, "error": "Disallowed CORS origin"})
    assert "access-control-allow-origin" not in refused.headers
    with narrowed.client() as api:
        counted = api.get("/count", headers={"Origin": ELSEWHERE})
    assert "access-control-allow-origin" not in counted.headers  # the browser withholds the answer


def test_mcp_keeps_its_own_origin_check(server):
    answer = httpx.post(server.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                        headers={"Origin": ELSEWHERE, "Authorization": f"Bearer {server.token}",
                                 "Accept": "application/json, text/event-stream"})
    assert answer.status_code == 403, answer.text
