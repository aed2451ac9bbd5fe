"""Push reminders end to end: a real `brain serve` pushes to a push service on this machine, which decrypts each
message with the key its browser made (http_ece: not the brain's own code) and checks the VAPID signature
against GET /push/vapid-public-key (py_vapid). A push service on this machine is reachable only through the
test-only setting BRAIN_PUSH_ALLOW_LOOPBACK, which these servers are started with; without it, the brain refuses
it like any endpoint on its own network."""

import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid.jwt import decode as verify_jwt

from second_brain.domain.push import decode, encode

from .conftest import Server

ALLOW_LOOPBACK = {"BRAIN_PUSH_ALLOW_LOOPBACK": "1"}  # test-only: the push service below listens on 127.0.0.1
SECRET = "The spare key is under the blue flowerpot"


@dataclass
class Browser:
    """A device as a browser makes it when it subscribes: a P-256 key pair and a 16-byte auth secret."""

    endpoint: str
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    def subscription(self) -> dict:
        public = self.key.public_key().public_bytes(serialization.Encoding.X962,
                                                    serialization.PublicFormat.UncompressedPoint)
        return {"endpoint": self.endpoint, "expirationTime": None,
                "keys": {"p256dh": encode(public), "auth": encode(self.auth)}}

    def read(self, body: bytes) -> dict:
        return json.loads(http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"))


class PushService(ThreadingHTTPServer):
    """Takes messages as a browser vendor's push service does: 201, or the status set for a path (410: gone)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        self.status: dict[str, int] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def take(self) -> list[tuple[str, dict[str, str], bytes]]:
        taken, self.received = self.received, []
        return taken


class Handler(BaseHTTPRequestHandler):
    server: PushService

    def do_POST(self) -> None:  # the name http.server calls
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(self.server.status.get(self.path, 201))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server(tmp_path) -> Iterator[Server]:
    """conftest's server, started with the test-only setting that lets its push endpoints be on loopback."""
    server = Server(tmp_path / "brain", env=ALLOW_LOOPBACK).start()
    yield server
    if server.running:
        server.stop()


@pytest.fixture
def push_service() -> Iterator[PushService]:
    service = PushService()
    thread = threading.Thread(target=service.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield service
    service.shutdown()
    service.server_close()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def check_vapid(headers: dict[str, str], public_key: str, audience: str) -> None:
    scheme, params = headers["authorization"].split(" ", 1)
    fields = dict(part.strip().split("=", 1) for part in params.split(","))
    assert scheme == "vapid" and fields["k"] == public_key
    claims = verify_jwt(fields["t"], public_key)  # raises unless the brain's key signed it
    assert claims["aud"] == audience and claims["sub"].startswith("mailto:")
    assert headers["content-encoding"] == "aes128gcm" and int(headers["ttl"]) > 0


def test_due_reminders_reach_devices_encrypted_and_signed_once_per_anchor_time(api, server: Server, push_service):
    answer = api.get("/push/vapid-public-key").json()
    assert answer["ok"] and len(decode(answer["publicKey"], "k")) == 65
    public_key = answer["publicKey"]
    assert api.get("/push/vapid-public-key").json()["publicKey"] == public_key  # made once, kept

    phone, laptop, old = (Browser(push_service.url + p) for p in ("/phone", "/laptop", "/gone"))
    for browser, content_free in ((phone, None), (laptop, True), (old, False)):
        body = {"subscription": browser.subscription(), **({"content_free": content_free} if content_free else {})}
        subscribed = api.post("/push/subscribe", json=body).json()
        assert subscribed["ok"] and subscribed["changed"] and subscribed["content_free"] is bool(content_free)
    push_service.status["/gone"] = 410
    memory = api.post("/capture", json={"content": SECRET, "when": now_ms() - 1000, "when_kind": "due"}).json()["id"]

    run = api.post("/push/run").json()
    assert run["ok"] and run["complete"]
    assert {k: run["counts"][k] for k in ("due", "reminders", "sent", "gone", "failed")} == {
        "due": 1, "reminders": 1, "sent": 2, "gone": 1, "failed": 0}
    assert sorted(r["result"] for r in run["results"]) == ["gone", "sent", "sent"]
    assert all(r["id"] == memory and r["host"] == "127.0.0.1" for r in run["results"])
    messages = {path: (headers, body) for path, headers, body in push_service.take()}
    assert set(messages) == {"/phone", "/laptop", "/gone"}
    for path in ("/phone", "/laptop"):
        check_vapid(messages[path][0], public_key, push_service.url)
    seen = phone.read(messages["/phone"][1])
    assert (seen["type"], seen["id"], seen["body"], seen["when_kind"]) == ("reminder", memory, SECRET, "due")
    bare = laptop.read(messages["/laptop"][1])
    assert bare["id"] == memory and "flowerpot" not in json.dumps(bare) and "spare key" not in json.dumps(bare)

    again = api.post("/push/run").json()
    assert again["counts"]["sent"] == 0 and push_service.take() == []  # deduped by entry and when_at; /gone is gone

    snoozed = api.post("/due/snooze", json={"id": memory, "until": now_ms() + 1500}).json()
    assert snoozed["ok"]
    time.sleep(1.6)
    third = api.post("/push/run").json()
    assert third["counts"]["sent"] == 2 and sorted(p for p, _, _ in push_service.take()) == ["/laptop", "/phone"]

    timeline = api.get("/entry", params={"id": memory}).json()["entry"]["timeline"]
    notes = [item for item in timeline if item["event"] == "reminder_pushed"]
    assert [n["payload"]["devices"] for n in notes] == [2, 2]
    assert notes[-1]["payload"]["when_at"] == snoozed["when_at"]

    tested = api.post("/push/test").json()
    assert tested["devices"] == 2 and tested["counts"]["sent"] == 2
    test_messages = {path: body for path, _, body in push_service.take()}
    assert phone.read(test_messages["/phone"])["type"] == "test"

    assert api.post("/push/unsubscribe", json={"endpoint": laptop.endpoint}).json() == {"ok": True, "removed": True}
    assert api.post("/push/test").json()["devices"] == 1


def test_members_subscribe_their_own_devices_but_only_admins_run_or_test(api, server: Server, push_service):
    token = api.post("/team/members", json={"name": "Bob"}).json()["token"]
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as bob:
        assert bob.get("/push/vapid-public-key").json()["ok"]
        device = Browser(push_service.url + "/bob")
        assert bob.post("/push/subscribe", json={"subscription": device.subscription()}).json()["ok"]
        for path in ("/push/run", "/push/test"):
            answer = bob.post(path)
            assert answer.status_code == 403 and answer.json()["ok"] is False, path
        bob.post("/capture", json={"content": "Bob's dentist appointment", "when": now_ms() - 1000})
    api.post("/capture", json={"content": "The owner's own errand", "when": now_ms() - 1000})

    run = api.post("/push/run").json()  # the owner has no device: only Bob's reminder goes, to Bob
    assert run["counts"]["sent"] == 1 and "id" not in run["results"][0]  # the owner cannot read Bob's memory
    [(path, _, body)] = push_service.take()
    assert path == "/bob" and device.read(body)["body"] == "Bob's dentist appointment"


@pytest.mark.parametrize(("body", "message"), [
    ({}, "Missing subscription.endpoint"),
    ({"subscription": "x"}, "Invalid subscription"),
    ({"subscription": {"endpoint": "http://push.example/a", "keys": {"p256dh": "x", "auth": "y"}}}, "https://"),
    ({"subscription": {"endpoint": "https://push.example/a", "keys": {"p256dh": encode(b"\x04" + bytes(64)),
                                                                      "auth": encode(bytes(16))}}}, "P-256"),
    ({"subscription": {"endpoint": "https://push.example/a"}}, "Missing subscription.keys.p256dh"),
    ({"subscription": Browser("https://push.example/a").subscription(), "content_free": "yes"}, "content_free"),
])
def test_bad_subscriptions_are_400_in_the_envelope(api, body, message):
    answer = api.post("/push/subscribe", json=body)
    assert answer.status_code == 400 and answer.json()["ok"] is False and message in answer.json()["error"]
    missing = api.post("/push/unsubscribe", json={})
    assert missing.status_code == 400 and missing.json()["error"] == "Missing endpoint"


def test_without_the_test_only_setting_endpoints_on_this_machine_or_its_network_are_refused(tmp_path, push_service):
    """Issue 38: any member could subscribe an endpoint the hourly sender then POSTs to (on Lambda, 127.0.0.1:9001
    is the runtime API)."""
    plain = Server(tmp_path / "plain").start()
    try:
        with plain.client() as api:
            port = push_service.server_address[1]
            for endpoint, message in [
                (push_service.url + "/internal-admin", "subscription.endpoint must be an https:// URL"),
                (f"https://127.0.0.1:{port}/internal-admin", "not an address on this machine or its network"),
                ("https://2130706433/internal-admin", "not an address on this machine or its network"),
                ("https://0x7f000001/internal-admin", "not an address on this machine or its network"),
                ("https://169.254.169.254/latest/meta-data/", "not an address on this machine or its network"),
                ("https://metadata.google.internal/computeMetadata/v1/", "not a name on this network"),
                ("https://localhost/internal-admin", "not a name on this network"),
                ("https://push.invalid/send/abc", "does not resolve"),  # RFC 6761: never resolves
            ]:
                answer = api.post("/push/subscribe", json={"subscription": Browser(endpoint).subscription()})
                assert answer.status_code == 400, endpoint
                body = answer.json()
                assert body["ok"] is False and message in body["error"], (endpoint, body)
                assert body["error"].count(". ") == 0 and "\n" not in body["error"]  # one sentence
            assert api.post("/push/test").json()["devices"] == 0
        assert push_service.take() == []
    finally:
        plain.stop()


def test_with_the_test_only_setting_only_loopback_is_let_in(api, push_service):
    for endpoint in ("https://10.0.0.1/send/abc", "http://10.0.0.1/send/abc", "https://169.254.169.254/latest"):
        answer = api.post("/push/subscribe", json={"subscription": Browser(endpoint).subscription()})
        assert answer.status_code == 400 and answer.json()["ok"] is False, endpoint
