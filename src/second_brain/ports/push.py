"""The push port: one encrypted Web Push message to one device, and the key pair that signs them."""

from typing import Protocol

from ..domain.push import Device

UNREACHABLE = 0  # the status send() reports when no push service answered (network error, timeout)


class PushGateway(Protocol):
    def send(self, device: Device, payload: bytes, ttl: int, vapid_private_key: str, topic: str = "") -> int:
        """Encrypt `payload` for the device, sign as the brain (VAPID) and deliver it (a newer message on the same
        `topic` replaces an undelivered one); the push service's HTTP status, or UNREACHABLE."""

    def new_key_pair(self) -> tuple[str, str]:
        """A new VAPID key pair: (public, private), base64url."""
