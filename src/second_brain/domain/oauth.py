"""OAuth for MCP clients: sealed client ids and sign-in requests, authorization codes, tokens and their grants,
each on a stream of its own keyed so that every lookup is one read, and the pure folds and decisions over them.

Nobody has signed in when a client registers or sends someone to the consent page, so neither writes to the log:
the client's record is its client id and the pending sign-in is its request id, each sealed (HMAC-SHA256) with
the brain's one signing key, which is the only thing an unauthenticated caller ever makes the log hold (once).

Codes and tokens are known by their SHA-256 only: the hash names the stream and pairs an access token with its
refresh token; the plaintext is handed out once and never stored. A sign-in is decided once and a code redeemed
once because the decision is an append at a fixed version: a second writer appending at the same version loses.
Every pair a code leads to (the first, then each rotation) is listed on its grant's stream, so a replayed code or
a refresh token used twice revokes the whole family (OAuth 2.1 security BCP §4.14).
"""

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar
from urllib.parse import urlsplit

from .envelope import stored

SCOPE = "brain"  # one scope: what a token may do is what its identity may do
TOKEN_PREFIX = "sbo_"  # access and refresh tokens, told apart from member (sbm_) and owner tokens at a glance
ACCESS, REFRESH = "access", "refresh"
SIGN_IN_TTL_MS = 10 * 60_000
CODE_TTL_MS = 5 * 60_000
ACCESS_TTL_MS = 60 * 60_000
REFRESH_TTL_MS = 30 * 24 * 60 * 60_000


@stored
@dataclass(frozen=True)
class ClientRegistered:
    """A client registered itself (RFC 7591); `metadata` is its record as the registration answered it. Written
    by releases before client ids were sealed: such clients are still known by it."""

    client_id: str
    metadata: dict[str, Any]
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class SignInRequested:
    """A client sent someone to sign in (a checked authorization request), waiting for them on the consent page.
    Sealed into the request id now; as an event, only in logs of earlier releases."""

    client_id: str
    redirect_uri: str
    redirect_uri_explicit: bool
    code_challenge: str  # PKCE S256
    scopes: tuple[str, ...]
    state: str | None
    resource: str | None
    expires_at: int  # unix ms
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class SignInDecided:
    """The person allowed the client (as `actor_id`): the request is spent."""

    approved: bool
    actor_id: str
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class CodeIssued:
    client_id: str
    actor_id: str
    credential: str  # fingerprint of the brain token signed in with: rotating it ends the grant
    redirect_uri: str
    redirect_uri_explicit: bool
    code_challenge: str
    scopes: tuple[str, ...]
    resource: str | None
    expires_at: int
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class CodeRedeemed:
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class TokenIssued:
    kind: str  # access | refresh
    client_id: str
    actor_id: str
    credential: str
    scopes: tuple[str, ...]
    resource: str | None
    expires_at: int
    pair: str  # the hash of the other token issued with this one
    grant: str = ""  # the family: the code's digest, on every pair it leads to ("" before grants were tracked)
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class TokenRevoked:
    reason: str  # revoked | rotated | grant_revoked
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class PairIssued:
    """On the grant's stream: a pair of tokens (their digests) issued for the grant's code or a rotation."""

    access: str
    refresh: str
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class GrantRevoked:
    """The grant's code was replayed or one of its refresh tokens used again: every token of it is revoked."""

    reason: str  # code_replayed | refresh_reused
    SCHEMA: ClassVar[int] = 1


@stored
@dataclass(frozen=True)
class SigningKeyMade:
    """The key client ids and sign-in requests are sealed with: made once, by the first registration."""

    key: str  # base64url of 32 random bytes
    SCHEMA: ClassVar[int] = 1


KEY_STREAM = "oauth-key"
CLIENT_PREFIX, REQUEST_PREFIX = "sbc", "sbr"  # what a sealed client id and a sealed sign-in request start with
MAX_REDIRECT_URIS, MAX_REDIRECT_URI_CHARS, MAX_CLIENT_NAME_CHARS = 10, 2_000, 200
LOOPBACK_HOSTS = ("127.0.0.1", "[::1]", "localhost")


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def client_stream(client_id: str) -> str:
    return f"oauth-client-{digest(client_id)}"  # client ids are chosen by the SDK; hashed, any text names a stream


def sign_in_stream(request_id: str) -> str:
    return f"oauth-signin-{digest(request_id)}"


def code_stream(code: str) -> str:
    return f"oauth-code-{digest(code)}"


def token_stream(token_digest: str) -> str:
    return f"oauth-token-{token_digest}"


def grant_stream(grant: str) -> str:
    return f"oauth-grant-{grant}"


def credential_of(token_hash: str) -> str:
    """What a grant remembers of the brain token it was signed in with (given that token's SHA-256)."""
    return digest(f"oauth-credential:{token_hash}")


# -- sealing: a record nobody stores, carried by the client and checked on its way back -------------------------------


def seal(key: bytes, kind: str, payload: dict[str, Any]) -> str:
    """`payload` as `<kind>_<base64url JSON>.<MAC>`: readable, but not forgeable without the key."""
    body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    return f"{kind}_{body}.{_mac(key, kind, body)}"


def unseal(key: bytes, kind: str, sealed: str) -> dict[str, Any] | None:
    """The payload `seal` put in, or None for anything not sealed by this key as this kind."""
    head, _, mac = sealed.rpartition(".")
    body = head.removeprefix(f"{kind}_")
    if body == head or not hmac.compare_digest(mac, _mac(key, kind, body)):
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def _mac(key: bytes, kind: str, body: str) -> str:
    return _b64(hmac.new(key, f"{kind}.{body}".encode(), hashlib.sha256).digest())


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def sign_in_of(payload: dict[str, Any]) -> SignInRequested | None:
    """The sign-in request a sealed payload holds (its other keys, such as the nonce, are not the request's)."""
    try:
        found = {f.name: payload[f.name] for f in fields(SignInRequested)}
        return SignInRequested(**{**found, "scopes": tuple(found["scopes"])})
    except (TypeError, KeyError):
        return None


# -- redirect URIs -----------------------------------------------------------------------------------------------------


def redirect_refusal(uri: str) -> str | None:
    """Why a client may not be sent back to `uri`, or None: only https, or plain http to this machine's loopback
    (RFC 8252 §7.3), and never with a fragment (RFC 6749 §3.1.2)."""
    if len(uri) > MAX_REDIRECT_URI_CHARS:
        return f"a redirect URI has at most {MAX_REDIRECT_URI_CHARS} characters"
    parts = urlsplit(uri)
    if parts.fragment or "#" in uri:
        return "a redirect URI may not carry a fragment"
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and on_loopback(parts.netloc):
        return None
    return "a redirect URI must be https://, or http:// to 127.0.0.1, [::1] or localhost"


def same_redirect(registered: str, requested: str) -> bool:
    """Whether `requested` is the registered URI, a loopback one allowing any port (RFC 8252 §7.3)."""
    if registered == requested:
        return True
    mine, theirs = urlsplit(registered), urlsplit(requested)
    return (mine.scheme == theirs.scheme == "http" and on_loopback(mine.netloc)
            and _host(mine.netloc) == _host(theirs.netloc) and (mine.path or "/") == (theirs.path or "/")
            and mine.query == theirs.query)


def on_loopback(netloc: str) -> bool:
    """Whether a URL's netloc names this machine's loopback as OAuth's rules know it (127.0.0.1, [::1], localhost:
    the hosts the `mcp` package accepts in a plain-http issuer)."""
    return _host(netloc) in LOOPBACK_HOSTS


def _host(netloc: str) -> str:
    """The host part of a netloc, as written (brackets kept for IPv6), lower-cased, without user info or port."""
    host = netloc.rpartition("@")[2].lower()
    return host.partition("]")[0] + "]" if host.startswith("[") else host.partition(":")[0]


# -- folds: the open item of a stream, or None once it is spent, expired or unknown ------------------------------------


def open_code(history: list[object]) -> CodeIssued | None:
    """The code if not yet redeemed; its expiry is the token endpoint's to judge (it says so)."""
    first = history[0] if len(history) == 1 else None
    return first if isinstance(first, CodeIssued) else None


def is_redeemed(history: list[object]) -> bool:
    return any(isinstance(e, CodeRedeemed) for e in history)


def was_rotated(history: list[object]) -> bool:
    return any(isinstance(e, TokenRevoked) and e.reason == "rotated" for e in history)


def live_pair(history: list[object]) -> tuple[str, ...]:
    """The digests of the grant's newest pair: every older one was revoked by the rotation that replaced it."""
    pairs = [e for e in history if isinstance(e, PairIssued)]
    return (pairs[-1].access, pairs[-1].refresh) if pairs else ()


def grant_revoked(history: list[object]) -> bool:
    return any(isinstance(e, GrantRevoked) for e in history)


def live_token(history: list[object], kind: str, now: int) -> TokenIssued | None:
    first = history[0] if history else None
    if not isinstance(first, TokenIssued) or first.kind != kind or first.expires_at <= now:
        return None
    return None if any(isinstance(e, TokenRevoked) for e in history[1:]) else first


def is_revoked(history: list[object]) -> bool:
    return any(isinstance(e, TokenRevoked) for e in history)


# -- decisions ---------------------------------------------------------------------------------------------------------


def code_for(sign_in: SignInRequested, actor_id: str, credential: str, now: int) -> CodeIssued:
    return CodeIssued(sign_in.client_id, actor_id, credential, sign_in.redirect_uri, sign_in.redirect_uri_explicit,
                      sign_in.code_challenge, sign_in.scopes, sign_in.resource, now + CODE_TTL_MS)


def token_pair(grant: CodeIssued | TokenIssued, family: str, scopes: tuple[str, ...], access_digest: str,
               refresh_digest: str, now: int) -> tuple[TokenIssued, TokenIssued]:
    """An access token and its refresh token, for the identity and client a code or an older refresh token names,
    in the grant family `family`."""
    access = TokenIssued(ACCESS, grant.client_id, grant.actor_id, grant.credential, scopes, grant.resource,
                         now + ACCESS_TTL_MS, refresh_digest, family)
    return access, replace(access, kind=REFRESH, expires_at=now + REFRESH_TTL_MS, pair=access_digest)
