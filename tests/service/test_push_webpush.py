"""The Web Push adapter: RFC 8291's own example byte for byte, a message http_ece (an independent implementation)
decrypts, a VAPID header py_vapid verifies, what the push service answers becoming a status, connections made only
to the addresses that were checked, and endpoints kept out of the logs."""

import datetime
import json
import logging
import ssl
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import http_ece
import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from py_vapid.jwt import decode as decode_jwt

from second_brain.adapters.http.guarded import pinned_client, resolve
from second_brain.adapters.push.webpush import WebPushGateway, encrypt
from second_brain.domain.push import Device, decode, encode, on_p256
from second_brain.ports.push import UNREACHABLE
from tests.support.push import PUBLIC_ADDRESS, FakeResolver

# RFC 8291 Appendix A.
RFC_UA_PUBLIC = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
RFC_AS_PRIVATE = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
RFC_AUTH = "BTBZMqHH6r4Tts7J_aSIgg"
RFC_SALT = "DGv6ra1nlYgDCS1FRnbzlw"
RFC_BODY = ("DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6Tlz"
            "AC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")


def browser() -> tuple[ec.EllipticCurvePrivateKey, Device]:
    """What a browser makes when it subscribes: a P-256 key pair and a 16-byte auth secret."""
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return key, Device("https://push.example/send/abc", encode(public), encode(b"0123456789abcdef"), False, "owner", 0)


def test_encryption_matches_rfc_8291_appendix_a():
    sender = ec.derive_private_key(int.from_bytes(decode(RFC_AS_PRIVATE, "k"), "big"), ec.SECP256R1())
    device = Device("https://push.example/a", RFC_UA_PUBLIC, RFC_AUTH, False, "owner", 0)
    body = encrypt(device, b"When I grow up, I want to be a watermelon", decode(RFC_SALT, "salt"), sender)
    assert encode(body) == RFC_BODY


def test_a_message_decrypts_with_the_browsers_key_and_every_message_is_fresh():
    key, device = browser()
    first, second = encrypt(device, b'{"title":"Due now"}'), encrypt(device, b'{"title":"Due now"}')
    assert first != second and first[:16] != second[:16]  # a new salt and sender key each time
    for body in (first, second):
        assert http_ece.decrypt(body, private_key=key, auth_secret=decode(device.auth, "a"),
                                version="aes128gcm") == b'{"title":"Due now"}'


def test_send_posts_an_encrypted_signed_message_and_reports_the_status():
    key, device = browser()
    seen: list[httpx.Request] = []

    def push_service(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(201)

    gateway = WebPushGateway("mailto:ops@example.com", httpx.Client(transport=httpx.MockTransport(push_service)))
    public, private = gateway.new_key_pair()
    assert on_p256(decode(public, "public")) and len(decode(private, "private")) == 32
    assert gateway.send(device, b'{"a":1}', 3600, private, topic="abc123") == 201

    [request] = seen
    assert str(request.url) == device.endpoint and request.method == "POST"
    assert {k: request.headers[k] for k in ("ttl", "content-encoding", "content-type", "urgency", "topic")} == {
        "ttl": "3600", "content-encoding": "aes128gcm", "content-type": "application/octet-stream",
        "urgency": "normal", "topic": "abc123"}
    assert http_ece.decrypt(request.content, private_key=key, auth_secret=decode(device.auth, "a"),
                            version="aes128gcm") == b'{"a":1}'
    scheme, params = request.headers["authorization"].split(" ", 1)
    fields = dict(part.strip().split("=", 1) for part in params.split(","))
    assert scheme == "vapid" and fields["k"] == public
    claims = decode_jwt(fields["t"], public)  # raises unless signed by the brain's key
    assert claims["aud"] == "https://push.example" and claims["sub"] == "mailto:ops@example.com"
    assert time.time() < claims["exp"] <= time.time() + 24 * 3600
    assert json.loads(decode(fields["t"].split(".")[0], "h")) == {"typ": "JWT", "alg": "ES256"}


def test_a_push_service_that_cannot_be_reached_is_a_status_not_an_exception():
    _, device = browser()

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("no route", request=request)

    gateway = WebPushGateway("mailto:ops@example.com", httpx.Client(transport=httpx.MockTransport(down)))
    assert gateway.send(device, b"{}", 60, gateway.new_key_pair()[1]) == UNREACHABLE
    gone = WebPushGateway("mailto:ops@example.com",
                          httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(410))))
    assert gone.send(device, b"{}", 60, gone.new_key_pair()[1]) == 410


class Receiver(ThreadingHTTPServer):
    """A push service on 127.0.0.1, plain or with TLS (`tls`: its certificate and key files): what reached it, and
    the server name each TLS connection asked for."""

    def __init__(self, tls: tuple[str, str] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), Taker)
        self.received: list[tuple[str, str]] = []  # (Host header, path)
        self.server_names: list[str | None] = []
        self.context: ssl.SSLContext | None = None
        if tls:
            self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            self.context.load_cert_chain(*tls)
            self.context.sni_callback = lambda sock, server_name, ctx: self.server_names.append(server_name)

    @property
    def port(self) -> int:
        return self.server_address[1]

    def get_request(self):  # the name socketserver calls: with TLS, each connection is wrapped as it is accepted
        sock, address = super().get_request()
        return (self.context.wrap_socket(sock, server_side=True) if self.context else sock), address


class Taker(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:  # the name http.server calls
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((self.headers["Host"], self.path))
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def certificate(name: str, directory: Path) -> tuple[str, str]:
    """A self-signed certificate for `name`: the (certificate, key) PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    (directory / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                          serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))
    return str(directory / "cert.pem"), str(directory / "key.pem")


def serve(receiver: Receiver) -> Iterator[Receiver]:
    thread = threading.Thread(target=receiver.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield receiver
    receiver.shutdown()
    receiver.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from serve(Receiver())


@pytest.fixture
def tls_files(tmp_path) -> tuple[str, str]:
    return certificate("push.example", tmp_path)


@pytest.fixture
def tls_receiver(tls_files) -> Iterator[Receiver]:
    yield from serve(Receiver(tls_files))


def device_at(endpoint: str) -> Device:
    return Device(endpoint, browser()[1].p256dh, encode(b"0123456789abcdef"), False, "owner", 0)


def test_the_gateway_connects_to_the_address_it_checked_and_the_request_still_names_the_host(receiver):
    """No DNS on this machine knows push.example: the request can only have reached 127.0.0.1 through the resolver
    the gateway checked the host with."""
    resolver = FakeResolver({"push.example": ["127.0.0.1"]})
    gateway = WebPushGateway("mailto:ops@example.com", resolve=resolver, allow_loopback=True)
    device = device_at(f"http://push.example:{receiver.port}/send/abc")
    assert gateway.send(device, b"{}", 60, gateway.new_key_pair()[1]) == 201
    assert receiver.received == [(f"push.example:{receiver.port}", "/send/abc")] and resolver.asked == ["push.example"]


@pytest.mark.parametrize("addresses", [["127.0.0.1"], [PUBLIC_ADDRESS, "127.0.0.1"], ["::ffff:127.0.0.1"], []])
def test_a_host_that_resolves_inside_this_network_when_the_message_goes_is_never_connected_to(
        tls_receiver, tls_files, addresses):
    """DNS rebinding: whatever the host resolved to when it subscribed, the connection is made only to addresses
    checked at that moment, by the same lookup the connection uses (the push service here would answer: its
    certificate is trusted)."""
    trusted = ssl.create_default_context(cafile=tls_files[0])
    client = pinned_client(FakeResolver({"push.example": addresses}), verify=trusted)
    gateway = WebPushGateway("mailto:ops@example.com", client)
    device = device_at(f"https://push.example:{tls_receiver.port}/send/abc")
    assert gateway.send(device, b"{}", 60, gateway.new_key_pair()[1]) == UNREACHABLE
    assert tls_receiver.received == [] and tls_receiver.server_names == []


def test_tls_names_the_host_and_its_certificate_is_checked_against_that_name(tls_receiver, tls_files):
    resolver = FakeResolver({"push.example": ["127.0.0.1"], "other.example": ["127.0.0.1"]})
    trusted = ssl.create_default_context(cafile=tls_files[0])
    gateway = WebPushGateway("mailto:ops@example.com", pinned_client(resolver, True, verify=trusted))
    private = gateway.new_key_pair()[1]
    assert gateway.send(device_at(f"https://push.example:{tls_receiver.port}/send/abc"), b"{}", 60, private) == 201
    assert tls_receiver.server_names == ["push.example"]
    assert tls_receiver.received == [(f"push.example:{tls_receiver.port}", "/send/abc")]
    # The same address under a name the certificate does not carry: refused by TLS, as without pinning.
    assert gateway.send(device_at(f"https://other.example:{tls_receiver.port}/x"), b"{}", 60, private) == UNREACHABLE
    assert len(tls_receiver.received) == 1


def test_push_endpoints_never_reach_the_logs_and_other_requests_are_logged_as_before(caplog):
    """An endpoint is a capability (whoever holds it can push to the device), and httpx logs each request's URL at
    INFO."""
    caplog.set_level(logging.DEBUG)
    _, device = browser()
    secret = "/wpush/v2/gAAAAABk-capability-token"
    device = Device("https://push.example" + secret, device.p256dh, device.auth, False, "owner", 0)
    for status in (201, 500):
        gateway = WebPushGateway("mailto:ops@example.com", httpx.Client(
            transport=httpx.MockTransport(lambda request, status=status: httpx.Response(status))))
        assert gateway.send(device, b"{}", 60, gateway.new_key_pair()[1]) == status
    down = WebPushGateway("mailto:ops@example.com", httpx.Client(transport=httpx.MockTransport(refuse)))
    assert down.send(device, b"{}", 60, down.new_key_pair()[1]) == UNREACHABLE
    logged = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert not [r.getMessage() for r in logged if secret in r.getMessage() or "capability" in r.getMessage()]
    assert [r.getMessage() for r in logged if r.name == "httpx"] == [
        'HTTP Request: POST https://push.example/… "HTTP/1.1 201 Created"',
        'HTTP Request: POST https://push.example/… "HTTP/1.1 500 Internal Server Error"']
    assert any(r.name == "second_brain.push" and "push.example" in r.getMessage() for r in logged)

    caplog.clear()
    with httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200))) as other:
        other.get("https://api.example/v1/models?page=2")
    assert [r.getMessage() for r in caplog.records if r.name == "httpx"] == [
        'HTTP Request: GET https://api.example/v1/models?page=2 "HTTP/1.1 200 OK"']


def refuse(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError(f"cannot reach {request.url}", request=request)


def test_the_resolver_reads_every_form_of_an_address_as_getaddrinfo_does():
    """No DNS is asked: numeric hosts are read by the C library itself."""
    for host in ("127.0.0.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.1"):
        assert resolve(host) == ["127.0.0.1"], host
