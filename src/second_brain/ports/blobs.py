"""Large files kept beside the API: backups past what one request or response may carry (6 MB on Lambda)."""

from typing import Any, Protocol


class BlobStore(Protocol):
    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> bytes:
        """The object's bytes; KeyError if there is none."""

    def download_url(self, key: str, seconds: int) -> str:
        """A URL anyone holding it may GET the object from, for `seconds`."""

    def upload_form(self, key: str, seconds: int, max_bytes: int) -> dict[str, Any]:
        """A form (`url`, `fields`) anyone holding it may POST the object with, for `seconds`: one JSON file of
        1 to `max_bytes` bytes, to this key only (the storage refuses anything else)."""

    def stat(self, key: str) -> tuple[int, str]:
        """The stored object's size in bytes and a tag that changes with its content; KeyError when there is none."""
