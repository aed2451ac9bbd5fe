"""OAuth for MCP clients: registered clients, pending sign-ins, authorization codes and tokens, each on a stream of
its own keyed so that every lookup is one read, and the pure folds and decisions over them.

Codes and tokens are known by their SHA-256 only: the hash names the stream and pairs an access token with its
refresh token; the plaintext is handed out once and never stored. A sign-in is decided once and a code redeemed
once because the decision is the stream's second event: a second writer appending at the same version loses.
"""

import hashlib
from dataclasses import dataclass, replace
from typing import Any, ClassVar

SCOPE = "brain"  # one scope: what a token may do is what its identity may do
TOKEN_PREFIX = "sbo_"  # access and refresh tokens, told apart from member (sbm_) and owner tokens at a glance
ACCESS, REFRESH = "access", "refresh"
SIGN_IN_TTL_MS = 10 * 60_000
CODE_TTL_MS = 5 * 60_000
ACCESS_TTL_MS = 60 * 60_000
REFRESH_TTL_MS = 30 * 24 * 60 * 60_000


@dataclass(frozen=True)
class ClientRegistered:
    """A client registered itself (RFC 7591); `metadata` is its record as the registration answered it."""

    client_id: str
    metadata: dict[str, Any]
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class SignInRequested:
    """A client sent someone to sign in (a checked authorization request), waiting for them on the consent page."""

    client_id: str
    redirect_uri: str
    redirect_uri_explicit: bool
    code_challenge: str  # PKCE S256
    scopes: tuple[str, ...]
    state: str | None
    resource: str | None
    expires_at: int  # unix ms
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class SignInDecided:
    """The person allowed the client (as `actor_id`) or turned it away; either way the request is spent."""

    approved: bool
    actor_id: str
    SCHEMA: ClassVar[int] = 1


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


@dataclass(frozen=True)
class CodeRedeemed:
    SCHEMA: ClassVar[int] = 1


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
    SCHEMA: ClassVar[int] = 1


@dataclass(frozen=True)
class TokenRevoked:
    reason: str  # revoked | rotated
    SCHEMA: ClassVar[int] = 1


OAUTH_EVENTS = (ClientRegistered, SignInRequested, SignInDecided, CodeIssued, CodeRedeemed, TokenIssued, TokenRevoked)


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


def credential_of(token_hash: str) -> str:
    """What a grant remembers of the brain token it was signed in with (given that token's SHA-256)."""
    return digest(f"oauth-credential:{token_hash}")


# -- folds: the open item of a stream, or None once it is spent, expired or unknown ------------------------------------


def open_sign_in(history: list[object], now: int) -> SignInRequested | None:
    first = history[0] if len(history) == 1 else None
    return first if isinstance(first, SignInRequested) and first.expires_at > now else None


def open_code(history: list[object]) -> CodeIssued | None:
    """The code if not yet redeemed; its expiry is the token endpoint's to judge (it says so)."""
    first = history[0] if len(history) == 1 else None
    return first if isinstance(first, CodeIssued) else None


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


def token_pair(grant: CodeIssued | TokenIssued, scopes: tuple[str, ...], access_digest: str, refresh_digest: str,
               now: int) -> tuple[TokenIssued, TokenIssued]:
    """An access token and its refresh token, for the identity and client a code or an older refresh token names."""
    access = TokenIssued(ACCESS, grant.client_id, grant.actor_id, grant.credential, scopes, grant.resource,
                         now + ACCESS_TTL_MS, refresh_digest)
    return access, replace(access, kind=REFRESH, expires_at=now + REFRESH_TTL_MS, pair=access_digest)
