"""Push reminders as events: the brain's VAPID key pair and each device's subscription on the one `push` stream,
and `ReminderPushed` on a memory's own stream, which is how the hourly sender knows what it already sent.

Pure: checking a subscription, who a reminder goes to, what its payload says. The cryptography (keys, RFC 8291
encryption, VAPID signatures) lives in adapters/push.
"""

import base64
import binascii
import hashlib
import ipaddress
import re
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar
from urllib.parse import urlsplit

from .errors import InvalidInput

STREAM = "push"
DUE_WINDOW_MS = 7 * 24 * 3600 * 1000  # an anchor overdue by longer than this is not pushed (the brain was off)
MAX_DEVICES = 10  # per person: a new subscription past this replaces their oldest
MAX_ENDPOINT_CHARS = 2048
EXCERPT_CHARS = 200  # of the memory's text in a reminder: a notification shows about two lines
TITLES = {"due": "Due now", "event": "Happening now", "wake": "Reminder"}
LOOPBACK_NAMES = ("localhost", "localhost.")
# P-256 (secp256r1): y^2 = x^3 - 3x + b over the prime p. A key that is not on the curve is refused at subscribe
# time, not discovered at the first send.
P256_P = 2**256 - 2**224 + 2**192 + 2**96 - 1
P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
BASE64URL = re.compile(r"[A-Za-z0-9_\-+/]+={0,2}")


@dataclass(frozen=True)
class VapidKeyGenerated:
    """The deployment's VAPID key pair (RFC 8292), made once on first use: base64url, the private key as its raw
    32-byte scalar, the public key as the uncompressed point browsers take as applicationServerKey."""

    public_key: str
    private_key: str
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class PushSubscribed:
    """A device (its push service endpoint and its RFC 8291 keys) registered by the envelope's actor; the same
    endpoint registered again replaces it."""

    endpoint: str
    p256dh: str
    auth: str
    content_free: bool = False  # its notifications never carry the memory's text
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class PushUnsubscribed:
    endpoint: str
    reason: str  # unsubscribed (by its person) | gone (its push service answered 404/410) | replaced (device cap)
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class ReminderPushed:
    """On the memory's stream: its anchor at `when_at` reached these devices (ids, not endpoints). A snooze moves
    `when_at`, so the new time is pushed again; a device that failed is tried again next hour."""

    when_at: int
    devices: tuple[str, ...]
    SCHEMA: ClassVar[int] = 1


PUSH_EVENTS = (VapidKeyGenerated, PushSubscribed, PushUnsubscribed, ReminderPushed)


@dataclass(frozen=True)
class Device:
    endpoint: str
    p256dh: str
    auth: str
    content_free: bool
    actor: str
    subscribed_at: int

    @property
    def id(self) -> str:
        return device_id(self.endpoint)

    @property
    def host(self) -> str:
        return urlsplit(self.endpoint).hostname or ""


@dataclass(frozen=True)
class PushState:
    """The `push` stream folded: the key pair (None until first use) and the devices by endpoint, oldest first."""

    version: int = 0
    public_key: str | None = None
    private_key: str | None = None
    devices: dict[str, Device] = field(default_factory=dict)

    def of(self, actor: str) -> list[Device]:
        return [d for d in self.devices.values() if d.actor == actor]


def evolve(state: PushState, event: object, actor: str = "", at: int = 0) -> PushState:
    version = state.version + 1
    if isinstance(event, VapidKeyGenerated):
        if state.public_key:  # the first key stays: subscriptions are bound to it
            return replace(state, version=version)
        return replace(state, version=version, public_key=event.public_key, private_key=event.private_key)
    if isinstance(event, PushSubscribed):
        devices = {k: v for k, v in state.devices.items() if k != event.endpoint}
        devices[event.endpoint] = Device(event.endpoint, event.p256dh, event.auth, event.content_free, actor, at)
        return replace(state, version=version, devices=devices)
    if isinstance(event, PushUnsubscribed):
        return replace(state, version=version, devices={k: v for k, v in state.devices.items()
                                                        if k != event.endpoint})
    return replace(state, version=version)  # an erased event, or one of a later release


def subscribe(state: PushState, actor: str, endpoint: object, p256dh: object, auth: object,
              content_free: object) -> list[object]:
    """The events that register a device for `actor`: none when it is registered so already; the person's
    oldest device goes when they would have more than MAX_DEVICES."""
    event = PushSubscribed(check_endpoint(endpoint), check_key(p256dh, "subscription.keys.p256dh", 65),
                           check_key(auth, "subscription.keys.auth", 16), check_flag(content_free))
    current = state.devices.get(event.endpoint)
    if current and (current.p256dh, current.auth, current.content_free, current.actor) == (
            event.p256dh, event.auth, event.content_free, actor):
        return []
    others = [d for d in state.of(actor) if d.endpoint != event.endpoint]
    dropped = others[:max(0, len(others) - MAX_DEVICES + 1)]
    return [*(PushUnsubscribed(d.endpoint, "replaced") for d in dropped), event]


def check_endpoint(value: object) -> str:
    """A push service URL: https, or http on a loopback host (a push endpoint on this machine, as in tests)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("Missing subscription.endpoint")
    endpoint = value.strip()
    if len(endpoint) > MAX_ENDPOINT_CHARS or any(c.isspace() or ord(c) < 32 for c in endpoint):
        raise InvalidInput(f"subscription.endpoint must be a URL of at most {MAX_ENDPOINT_CHARS} characters")
    try:
        parts = urlsplit(endpoint)
        parts.port  # noqa: B018 - a malformed port raises here
    except ValueError:
        raise InvalidInput("subscription.endpoint must be an https:// URL") from None
    host = parts.hostname or ""
    if not host or parts.username is not None or parts.password is not None or ":" in host:
        raise InvalidInput("subscription.endpoint must be an https:// URL with a host name")
    if parts.scheme == "https" and not is_internal(host):
        return endpoint
    if parts.scheme == "http" and is_loopback(host):
        return endpoint
    if parts.scheme == "https":  # the brain would POST there every hour: never to its own network's addresses
        raise InvalidInput("subscription.endpoint must be a push service on the internet, not a private address")
    raise InvalidInput("subscription.endpoint must be an https:// URL (http:// only on this machine's loopback)")


def is_internal(host: str) -> bool:
    """An IP literal that is not a global address (private, link-local such as 169.254.169.254, loopback)."""
    try:
        return not ipaddress.ip_address(host).is_global
    except ValueError:
        return False  # a name: push services are named hosts


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_key(value: object, name: str, size: int) -> str:
    """A base64url key of `size` bytes (p256dh: an uncompressed point on P-256; auth: the 16-byte secret)."""
    raw = decode(value, name)
    if len(raw) != size:
        raise InvalidInput(f"{name} must be {size} bytes, base64url-encoded")
    if size == 65 and not on_p256(raw):
        raise InvalidInput(f"{name} must be an uncompressed P-256 public key")
    return encode(raw)


def check_flag(value: object) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidInput("content_free must be true or false")
    return value


def decode(value: object, name: str) -> bytes:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"Missing {name}")
    text = value.strip()
    if len(text) > 200 or not BASE64URL.fullmatch(text):
        raise InvalidInput(f"{name} must be base64url")
    text = text.rstrip("=").replace("+", "-").replace("/", "_")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise InvalidInput(f"{name} must be base64url") from None


def encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def on_p256(point: bytes) -> bool:
    if len(point) != 65 or point[0] != 4:
        return False
    x, y = int.from_bytes(point[1:33], "big"), int.from_bytes(point[33:], "big")
    return x < P256_P and y < P256_P and (y * y - (x * x * x - 3 * x + P256_B)) % P256_P == 0


def device_id(endpoint: str) -> str:
    """What results and ReminderPushed name a device by: the endpoint is a capability URL, kept out of both."""
    return hashlib.sha256(endpoint.encode()).hexdigest()[:16]


def check_unsubscribe(endpoint: object) -> str:
    if not isinstance(endpoint, str) or not endpoint.strip():
        raise InvalidInput("Missing endpoint")
    return endpoint.strip()


def pushed_to(events: list[object], when_at: int) -> set[str]:
    """The devices a memory's anchor at `when_at` already reached, from its stream's events."""
    return {d for e in events if isinstance(e, ReminderPushed) and e.when_at == when_at for d in e.devices}


def due(when_at: int | None, deprecated: bool, now: int, window_ms: int = DUE_WINDOW_MS) -> bool:
    """Whether an anchor is due for a push now: reached, and not overdue past the window."""
    return when_at is not None and not deprecated and now - window_ms <= when_at <= now


def recipient(workspace: str, author: str) -> str:
    """Whose devices a memory's reminder goes to: a personal memory's owner (from the workspace's name, whoever
    wrote it), a company memory's author (not the whole team: a reminder is the person's who set it)."""
    return workspace.removeprefix("personal-") if workspace.startswith("personal-") else author


def reminder(memory_id: str, content: str, when_at: int, when_kind: str | None,
             content_free: bool) -> dict[str, Any]:
    """The notification a device gets: the memory's opening words, or none for a content-free device."""
    kind = when_kind or "wake"
    body = "Something in your Second Brain is due" if content_free else excerpt(content)
    return {"type": "reminder", "title": TITLES.get(kind, TITLES["wake"]), "body": body, "id": memory_id,
            "when_at": when_at, "when_kind": kind}


TEST_NOTIFICATION = {"type": "test", "title": "Second Brain",
                     "body": "Test notification: reminders will reach this device."}


def excerpt(content: str) -> str:
    flat = " ".join(content.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[:EXCERPT_CHARS - 1].rstrip() + "…"


def outcome(status: int) -> str:
    """sent (2xx), gone (404/410: the subscription expired or was revoked), else failed (tried again later)."""
    if 200 <= status < 300:
        return "sent"
    return "gone" if status in (404, 410) else "failed"
