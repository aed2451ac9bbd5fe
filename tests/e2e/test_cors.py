"""CORS: only the configured origins (BRAIN_CORS_ORIGINS), else the service's own; preflights need no token."""

import httpx
import pytest

from .conftest import Server

ALLOWED = "https://notes.example.com"
REFUSED = "https://evil.example.net"


@pytest.fixture
def cors_server(tmp_path):
    server = Server(tmp_path / "brain", env={"BRAIN_CORS_ORIGINS": f"{ALLOWED}, http://localhost:3000"}).start()
    yield server
    server.stop()


def preflight(server: Server, origin: str) -> httpx.Response:
    return httpx.options(server.url + "/capture", headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})


def test_a_configured_origin_may_call_the_api(cors_server):
    answer = preflight(cors_server, ALLOWED)
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == ALLOWED
    assert "POST" in answer.headers["access-control-allow-methods"]
    with cors_server.client() as api:
        counted = api.get("/count", headers={"Origin": ALLOWED})
    assert counted.status_code == 200
    assert counted.headers["access-control-allow-origin"] == ALLOWED


def test_any_other_origin_is_refused_in_the_envelope(cors_server):
    answer = preflight(cors_server, REFUSED)
    assert (answer.status_code, answer.json()) == (400, {"ok": False, "error": "Disallowed CORS origin"})
    assert "access-control-allow-origin" not in answer.headers
    with cors_server.client() as api:
        counted = api.get("/count", headers={"Origin": REFUSED})
    assert "access-control-allow-origin" not in counted.headers  # the browser withholds the answer


def test_by_default_only_the_service_itself_is_allowed(server):
    assert preflight(server, server.url).headers["access-control-allow-origin"] == server.url
    assert preflight(server, "https://example.com").status_code == 400
    assert "*" not in httpx.get(server.url + "/", headers={"Origin": "https://example.com"}).headers.get(
        "access-control-allow-origin", "")
