"""Secrets on one machine: one file each in `secrets/` beside the database, sealed with AES-256-GCM.

The key is derived from the brain's own secret (`content.key`, 0600), not kept with the files, and each file is
bound to its name (the associated data), so a file copied under another name does not open. The folder is the
owner's alone (0700), a file is written whole or not at all (a temporary file renamed over it), and a delete
overwrites the file before unlinking it. A backup of the database alone holds no secret; a restored brain without
its `secrets/` folder asks for each integration's secret again (the sync says so in words).
"""

import base64
import hashlib
import hmac
import json
import logging
import os
import re
import secrets as random
from collections.abc import Mapping
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

log = logging.getLogger("second_brain.secrets")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # a file name, never a path


class SealedFileSecrets:
    def __init__(self, folder: Path, brain_secret: bytes) -> None:
        self.folder = folder
        self._aead = AESGCM(hmac.new(brain_secret, b"second-brain integration secrets", hashlib.sha256).digest())

    def put(self, name: str, values: Mapping[str, str]) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        nonce = random.token_bytes(12)
        sealed = nonce + self._aead.encrypt(nonce, json.dumps(dict(values)).encode(), name.encode())
        temporary = self._path(name).with_suffix(f".{random.token_hex(4)}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(base64.b64encode(sealed))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self._path(name))

    def get(self, name: str) -> dict[str, str] | None:
        try:
            sealed = base64.b64decode(self._path(name).read_bytes(), validate=True)
        except FileNotFoundError:
            return None
        except ValueError:  # not a sealed file (cut short, overwritten): as good as missing
            log.warning("the sealed secret %s cannot be read", name)
            return None
        try:
            opened = self._aead.decrypt(sealed[:12], sealed[12:], name.encode())
        except (InvalidTag, ValueError):  # another brain's file, or one altered: as good as missing
            log.warning("the sealed secret %s does not open with this brain's key", name)
            return None
        return {str(k): str(v) for k, v in json.loads(opened).items()}

    def delete(self, name: str) -> None:
        path = self._path(name)
        try:
            size = path.stat().st_size
            with path.open("r+b") as out:  # the sealed bytes overwritten where the file system allows it
                out.write(b"\0" * size)
                out.flush()
                os.fsync(out.fileno())
            path.unlink()
        except FileNotFoundError:
            pass

    def _path(self, name: str) -> Path:
        if not NAME.match(name):
            raise ValueError(f"not a secret's name: {name!r}")
        return self.folder / f"{name}.sealed"
