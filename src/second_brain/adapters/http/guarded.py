"""The guarded outbound HTTP client: how the brain reaches a host a member named (a push endpoint, a calendar feed,
a CalDAV server, Notion's API, a mail server's address). Push and every connector go through it, and nothing else
does.

A host is any member's choice, so the connection is made only to an address checked at that moment: the host is
resolved, every address checked (domain/push.on_internet: no private, loopback or metadata address, unless a test
allows loopback) and one of them connected to in one step, under httpx's own TLS (the certificate checked against
the host's name) and Host header. No proxy, no redirect followed for the caller. And a URL may be a capability (a
push endpoint, a secret iCal address): while `SECRET_URL` is set, httpx's request log line names only its origin.
"""

import functools
import logging
import socket
import ssl
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar

import httpcore
import httpx

from ...domain.push import on_internet

TIMEOUT = httpx.Timeout(8.0, connect=4.0)  # a push service answers in well under a second
# Set while a request whose URL is a capability (a push endpoint, a secret calendar feed) is under way: httpx's log
# line for it names the origin only.
SECRET_URL: ContextVar[bool] = ContextVar("secret_url", default=False)


def resolve(host: str) -> list[str]:
    """Every address getaddrinfo gives for `host` (OSError when it has none)."""
    return list(dict.fromkeys(str(info[4][0]) for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)))


def pinned_client(resolve: Callable[[str], Sequence[str]], allow_loopback: bool = False,
                  verify: ssl.SSLContext | bool = True) -> httpx.Client:
    """An httpx client that connects only to addresses it checked as it connects. No proxy (HTTPS_PROXY is not
    read): a proxy would resolve the name again, unchecked."""
    return httpx.Client(transport=PinnedTransport(resolve, allow_loopback, verify), timeout=TIMEOUT,
                        follow_redirects=False, trust_env=False)


@functools.cache
def _default_tls() -> ssl.SSLContext:
    return httpx.create_ssl_context()


class PinnedTransport(httpx.HTTPTransport):
    """httpx's own transport, its sockets opened by PinnedBackend: httpx takes no network backend, so its pool is
    made again with one (httpx's default limits)."""

    def __init__(self, resolve: Callable[[str], Sequence[str]], allow_loopback: bool = False,
                 verify: ssl.SSLContext | bool = True) -> None:
        # One for both pools; the default one made once a process (loading certifi's certificates takes 20 ms of CPU,
        # which every sync of a calendar or Notion paid).
        context = _default_tls() if verify is True else httpx.create_ssl_context(verify=verify)
        super().__init__(verify=context)
        self._pool = httpcore.ConnectionPool(ssl_context=context,
                                             max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0,
                                             network_backend=PinnedBackend(resolve, allow_loopback))


class PinnedBackend(httpcore.NetworkBackend):
    """httpcore's sockets, opened only to the addresses a host resolves to at that moment and only when every one
    of them is on the internet: the check and the connection use one lookup, so a DNS answer that changes after
    the check (rebinding) is never connected to. TLS and the Host header still name the host."""

    def __init__(self, resolve: Callable[[str], Sequence[str]], allow_loopback: bool = False) -> None:
        self.resolve = resolve
        self.allow_loopback = allow_loopback
        self.sockets = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        try:
            addresses = list(self.resolve(host))
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"{host} does not resolve") from exc
        if not on_internet(addresses, self.allow_loopback):
            raise httpcore.ConnectError(f"{host} resolves to an address push may not reach")
        failure: Exception | None = None
        for address in addresses:
            try:
                return self.sockets.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("push goes over TCP only")

    def sleep(self, seconds: float) -> None:
        self.sockets.sleep(seconds)


class PushRequestRedaction(logging.Filter):
    """httpx logs each request's URL at INFO; a request made while `SECRET_URL` is set (a push endpoint, a secret
    calendar feed: whoever has it can push to the device, or read the calendar) is logged as its origin only."""

    def filter(self, record: logging.LogRecord) -> bool:
        if SECRET_URL.get() and isinstance(record.args, tuple):
            record.args = tuple(f"{a.scheme}://{a.netloc.decode()}/…" if isinstance(a, httpx.URL) else a
                                for a in record.args)
        return True


def redact_push_requests() -> None:
    """The redaction, once, on httpx's own logger: the requests of every other client are logged as before."""
    logger = logging.getLogger("httpx")
    if not any(isinstance(f, PushRequestRedaction) for f in logger.filters):
        logger.addFilter(PushRequestRedaction())
