"""OAuth for MCP clients over the event store: the sign-in, code and token bookkeeping (`OAuthService`), the
authorization server the `mcp` package's routes call (`BrainOAuthProvider`), and the resolver that turns an access
token back into the identity it was granted to (`OAuthIdentities`).

Every client is public (token_endpoint_auth_method "none", PKCE S256): a secret minted at dynamic registration
proves only that the caller registered, and keeping it would put a credential in the log.
"""

import functools
import hmac
import secrets
import uuid
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode

import anyio.to_thread
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from ..domain import oauth as o
from ..domain.errors import ConcurrencyConflict, NotFound, Unauthorized
from ..domain.identity import Identity
from ..domain.team import token_hash
from ..ports.clock import Clock
from ..ports.event_store import EventStore
from .handling import Context, envelopes, retrying
from .team import TeamService

T = TypeVar("T")
SPENT = "This sign-in link has expired or was already used: start again from your app"
CLIENT_ACTOR = "oauth-client"  # the actor of what a client does before anyone signs in


class OAuthService:
    """Clients, sign-ins, codes and tokens: each lookup one stream read, each change one append.

    `sign_in` checks a brain token typed on the consent page (the owner's or a member's, never an OAuth token)."""

    def __init__(self, store: EventStore, clock: Clock, sign_in: Callable[[str], Identity]) -> None:
        self.store = store
        self.clock = clock
        self.sign_in = sign_in

    def register(self, client_id: str, metadata: dict[str, Any]) -> None:
        self._append(CLIENT_ACTOR, [(o.client_stream(client_id), 0, [o.ClientRegistered(client_id, metadata)])])

    def client(self, client_id: str) -> dict[str, Any] | None:
        history = self._events(o.client_stream(client_id))
        return history[0].metadata if history and isinstance(history[0], o.ClientRegistered) else None

    def request_sign_in(self, request: o.SignInRequested) -> str:
        """Keep a checked authorization request for the consent page; the unguessable id it is known by."""
        request_id = secrets.token_urlsafe(32)
        self._append(CLIENT_ACTOR, [(o.sign_in_stream(request_id), 0, [request])])
        return request_id

    def pending(self, request_id: str) -> o.SignInRequested:
        found = o.open_sign_in(self._events(o.sign_in_stream(request_id)), self.clock.now_ms())
        if found is None:
            raise NotFound(SPENT)
        return found

    def approve(self, request_id: str, token: str) -> str:
        """Sign in with a brain token: a code for that identity, and where the browser takes it. Unauthorized for a
        wrong, suspended or removed token (the request stays open); NotFound once the request is spent."""
        request = self.pending(request_id)
        who = self.sign_in(token)
        code = secrets.token_urlsafe(32)
        issued = o.code_for(request, who.actor_id, o.credential_of(token_hash(token)), self.clock.now_ms())
        self._decide(request_id, who.actor_id, [o.SignInDecided(True, who.actor_id)],
                     [(o.code_stream(code), 0, [issued])])
        return construct_redirect_uri(request.redirect_uri, code=code, state=request.state)

    def deny(self, request_id: str) -> str:
        request = self.pending(request_id)
        self._decide(request_id, CLIENT_ACTOR, [o.SignInDecided(False, "")], [])
        return construct_redirect_uri(request.redirect_uri, error="access_denied",
                                      error_description="The person declined", state=request.state)

    def code(self, code: str) -> o.CodeIssued | None:
        return o.open_code(self._events(o.code_stream(code)))

    def redeem(self, code: str) -> tuple[str, str, o.TokenIssued]:
        """Tokens for a code, once: a second redemption (or one racing it) is ConcurrencyConflict or NotFound."""
        issued = self.code(code)
        if issued is None:
            raise NotFound("authorization code was already used")
        return self._issue(issued, issued.scopes, [(o.code_stream(code), 1, [o.CodeRedeemed()])])

    def token(self, token: str, kind: str) -> o.TokenIssued | None:
        return o.live_token(self._events(o.token_stream(o.digest(token))), kind, self.clock.now_ms())

    def rotate(self, refresh: str, scopes: tuple[str, ...]) -> tuple[str, str, o.TokenIssued]:
        """A new pair for a live refresh token, which is spent with the access token issued beside it."""
        history = self._events(o.token_stream(o.digest(refresh)))
        issued = o.live_token(history, o.REFRESH, self.clock.now_ms())
        if issued is None:
            raise NotFound("refresh token does not exist")
        partner = self._events(o.token_stream(issued.pair))
        spent = [(o.token_stream(o.digest(refresh)), len(history), [o.TokenRevoked("rotated")])]
        if not o.is_revoked(partner):
            spent.append((o.token_stream(issued.pair), len(partner), [o.TokenRevoked("rotated")]))
        return self._issue(issued, scopes, spent)

    def revoke(self, token: str) -> None:
        """Revoke a token and the one issued with it; nothing for an unknown or already revoked token."""

        def attempt() -> None:
            own = o.token_stream(o.digest(token))
            history = self._events(own)
            issued = history[0] if history else None
            if not isinstance(issued, o.TokenIssued):
                return
            streams = [(own, history), (o.token_stream(issued.pair), self._events(o.token_stream(issued.pair)))]
            batch = [(stream, len(h), [o.TokenRevoked("revoked")]) for stream, h in streams if not o.is_revoked(h)]
            if batch:
                self._append(issued.actor_id, batch)

        retrying(attempt)

    # -- helpers ----------------------------------------------------------------------------------------------------

    def _decide(self, request_id: str, actor: str, decision: list[object],
                also: list[tuple[str, int, list[object]]]) -> None:
        try:
            self._append(actor, [(o.sign_in_stream(request_id), 1, decision), *also])
        except ConcurrencyConflict as exc:  # decided meanwhile, in another tab or by a replayed form
            raise NotFound(SPENT) from exc

    def _issue(self, grant: o.CodeIssued | o.TokenIssued, scopes: tuple[str, ...],
               spent: list[tuple[str, int, list[object]]]) -> tuple[str, str, o.TokenIssued]:
        access, refresh = (o.TOKEN_PREFIX + secrets.token_urlsafe(32) for _ in range(2))
        pair = o.token_pair(grant, scopes, o.digest(access), o.digest(refresh), self.clock.now_ms())
        self._append(grant.actor_id, [*spent, (o.token_stream(o.digest(access)), 0, [pair[0]]),
                                      (o.token_stream(o.digest(refresh)), 0, [pair[1]])])
        return access, refresh, pair[0]

    def _events(self, stream: str) -> list[object]:
        return [e.event for e in self.store.read_stream(stream)]

    def _append(self, actor: str, batch: list[tuple[str, int, list[object]]]) -> None:
        """One atomic append over several streams, each at the version its events were decided against."""
        ctx = Context(Identity(actor, actor, "member", ""), f"oauth-{uuid.uuid4().hex}")
        now = self.clock.now_ms()
        self.store.append([e for stream, version, events in batch
                           for e in envelopes(ctx, stream, version, events, "", now)])


class OAuthIdentities:
    """An access token → the identity it was granted to, as that identity is now: a suspended or removed member's
    tokens answer as their brain token would, and rotating the brain token signed in with ends the grant."""

    def __init__(self, oauth: OAuthService, team: TeamService, owner_token: str | Callable[[], str]) -> None:
        self.oauth = oauth
        self.team = team
        self.owner_token = owner_token if callable(owner_token) else (lambda: owner_token)

    def __call__(self, token: str) -> Identity:
        issued = self.oauth.token(token, o.ACCESS)
        if issued is None:
            raise Unauthorized()
        state = self.team.state()
        if issued.actor_id == self.team.owner.actor_id:
            who, held = self.team.owner_identity(state), token_hash(self.owner_token())
        else:
            member = state.members.get(issued.actor_id)
            if member is None:
                raise Unauthorized()
            who, held = self.team.member_identity(member.token_hash, state), member.token_hash
        if not hmac.compare_digest(o.credential_of(held), issued.credential):
            raise Unauthorized()
        return who


class BrainOAuthProvider:
    """`OAuthAuthorizationServerProvider` for the `mcp` package's routes: `authorize` sends the person to the
    consent page; codes and tokens live in the event store (blocking calls run off the event loop)."""

    def __init__(self, oauth: OAuthService, consent_url: str, resource: str) -> None:
        self.oauth = oauth
        self.consent_url = consent_url
        self.resource = resource

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        metadata = await _run(self.oauth.client, client_id)
        return OAuthClientInformationFull.model_validate(metadata) if metadata else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        # The registration handler answers with this very object: the client learns it is public (RFC 7591 lets the
        # server replace requested metadata), and no secret is kept or sent.
        client_info.token_endpoint_auth_method = "none"
        client_info.client_secret = client_info.client_secret_expires_at = None
        await _run(self.oauth.register, client_info.client_id, client_info.model_dump(mode="json", exclude_none=True))

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if params.resource is not None and params.resource.rstrip("/") != self.resource:
            raise AuthorizeError("invalid_target", f"This server grants access to {self.resource} only")
        request = o.SignInRequested(
            client.client_id, str(params.redirect_uri), params.redirect_uri_provided_explicitly, params.code_challenge,
            tuple(params.scopes or [o.SCOPE]), params.state, params.resource,
            self.oauth.clock.now_ms() + o.SIGN_IN_TTL_MS)
        request_id = await _run(self.oauth.request_sign_in, request)
        return f"{self.consent_url}?{urlencode({'request': request_id})}"

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        issued = await _run(self.oauth.code, code)
        if issued is None:
            return None
        return AuthorizationCode(
            code=code, scopes=list(issued.scopes), expires_at=issued.expires_at / 1000, client_id=issued.client_id,
            code_challenge=issued.code_challenge, redirect_uri=AnyUrl(issued.redirect_uri),
            redirect_uri_provided_explicitly=issued.redirect_uri_explicit, resource=issued.resource,
            subject=issued.actor_id)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        return await _tokens(functools.partial(self.oauth.redeem, authorization_code.code),
                             "authorization code was already used")

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        issued = await _run(self.oauth.token, refresh_token, o.REFRESH)
        return None if issued is None else RefreshToken(token=refresh_token, **_grant(issued))

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        return await _tokens(functools.partial(self.oauth.rotate, refresh_token.token, tuple(scopes)),
                             "refresh token was already used")

    async def load_access_token(self, token: str) -> AccessToken | None:
        issued = await _run(self.oauth.token, token, o.ACCESS)
        return None if issued is None else AccessToken(token=token, **_grant(issued))

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        await _run(self.oauth.revoke, token.token)


async def _run(call: Callable[..., T], *args: Any) -> T:
    return await anyio.to_thread.run_sync(functools.partial(call, *args))


async def _tokens(issue: Callable[[], tuple[str, str, o.TokenIssued]], spent: str) -> OAuthToken:
    """The token response for a code or refresh token redeemed by `issue`; invalid_grant if it was spent."""
    try:
        access, refresh, issued = await _run(issue)
    except (NotFound, ConcurrencyConflict) as exc:
        raise TokenError("invalid_grant", spent) from exc
    return OAuthToken(access_token=access, expires_in=o.ACCESS_TTL_MS // 1000, scope=" ".join(issued.scopes),
                      refresh_token=refresh)


def _grant(issued: o.TokenIssued) -> dict[str, Any]:
    return {"client_id": issued.client_id, "scopes": list(issued.scopes), "expires_at": issued.expires_at // 1000,
            "resource": issued.resource, "subject": issued.actor_id}
