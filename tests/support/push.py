"""A push gateway for tests, which records what it is asked to send and answers 201 (or the status set per endpoint),
and a resolver that answers from a table instead of DNS."""

import json

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from second_brain.domain.push import encode


class FakeGateway:
    def __init__(self, name: str = "key") -> None:
        self.name = name
        self.sent: list[tuple[str, dict, int]] = []  # (endpoint, payload, ttl)
        self.status: dict[str, int] = {}
        self.keys_made = 0

    def send(self, device, payload, ttl, vapid_private_key, topic=""):
        self.sent.append((device.endpoint, json.loads(payload), ttl))
        return self.status.get(device.endpoint, 201)

    def new_key_pair(self):
        self.keys_made += 1
        return f"{self.name}-public-{self.keys_made}", f"{self.name}-private-{self.keys_made}"


def p256dh() -> str:
    """A browser's subscription key: a fresh P-256 public key, base64url."""
    key = ec.generate_private_key(ec.SECP256R1()).public_key()
    return encode(key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))


PUBLIC_ADDRESS = "93.184.215.14"  # what FakeResolver answers for a host it was not told about: an internet address


class FakeResolver:
    """DNS for tests (no network): each host's addresses from `table`, a public address for any other host; a host
    mapped to no address does not resolve (OSError, as getaddrinfo)."""

    def __init__(self, table: dict[str, list[str]] | None = None) -> None:
        self.table = dict(table or {})
        self.asked: list[str] = []

    def __call__(self, host: str) -> list[str]:
        self.asked.append(host)
        addresses = self.table.get(host, [PUBLIC_ADDRESS])
        if not addresses:
            raise OSError(f"{host}: Name or service not known")
        return addresses
