"""The Web Push adapter: RFC 8291's own example byte for byte, a message http_ece (an independent implementation)
decrypts, a VAPID header py_vapid verifies, and what the push service answers becoming a status."""

import json
import time

import http_ece
import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid.jwt import decode as decode_jwt

from second_brain.adapters.push.webpush import WebPushGateway, encrypt
from second_brain.domain.push import Device, decode, encode, on_p256
from second_brain.ports.push import UNREACHABLE

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
