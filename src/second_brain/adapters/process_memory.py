"""Giving freed memory back to the system: glibc keeps what large, short-lived objects were freed from."""

import ctypes
from typing import Any

M_ARENA_MAX = -8  # glibc's mallopt parameter: how many malloc arenas threads may share


def release_freed_memory() -> None:
    """Hand the memory a large payload's objects were freed from back to the system: glibc keeps it otherwise,
    and a 100k-memory backup parsed once per page, or a brain's worth of texts embedded, would leave the
    server holding hundreds of MB."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def limit_malloc_arenas(arenas: int = 2) -> None:
    """Let the process's threads share `arenas` malloc arenas. glibc gives each thread that allocates while
    another holds an arena its own (up to 8 per core): a server's request, indexer and model threads each leave
    their arena's free pieces scattered between live objects, tens of MB apiece that a trim cannot hand back
    whole. Call before the threads start."""
    if _LIBC is not None:
        _LIBC.mallopt(M_ARENA_MAX, arenas)


def _libc() -> Any:
    libc = ctypes.CDLL(None)  # the symbols already loaded: glibc's malloc_trim where there is one
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None  # not glibc: nothing to do


_LIBC = _libc()
