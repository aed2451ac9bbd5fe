"""Large files kept beside the API: backups past what one request or response may carry (6 MB on Lambda)."""

from typing import Protocol


class BlobStore(Protocol):
    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> bytes:
        """The object's bytes; KeyError if there is none."""

    def download_url(self, key: str, seconds: int) -> str:
        """A URL anyone holding it may GET the object from, for `seconds`."""

    def upload_url(self, key: str, seconds: int) -> str:
        """A URL anyone holding it may PUT the object to, for `seconds`."""
