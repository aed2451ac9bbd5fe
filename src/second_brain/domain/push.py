"""Push reminders as events: the brain's VAPID key pair and each device's subscription on the one `push` stream,
and `ReminderPushed` on a memory's own stream, which is how the hourly sender knows what it already sent.

Pure: checking a subscription (and which addresses the brain may POST to: an endpoint is a request any member can
make the brain send every hour), who a reminder goes to, what its payload says. The cryptography (keys, RFC 8291
encryption, VAPID signatures) and the DNS lookups live in adapters/push.
"""

import base64
import binascii
import hashlib
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar
from urllib.parse import urlsplit

from .envelope import stored
from .errors import AlreadyExists, InvalidInput
from .shown import shows

STREAM = "push"
DUE_WINDOW_MS = 7 * 24 * 3600 * 1000  # an anchor overdue by longer than this is not pushed (the brain was off)
MAX_DEVICES = 10  # per person: a new subscription past this replaces their oldest
MAX_ENDPOINT_CHARS = 2048
EXCERPT_CHARS = 200  # of the memory's text in a reminder: a notification shows about two lines
TITLES = {"due": "Due now", "event": "Happening now", "wake": "Reminder"}
# Names that only mean something inside a network (RFC 6761's localhost, mDNS, ICANN's private-use .internal) and the
# cloud metadata services' own names; single-label names (`metadata`, `instance-data`) are refused as well.
LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa", ".localdomain")
METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog", "instance-data.ec2.internal"})
# The metadata services' addresses (AWS, GCP, Azure and OpenStack; ECS tasks; AWS over IPv6; Alibaba; Oracle): each
# is outside the internet already, named here so that no version of Python's tables decides it alone.
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "192.0.0.192"))
# Not on the internet, whatever a Python version's `is_global` says: shared (CGNAT), IETF protocol assignments,
# local-use NAT64.
NOT_INTERNET = tuple(ipaddress.ip_network(n) for n in ("100.64.0.0/10", "192.0.0.0/24", "64:ff9b:1::/48"))
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # an IPv4 address reached through a NAT64 gateway, judged as that one
HOST_NAME = re.compile(r"[a-z0-9-]+(\.[a-z0-9-]+)*\.?")
IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")
NUMERIC_LABEL = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")
# P-256 (secp256r1): y^2 = x^3 - 3x + b over the prime p. A key that is not on the curve is refused at subscribe
# time, not discovered at the first send.
P256_P = 2**256 - 2**224 + 2**192 + 2**96 - 1
P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
BASE64URL = re.compile(r"[A-Za-z0-9_\-+/]+={0,2}")


@stored
@dataclass(frozen=True)
class VapidKeyGenerated:
    """The deployment's VAPID key pair (RFC 8292), made once on first use: base64url, the private key as its raw
    32-byte scalar, the public key as the uncompressed point browsers take as applicationServerKey."""

    public_key: str
    private_key: str
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class PushSubscribed:
    """A device (its push service endpoint and its RFC 8291 keys) registered by the envelope's actor; the same
    endpoint registered again replaces it."""

    endpoint: str
    p256dh: str
    auth: str
    content_free: bool = False  # its notifications never carry the memory's text
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class PushUnsubscribed:
    endpoint: str
    reason: str  # unsubscribed (by its person) | gone (its push service answered 404/410) | replaced (device cap)
    SCHEMA: ClassVar[int] = 1


shows(PushUnsubscribed, line=lambda e, other: f"a device unsubscribed ({e.reason})")


@stored
@dataclass(frozen=True)
class ReminderPushed:
    """On the memory's stream: its anchor at `when_at` reached these devices (ids, not endpoints). A snooze moves
    `when_at`, so the new time is pushed again; a device that failed is tried again next hour."""

    when_at: int
    devices: tuple[str, ...]
    SCHEMA: ClassVar[int] = 1


shows(ReminderPushed, "reminder_pushed", payload=lambda e: {"when_at": e.when_at, "devices": len(e.devices)},
      line=lambda e, other: f"reminder pushed to {len(e.devices)} devices")


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
        return host_of(self.endpoint)


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


def subscription(endpoint: object, p256dh: object, auth: object, content_free: object,
                 allow_loopback: bool = False) -> PushSubscribed:
    """A device's registration, checked (its endpoint's host is resolved and checked again by the caller)."""
    return PushSubscribed(check_endpoint(endpoint, allow_loopback), check_key(p256dh, "subscription.keys.p256dh", 65),
                          check_key(auth, "subscription.keys.auth", 16), check_flag(content_free))


def subscribe(state: PushState, actor: str, event: PushSubscribed) -> list[object]:
    """The events that register a device for `actor`: none when it is registered so already; the person's
    oldest device goes when they would have more than MAX_DEVICES."""
    current = state.devices.get(event.endpoint)
    if current and current.actor != actor:
        # An endpoint is one browser's: another person's registration of it would move their reminders here.
        raise AlreadyExists("This device already receives another person's reminders: they unsubscribe it first "
                            "(Settings, Notifications)")
    if current and (current.p256dh, current.auth, current.content_free) == (
            event.p256dh, event.auth, event.content_free):
        return []
    others = [d for d in state.of(actor) if d.endpoint != event.endpoint]
    dropped = others[:max(0, len(others) - MAX_DEVICES + 1)]
    return [*(PushUnsubscribed(d.endpoint, "replaced") for d in dropped), event]


def check_endpoint(value: object, allow_loopback: bool = False) -> str:
    """A push service's URL: https, its host a name or an address on the internet. `allow_loopback` (a test-only
    setting) lets in a push service on this machine's loopback, over plain http too."""
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
    # Plain ASCII names only: what a URL parser or IDNA makes of anything else (%2E, fullwidth digits) is not what
    # was checked here.
    if not HOST_NAME.fullmatch(host) or parts.username is not None or parts.password is not None:
        raise InvalidInput("subscription.endpoint must be an https:// URL with a host name")
    name = host.rstrip(".")
    address = ipv4(name)
    loopback = allow_loopback and (name == "localhost" or (address is not None and address.is_loopback))
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
        raise InvalidInput("subscription.endpoint must be an https:// URL")
    if address is None and NUMERIC_LABEL.fullmatch(name.rsplit(".", 1)[-1]):  # 256.0.0.1, 1.2.3.4.5: no host
        raise InvalidInput("subscription.endpoint must be an https:// URL with a host name")
    if address is not None and not reachable(str(address), allow_loopback):
        raise InvalidInput("subscription.endpoint must be a push service on the internet, not an address on this "
                           "machine or its network")
    if address is None and local_name(name) and not loopback:
        raise InvalidInput("subscription.endpoint must be a push service on the internet, not a name on this "
                           "network")
    return endpoint


def host_of(endpoint: str) -> str:
    return urlsplit(endpoint).hostname or ""


def local_name(name: str) -> bool:
    """A name that means something only inside a network: single-label, localhost, .local, .internal, metadata."""
    return "." not in name or name in METADATA_NAMES or name.endswith(LOCAL_SUFFIXES)


def ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a host written as numbers names, in every form inet_aton (so getaddrinfo, so httpx) reads:
    127.0.0.1, 127.1, 2130706433, 0x7f000001, 0177.0.0.1; None for a name."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(IPV4_PART.fullmatch(p) for p in parts):
        return None
    numbers = [int(p, 16) if p[:2].lower() == "0x" else int(p, 8) if p.startswith("0") else int(p) for p in parts]
    last_bits = 8 * (5 - len(parts))  # the last part fills the bytes the others left
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 1 << last_bits:
        return None
    value = numbers[-1]
    for n, number in enumerate(numbers[:-1]):
        value |= number << (24 - 8 * n)
    return ipaddress.IPv4Address(value)


def reachable(address: str, allow_loopback: bool = False) -> bool:
    """Whether the brain may connect to an address: one on the internet, not loopback, private (RFC 1918,
    fc00::/7), link-local (169.254/16, fe80::/10), shared (100.64/10), multicast, unspecified, reserved or a
    metadata service's; an IPv6 form of an IPv4 address (mapped, 6to4, NAT64) is judged as that address."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour or (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in NAT64
                                                   else None)
        if inner is not None:
            return reachable(str(inner), allow_loopback)
    if allow_loopback and ip.is_loopback:
        return True
    return (ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified or ip.is_loopback
                                  or ip.is_link_local or ip.is_private)
            and ip not in METADATA_ADDRESSES and not any(ip in network for network in NOT_INTERNET))


def on_internet(addresses: Sequence[str], allow_loopback: bool = False) -> bool:
    """Whether a host's addresses (all getaddrinfo gave) put it on the internet: it resolved, and none is inside."""
    return bool(addresses) and all(reachable(a, allow_loopback) for a in addresses)


def allowed(endpoint: str, addresses: Sequence[str], allow_loopback: bool = False) -> bool:
    """Whether the brain may POST to `endpoint` now that its host resolved to `addresses` (checked at every send:
    a name that pointed to the internet when it subscribed may point inside since)."""
    try:
        check_endpoint(endpoint, allow_loopback)
    except InvalidInput:  # stored before the rule was what it is now
        return False
    return on_internet(addresses, allow_loopback)


def check_resolved(host: str, addresses: Sequence[str], allow_loopback: bool = False) -> None:
    """Refuse a subscription whose host does not resolve, or resolves to any address inside."""
    if not addresses:
        raise InvalidInput(f"subscription.endpoint's host {host} does not resolve, so no push service can be "
                           "reached there")
    if not on_internet(addresses, allow_loopback):
        raise InvalidInput(f"subscription.endpoint's host {host} resolves to an address on this machine or its "
                           "network, and push goes only to services on the internet")


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
