"""Parts of a backup being imported, as files in a folder of the data directory (one machine's staging area)."""

import os
import shutil
import tempfile
import time
from pathlib import Path


class FolderParts:
    """`put` and `get` by key (a relative path this service makes: `prefix/name`), each file written whole (to a
    temporary name, then renamed) and readable by the owner alone; `remove` drops a prefix with everything under it,
    `sweep` every prefix left longer than a given time (an import a client gave up on)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".part-")  # made 0600
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise KeyError(key) from None

    def remove(self, prefix: str) -> None:
        shutil.rmtree(self._path(prefix), ignore_errors=True)

    def sweep(self, under: str, older_than_s: float) -> None:
        """Remove each prefix directly under `under` last written more than `older_than_s` seconds ago."""
        cutoff = time.time() - older_than_s
        folder = self._path(under)
        for prefix in folder.iterdir() if folder.is_dir() else ():
            try:
                if prefix.stat().st_mtime < cutoff:
                    shutil.rmtree(prefix, ignore_errors=True)
            except FileNotFoundError:  # removed meanwhile
                pass

    def _path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root.resolve()) or path == self.root.resolve():
            raise ValueError(f"{key!r} is not a part's key")
        return path
