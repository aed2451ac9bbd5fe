"""One TLS context for the suite's HTTP clients. httpx loads the trusted certificates afresh for every client it
makes with the default `verify=True` (20-30 ms of CPU each), and the suite makes thousands, most to plain HTTP on
loopback: a server being waited for is asked every 50 ms, a test's `httpx.get` is a client of its own, and so is
each of the MCP SDK's sessions. `install()` (tests/conftest.py) has every such client share CONTEXT, made the same
way: what it trusts is unchanged. A client given a context, a CA file or `verify=False` makes its own as before."""

import ssl
from typing import Any

import httpx
from httpx._transports import default

CONTEXT = httpx.create_ssl_context()
_create = default.create_ssl_context


def _shared(verify: ssl.SSLContext | str | bool = True, cert: Any = None, trust_env: bool = True) -> ssl.SSLContext:
    if verify is True and cert is None and trust_env:
        return CONTEXT
    return _create(verify=verify, cert=cert, trust_env=trust_env)


def install() -> None:
    default.create_ssl_context = _shared  # type: ignore[assignment]
