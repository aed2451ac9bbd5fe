"""OAuth for MCP clients over the event store: the sign-in, code and token bookkeeping (`OAuthService`), whether
the person behind a grant still stands (`Standing`), and the resolver that turns an access token back into the
identity it was granted to (`OAuthIdentities`). The authorization server the `mcp` package's routes call is
app/team/oauth_provider.py; this module does not import the `mcp` package (the REST API starts without it).

Every client is public (token_endpoint_auth_method "none", PKCE S256): a secret minted at dynamic registration
proves only that the caller registered, and keeping it would put a credential in the log.
"""

import base64
import hmac
import secrets
import uuid
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, Literal, overload
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ...domain import oauth as o
from ...domain.errors import ConcurrencyConflict, NotFound, Unauthorized
from ...domain.identity import Identity
from ...domain.team import token_hash
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ..handling import Context, envelopes, retrying
from .service import TeamService

SPENT = "This sign-in link has expired or was already used: start again from your app"
CLIENT_ACTOR = "oauth-client"  # the actor of what a client does before anyone signs in
MAX_REQUEST_ID = 16_000  # characters: a sealed request with the longest URIs and state fits many times over


class OAuthService:
    """Clients, sign-ins, codes, tokens and grants: each lookup one stream read, each change one append.

    `sign_in` checks a brain token typed on the consent page (the owner's or a member's, never an OAuth token);
    `standing` whether the person a grant was signed in by still has the access they signed in with (the identity,
    else Unauthorized)."""

    def __init__(self, store: EventStore, clock: Clock, sign_in: Callable[[str], Identity],
                 standing: Callable[[str, str], Identity]) -> None:
        self.store = store
        self.clock = clock
        self.sign_in = sign_in
        self.standing = standing
        self._signing_key: bytes | None = None

    # -- clients and sign-ins: sealed, never stored -----------------------------------------------------------------

    def register(self, record: dict[str, Any]) -> str:
        """The client id of a new client: its record, sealed. Nothing is stored (but the key, the first time)."""
        return o.seal(self._key(), o.CLIENT_PREFIX, record)

    def client(self, client_id: str) -> dict[str, Any] | None:
        """A client's record: unsealed from its id, or the registration an earlier release kept in the log."""
        if client_id.startswith(o.CLIENT_PREFIX + "_"):
            key = self._key(make=False)
            record = o.unseal(key, o.CLIENT_PREFIX, client_id) if key else None
            return {**record, "client_id": client_id} if record is not None else None
        history = self._events(o.client_stream(client_id))
        return history[0].metadata if history and isinstance(history[0], o.ClientRegistered) else None

    def request_sign_in(self, request: o.SignInRequested) -> str:
        """The id a checked authorization request is known by on the consent page: the request itself, sealed
        (with a nonce: two alike requests are two sign-ins)."""
        return o.seal(self._key(), o.REQUEST_PREFIX, {**asdict(request), "scopes": list(request.scopes),
                                                      "nonce": secrets.token_urlsafe(12)})

    def pending(self, request_id: str) -> o.SignInRequested:
        """The request behind an id, while it is open: sealed by this brain, not expired, not yet allowed."""
        key = self._key(make=False)
        sealed = o.unseal(key, o.REQUEST_PREFIX, request_id) if key and len(request_id) < MAX_REQUEST_ID else None
        request = o.sign_in_of(sealed) if sealed is not None else None
        if request is None or request.expires_at <= self.clock.now_ms() or self._events(
                o.sign_in_stream(request_id)):
            raise NotFound(SPENT)
        return request

    def approve(self, request_id: str, token: str) -> str:
        """Sign in with a brain token: a code for that identity, and where the browser takes it. Unauthorized for a
        wrong, suspended or removed token (the request stays open); NotFound once the request is spent."""
        request = self.pending(request_id)
        who = self.sign_in(token)
        code = secrets.token_urlsafe(32)
        issued = o.code_for(request, who.actor_id, o.credential_of(token_hash(token)), self.clock.now_ms())
        try:
            self._append(who.actor_id, [(o.sign_in_stream(request_id), 0, [o.SignInDecided(True, who.actor_id)]),
                                        (o.code_stream(code), 0, [issued])])
        except ConcurrencyConflict as exc:  # allowed meanwhile, in another tab or by a replayed form
            raise NotFound(SPENT) from exc
        return redirect_to(request.redirect_uri, code=code, state=request.state)

    def deny(self, request_id: str) -> str:
        """Where the browser goes when the person declines; nothing is written (nobody signed in)."""
        request = self.pending(request_id)
        return redirect_to(request.redirect_uri, error="access_denied",
                                      error_description="The person declined", state=request.state)

    # -- codes and tokens -------------------------------------------------------------------------------------------

    def code(self, code: str) -> o.CodeIssued | None:
        return o.open_code(self._events(o.code_stream(code)))

    def presented_code(self, code: str) -> o.CodeIssued | None:
        """A code presented at the token endpoint: the code while it is open; one presented again after it was
        redeemed revokes every token it led to (someone else may hold it)."""
        history = self._events(o.code_stream(code))
        if o.is_redeemed(history):
            self.revoke_grant(o.digest(code), "code_replayed")
        return o.open_code(history)

    def redeem(self, code: str) -> tuple[str, str, o.TokenIssued]:
        """Tokens for a code, once, while the person who allowed it still stands: a second redemption (or one
        racing it) is ConcurrencyConflict or NotFound and revokes the grant; a person since suspended, removed or
        rotated is Unauthorized."""
        issued = self.code(code)
        if issued is None:
            raise NotFound("authorization code was already used")
        self.standing(issued.actor_id, issued.credential)
        family = o.digest(code)
        try:
            return self._issue(issued, family, issued.scopes, [(o.code_stream(code), 1, [o.CodeRedeemed()])])
        except ConcurrencyConflict:
            self.revoke_grant(family, "code_replayed")
            raise

    def token(self, token: str, kind: str) -> o.TokenIssued | None:
        return o.live_token(self._events(o.token_stream(o.digest(token))), kind, self.clock.now_ms())

    def presented_refresh(self, refresh: str) -> o.TokenIssued | None:
        """A refresh token presented at the token endpoint: the token while it is live; one already rotated away
        revokes its whole grant (either the client or a thief used it before)."""
        history = self._events(o.token_stream(o.digest(refresh)))
        first = history[0] if history else None
        if isinstance(first, o.TokenIssued) and first.kind == o.REFRESH and o.was_rotated(history):
            self.revoke_grant(first.grant, "refresh_reused")
        return o.live_token(history, o.REFRESH, self.clock.now_ms())

    def rotate(self, refresh: str, scopes: tuple[str, ...]) -> tuple[str, str, o.TokenIssued]:
        """A new pair for a live refresh token, which is spent with the access token issued beside it, while the
        person who allowed it still stands (else Unauthorized). Two rotations racing revoke the grant."""
        history = self._events(o.token_stream(o.digest(refresh)))
        issued = o.live_token(history, o.REFRESH, self.clock.now_ms())
        if issued is None:
            raise NotFound("refresh token does not exist")
        self.standing(issued.actor_id, issued.credential)
        family = issued.grant or o.digest(refresh)  # a pair issued before grants were tracked starts one
        partner = self._events(o.token_stream(issued.pair))
        spent: list[tuple[str, int, list[object]]] = [
            (o.token_stream(o.digest(refresh)), len(history), [o.TokenRevoked("rotated")])]
        if not o.is_revoked(partner):
            spent.append((o.token_stream(issued.pair), len(partner), [o.TokenRevoked("rotated")]))
        try:
            return self._issue(issued, family, scopes, spent)
        except ConcurrencyConflict:
            self.revoke_grant(family, "refresh_reused")
            raise

    def revoke(self, token: str) -> None:
        """Revoke a token and the one issued with it; nothing for an unknown or already revoked token."""

        def attempt() -> None:
            own = o.token_stream(o.digest(token))
            history = self._events(own)
            issued = history[0] if history else None
            if not isinstance(issued, o.TokenIssued):
                return
            self._revoke_tokens(issued.actor_id, [own, o.token_stream(issued.pair)], "revoked")

        retrying(attempt)

    def revoke_grant(self, family: str, reason: str) -> None:
        """End a grant: its live pair revoked, and the grant marked so that nothing issues from it again."""

        def attempt() -> None:
            history = self._events(o.grant_stream(family))
            if not history or o.grant_revoked(history):
                return
            first = self._events(o.token_stream(o.live_pair(history)[0]))
            actor = first[0].actor_id if first and isinstance(first[0], o.TokenIssued) else CLIENT_ACTOR
            self._revoke_tokens(actor, [o.token_stream(d) for d in o.live_pair(history)], "grant_revoked",
                                [(o.grant_stream(family), len(history), [o.GrantRevoked(reason)])])

        if family:
            retrying(attempt)

    # -- helpers ----------------------------------------------------------------------------------------------------

    def _revoke_tokens(self, actor: str, streams: list[str], reason: str,
                       also: list[tuple[str, int, list[object]]] | None = None) -> None:
        read = [(stream, self._events(stream)) for stream in streams]
        batch: list[tuple[str, int, list[object]]] = [(stream, len(h), [o.TokenRevoked(reason)])
                                                      for stream, h in read if h and not o.is_revoked(h)]
        if batch or also:
            self._append(actor, [*batch, *(also or [])])

    def _issue(self, grant: o.CodeIssued | o.TokenIssued, family: str, scopes: tuple[str, ...],
               spent: list[tuple[str, int, list[object]]]) -> tuple[str, str, o.TokenIssued]:
        granted = self._events(o.grant_stream(family))
        if o.grant_revoked(granted):
            raise NotFound("this authorization was revoked")
        access, refresh = (o.TOKEN_PREFIX + secrets.token_urlsafe(32) for _ in range(2))
        pair = o.token_pair(grant, family, scopes, o.digest(access), o.digest(refresh), self.clock.now_ms())
        self._append(grant.actor_id, [
            *spent, (o.token_stream(o.digest(access)), 0, [pair[0]]), (o.token_stream(o.digest(refresh)), 0, [pair[1]]),
            (o.grant_stream(family), len(granted), [o.PairIssued(o.digest(access), o.digest(refresh))])])
        return access, refresh, pair[0]

    @overload
    def _key(self, make: Literal[True] = ...) -> bytes: ...
    @overload
    def _key(self, make: bool) -> bytes | None: ...

    def _key(self, make: bool = True) -> bytes | None:
        """The brain's signing key: read once per process, made by the first registration that needs one."""
        if self._signing_key is None:
            def attempt() -> bytes | None:
                history = self._events(o.KEY_STREAM)
                if history and isinstance(history[0], o.SigningKeyMade):
                    return base64.urlsafe_b64decode(history[0].key)
                if not make:
                    return None
                made = o.SigningKeyMade(base64.urlsafe_b64encode(secrets.token_bytes(32)).decode())
                self._append(CLIENT_ACTOR, [(o.KEY_STREAM, 0, [made])])
                return base64.urlsafe_b64decode(made.key)

            self._signing_key = retrying(attempt)
        return self._signing_key

    def _events(self, stream: str) -> list[object]:
        return [e.event for e in self.store.read_stream(stream)]

    def _append(self, actor: str, batch: list[tuple[str, int, list[object]]]) -> None:
        """One atomic append over several streams, each at the version its events were decided against."""
        ctx = Context(Identity(actor, actor, "member", ""), f"oauth-{uuid.uuid4().hex}")
        now = self.clock.now_ms()
        self.store.append([e for stream, version, events in batch
                           for e in envelopes(ctx, stream, version, events, "", now)])


class Standing:
    """Whether the person a grant was signed in by still has that access: the identity they act as now, or
    Unauthorized as their brain token would answer (suspended, removed), or invalid_token once the brain token
    they signed in with was rotated."""

    def __init__(self, team: TeamService, owner_token: str | Callable[[], str]) -> None:
        self.team = team
        self.owner_token = owner_token if callable(owner_token) else (lambda: owner_token)

    def __call__(self, actor_id: str, credential: str) -> Identity:
        state = self.team.state()
        if actor_id == self.team.owner.actor_id:
            who, held = self.team.owner_identity(state), token_hash(self.owner_token())
        else:
            member = state.members.get(actor_id)
            if member is None:
                raise Unauthorized()
            who, held = self.team.member_identity(member.token_hash, state), member.token_hash
        if not hmac.compare_digest(o.credential_of(held), credential):
            raise Unauthorized()
        return who


class OAuthIdentities:
    """An access token → the identity it was granted to, as that identity is now (see Standing)."""

    def __init__(self, oauth: OAuthService) -> None:
        self.oauth = oauth

    def __call__(self, token: str) -> Identity:
        issued = self.oauth.token(token, o.ACCESS)
        if issued is None:
            raise Unauthorized()
        return self.oauth.standing(issued.actor_id, issued.credential)


def redirect_to(base: str, **params: str | None) -> str:
    """`base` with `params` (those not None) added to its query, as OAuth sends a browser back to a client."""
    parts = urlsplit(base)
    query = [*parse_qsl(parts.query, keep_blank_values=True), *((k, v) for k, v in params.items() if v is not None)]
    return urlunsplit(parts._replace(query=urlencode(query)))
