"""The suite's shared TLS context (tests/support/tls.py): a default httpx client uses it, and it trusts and checks
exactly what a context httpx makes itself would; a client asking for anything else gets its own."""

import ssl

import httpx
from httpx._transports import default

from tests.support import tls


def context_of(client: httpx.Client) -> ssl.SSLContext:
    return client._transport._pool._ssl_context  # type: ignore[attr-defined]


def test_a_default_client_shares_the_context_which_checks_as_httpx_would():
    with httpx.Client() as first, httpx.Client(timeout=3) as second:
        assert context_of(first) is context_of(second) is tls.CONTEXT
    own = tls._create()  # httpx's own, made afresh
    assert own is not tls.CONTEXT
    assert (tls.CONTEXT.verify_mode, tls.CONTEXT.check_hostname) == (own.verify_mode, own.check_hostname) == (
        ssl.CERT_REQUIRED, True)
    assert tls.CONTEXT.get_ca_certs() == own.get_ca_certs() and own.get_ca_certs()


def test_a_client_that_asks_for_another_context_gets_its_own():
    mine = ssl.create_default_context()
    with httpx.Client(verify=False) as unchecked, httpx.Client(verify=mine) as given:
        assert context_of(unchecked).verify_mode == ssl.CERT_NONE and context_of(unchecked) is not tls.CONTEXT
        assert context_of(given) is mine
    assert default.create_ssl_context is tls._shared
