"""Where an OAuth client may send a person back to, and the sealing of what the brain does not store."""

import pytest

from second_brain.domain import oauth as o


@pytest.mark.parametrize("uri", [
    "https://claude.ai/api/mcp/auth_callback", "https://app.example.com:8443/cb?x=1", "http://localhost:3030/callback",
    "http://127.0.0.1:51234/", "http://[::1]:8080/cb", "http://LOCALHOST/cb",
])
def test_https_and_loopback_http_redirects_are_accepted(uri):
    assert o.redirect_refusal(uri) is None


@pytest.mark.parametrize("uri", [
    "javascript:alert(1)//", "data:text/html,<script>alert(1)</script>", "http://evil.example/cb",
    "http://localhost.evil.example/cb", "http://127.0.0.1.nip.io/cb", "http://user@evil.example/cb",
    "file:///etc/passwd", "vbscript:msgbox(1)", "https:///no-host", "https://app.example.com/cb#fragment",
    "ftp://example.com/cb", "com.example.app:/callback", "https://example.com/" + "a" * o.MAX_REDIRECT_URI_CHARS,
])
def test_every_other_redirect_is_refused(uri):
    assert o.redirect_refusal(uri)


def test_a_loopback_redirect_matches_on_any_port_and_nothing_else_does():
    assert o.same_redirect("http://127.0.0.1:3000/cb", "http://127.0.0.1:61234/cb")
    assert o.same_redirect("http://localhost/cb", "http://localhost:8080/cb")
    assert not o.same_redirect("http://127.0.0.1:3000/cb", "http://127.0.0.1:3000/other")
    assert not o.same_redirect("http://127.0.0.1:3000/cb", "http://localhost:3000/cb")
    assert not o.same_redirect("https://app.example.com/cb", "https://app.example.com:8443/cb")
    assert not o.same_redirect("http://localhost:3000/cb", "http://localhost.evil.example:3000/cb")
    assert o.same_redirect("https://app.example.com/cb", "https://app.example.com/cb")


def test_a_sealed_record_reads_back_only_with_its_key_and_kind():
    sealed = o.seal(b"key", o.CLIENT_PREFIX, {"client_name": "App", "redirect_uris": ["http://localhost/cb"]})
    assert o.unseal(b"key", o.CLIENT_PREFIX, sealed) == {"client_name": "App",
                                                         "redirect_uris": ["http://localhost/cb"]}
    assert o.unseal(b"other", o.CLIENT_PREFIX, sealed) is None
    assert o.unseal(b"key", o.REQUEST_PREFIX, sealed) is None
    body, mac = sealed.rsplit(".", 1)
    tampered = o.seal(b"key", o.CLIENT_PREFIX, {"client_name": "App", "redirect_uris": ["https://evil.example/"]})
    assert o.unseal(b"key", o.CLIENT_PREFIX, f"{tampered.rsplit('.', 1)[0]}.{mac}") is None
    assert o.unseal(b"key", o.CLIENT_PREFIX, body) is None
