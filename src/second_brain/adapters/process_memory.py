"""Giving freed memory back to the system: glibc keeps what large, short-lived objects were freed from."""

import ctypes
from typing import Any


def release_freed_memory() -> None:
    """Hand the memory a large payload's objects were freed from back to the system: glibc keeps it otherwise,
    and a 100k-memory backup parsed once per page, or a brain's worth of texts embedded, would leave the
    server holding hundreds of MB."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _libc() -> Any:
    libc = ctypes.CDLL(None)  # the symbols already loaded: glibc's malloc_trim where there is one
    return libc if hasattr(libc, "malloc_trim") else None  # not glibc (macOS, musl): nothing to trim


_LIBC = _libc()
