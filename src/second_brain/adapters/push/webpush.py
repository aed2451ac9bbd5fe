"""Web Push: the payload encrypted for the device (RFC 8291, one aes128gcm record of RFC 8188), the request
signed as the brain (RFC 8292 VAPID: an ES256 JWT for the push service's origin, by py_vapid) and POSTed to the
device's endpoint (RFC 8030).

The encryption is written out here on `cryptography` (twenty lines): the packaged implementation (http_ece) ships
no wheel, and the Lambda layer installs wheels only. The tests decrypt with http_ece, so the two are checked
against each other.

An endpoint is any member's choice, so the connection is made only to an address checked at that moment: the host
is resolved, every address checked (domain/push.py) and one of them connected to in one step, under httpx's own
TLS (the certificate checked against the host's name) and Host header. And it is a capability, so httpx's request
log line names only its origin.
"""

import functools
import logging
import os
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from urllib.parse import urlsplit

import httpcore
import httpx
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from py_vapid import Vapid02
from py_vapid.jwt import sign

from ...domain.push import Device, decode, encode, on_internet
from ...ports.push import UNREACHABLE

log = logging.getLogger("second_brain.push")
JWT_SECONDS = 12 * 3600  # a VAPID token may live at most 24 hours; push services refuse longer ones
TIMEOUT = httpx.Timeout(8.0, connect=4.0)  # a push service answers in well under a second
RECORD_SIZE = 4096  # one record: a payload of up to 3,993 bytes (the sender's stay under 1,000)
# Set while a request whose URL is a capability (a push endpoint, a secret calendar feed) is under way: httpx's log
# line for it names the origin only.
SECRET_URL: ContextVar[bool] = ContextVar("secret_url", default=False)


def resolve(host: str) -> list[str]:
    """Every address getaddrinfo gives for `host` (OSError when it has none)."""
    return list(dict.fromkeys(str(info[4][0]) for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)))


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


def pinned_client(resolve: Callable[[str], Sequence[str]], allow_loopback: bool = False,
                  verify: ssl.SSLContext | bool = True) -> httpx.Client:
    """An httpx client that connects only to addresses it checked as it connects. No proxy (HTTPS_PROXY is not
    read): a proxy would resolve the name again, unchecked."""
    return httpx.Client(transport=PinnedTransport(resolve, allow_loopback, verify), timeout=TIMEOUT,
                        follow_redirects=False, trust_env=False)


@functools.cache
def _default_tls() -> ssl.SSLContext:
    return httpx.create_ssl_context()


class PinnedTransport(httpx.HTTPTransport):
    """httpx's own transport, its sockets opened by PinnedBackend: httpx takes no network backend, so its pool is
    made again with one (httpx's default limits)."""

    def __init__(self, resolve: Callable[[str], Sequence[str]], allow_loopback: bool = False,
                 verify: ssl.SSLContext | bool = True) -> None:
        # One for both pools; the default one made once a process (loading certifi's certificates takes 20 ms of CPU,
        # which every sync of a calendar or Notion paid).
        context = _default_tls() if verify is True else httpx.create_ssl_context(verify=verify)
        super().__init__(verify=context)
        self._pool = httpcore.ConnectionPool(ssl_context=context,
                                             max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0,
                                             network_backend=PinnedBackend(resolve, allow_loopback))


class PinnedBackend(httpcore.NetworkBackend):
    """httpcore's sockets, opened only to the addresses a host resolves to at that moment and only when every one
    of them is on the internet: the check and the connection use one lookup, so a DNS answer that changes after
    the check (rebinding) is never connected to. TLS and the Host header still name the host."""

    def __init__(self, resolve: Callable[[str], Sequence[str]], allow_loopback: bool = False) -> None:
        self.resolve = resolve
        self.allow_loopback = allow_loopback
        self.sockets = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        try:
            addresses = list(self.resolve(host))
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"{host} does not resolve") from exc
        if not on_internet(addresses, self.allow_loopback):
            raise httpcore.ConnectError(f"{host} resolves to an address push may not reach")
        failure: Exception | None = None
        for address in addresses:
            try:
                return self.sockets.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("push goes over TCP only")

    def sleep(self, seconds: float) -> None:
        self.sockets.sleep(seconds)


class PushRequestRedaction(logging.Filter):
    """httpx logs each request's URL at INFO; a push request's is logged as its origin only (an endpoint is a
    capability: whoever has it can push to the device)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if SECRET_URL.get() and isinstance(record.args, tuple):
            record.args = tuple(f"{a.scheme}://{a.netloc.decode()}/…" if isinstance(a, httpx.URL) else a
                                for a in record.args)
        return True


def redact_push_requests() -> None:
    """The redaction, once, on httpx's own logger: the requests of every other client are logged as before."""
    logger = logging.getLogger("httpx")
    if not any(isinstance(f, PushRequestRedaction) for f in logger.filters):
        logger.addFilter(PushRequestRedaction())


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
