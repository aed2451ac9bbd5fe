"""Web Push: the payload encrypted for the device (RFC 8291, one aes128gcm record of RFC 8188), the request
signed as the brain (RFC 8292 VAPID: an ES256 JWT for the push service's origin, by py_vapid) and POSTed to the
device's endpoint (RFC 8030).

The encryption is written out here on `cryptography` (twenty lines): the packaged implementation (http_ece) ships
no wheel, and the Lambda layer installs wheels only. The tests decrypt with http_ece, so the two are checked
against each other.

An endpoint is any member's choice, and a capability: it is reached through the guarded client
(adapters/http/guarded.py: only an address checked as it connects, never one inside this network), with
`SECRET_URL` set so that httpx's request log line names only its origin.
"""

import logging
import os
import struct
import threading
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

import httpx
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from py_vapid import Vapid02
from py_vapid.jwt import sign

from ...domain.push import Device, decode, encode
from ...ports.push import UNREACHABLE
from ..http.guarded import SECRET_URL, pinned_client, redact_push_requests, resolve

log = logging.getLogger("second_brain.push")
JWT_SECONDS = 12 * 3600  # a VAPID token may live at most 24 hours; push services refuse longer ones
RECORD_SIZE = 4096  # one record: a payload of up to 3,993 bytes (the sender's stay under 1,000)


class WebPushGateway:
    def __init__(self, contact: str, client: httpx.Client | None = None,
                 resolve: Callable[[str], Sequence[str]] = resolve, allow_loopback: bool = False) -> None:
        self.contact = contact  # the JWT's `sub`: how a push service reaches whoever runs the brain
        self._client = client
        self._connecting = (resolve, allow_loopback)
        self._lock = threading.Lock()
        redact_push_requests()

    @property
    def client(self) -> httpx.Client:
        """The pinned client, made at the first push: its TLS context takes 20 ms to load, and most starts of a
        brain push nothing for an hour."""
        with self._lock:
            if self._client is None:
                self._client = pinned_client(*self._connecting)
            return self._client

    def send(self, device: Device, payload: bytes, ttl: int, vapid_private_key: str, topic: str = "") -> int:
        pushing = SECRET_URL.set(True)
        try:
            body = encrypt(device, payload)
            headers = {"TTL": str(ttl), "Content-Encoding": "aes128gcm", "Content-Type": "application/octet-stream",
                       "Urgency": "normal", "Authorization": self.authorization(device.endpoint, vapid_private_key)}
            if topic:  # a newer message on the same topic replaces one the device has not fetched yet
                headers["Topic"] = topic
            return self.client.post(device.endpoint, content=body, headers=headers).status_code
        except (httpx.HTTPError, ValueError) as exc:  # ValueError: a key the crypto refuses (checked at subscribe)
            log.warning("push to %s failed: %s", device.host, type(exc).__name__)
            return UNREACHABLE
        finally:
            SECRET_URL.reset(pushing)

    def authorization(self, endpoint: str, vapid_private_key: str) -> str:
        """`vapid t=<JWT>, k=<public key>` (RFC 8292 §3), the JWT's audience the endpoint's origin."""
        parts = urlsplit(endpoint)
        vapid = Vapid02.from_raw(vapid_private_key.encode())
        claims = {"aud": f"{parts.scheme}://{parts.netloc}", "exp": int(time.time()) + JWT_SECONDS,
                  "sub": self.contact}
        public = vapid.public_key.public_bytes(serialization.Encoding.X962,
                                               serialization.PublicFormat.UncompressedPoint)
        return f"vapid t={sign(claims, vapid.private_key)}, k={encode(public)}"

    def new_key_pair(self) -> tuple[str, str]:
        key = ec.generate_private_key(ec.SECP256R1())
        public = key.public_key().public_bytes(serialization.Encoding.X962,
                                               serialization.PublicFormat.UncompressedPoint)
        return encode(public), encode(key.private_numbers().private_value.to_bytes(32, "big"))


def encrypt(device: Device, payload: bytes, salt: bytes | None = None,
            sender: ec.EllipticCurvePrivateKey | None = None) -> bytes:
    """RFC 8291 §3-4: a fresh sender key pair and salt per message; the key and nonce come from ECDH with the
    device's key, mixed with its auth secret; the body is the RFC 8188 header (salt, record size, the sender's
    public key as key id) and one AES-128-GCM record ending in the last-record delimiter 0x02."""
    salt = salt or os.urandom(16)
    sender = sender or ec.generate_private_key(ec.SECP256R1())
    device_key = decode(device.p256dh, "p256dh")
    sender_key = sender.public_key().public_bytes(serialization.Encoding.X962,
                                                  serialization.PublicFormat.UncompressedPoint)
    shared = sender.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), device_key))
    ikm = _hkdf(decode(device.auth, "auth"), b"WebPush: info\x00" + device_key + sender_key, 32, shared)
    key = _hkdf(salt, b"Content-Encoding: aes128gcm\x00", 16, ikm)
    nonce = _hkdf(salt, b"Content-Encoding: nonce\x00", 12, ikm)
    record = AESGCM(key).encrypt(nonce, payload + b"\x02", None)
    return salt + struct.pack("!IB", RECORD_SIZE, len(sender_key)) + sender_key + record


def _hkdf(salt: bytes, info: bytes, length: int, secret: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(secret)
