"""Bearer-token authentication: header only, compared in constant time."""

import hashlib
import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from fastapi import Request
from fastapi.security import HTTPBearer

from ...app.team.service import TeamService
from ...domain.errors import Unauthorized
from ...domain.identity import Identity
from ...domain.oauth import TOKEN_PREFIX as OAUTH_PREFIX
from ...domain.team import token_hash

OAUTH_ELSEWHERE = "This token was issued to an MCP client: it is accepted at /mcp only"
QUERY_TOKEN_NAMES = ("token", "access_token", "auth", "auth_token", "key")
# A token the lookup did not know (a member's or an OAuth token: each a query of the event log on AWS) is refused
# again from memory for this long, so a stranger repeating one at the public MCP URL costs one query, not one per
# request. Only unknown tokens: a token is made by the brain before anyone holds it, so one unknown now is unknown
# for good, while a suspended member restored gets in at once; and a right token is never held, so a suspension
# or a removal applies at once.
REFUSAL_SECONDS = 30.0
REFUSALS_KEPT = 1024
# Declares the scheme in the OpenAPI schema only; BearerAuth does the checking.
BEARER_SCHEME = HTTPBearer(auto_error=False, scheme_name="bearer",
                           description="The owner's token (BRAIN_AUTH_TOKEN) or a member's token (POST /team/members).")


class BearerAuth:
    """Resolves a request's bearer token to an identity: the owner's, or a member's of the team.

    `owner_token` is the token, or a function returning the current one (on AWS, read again from the secret
    every few minutes, so a rotated token is taken up without a redeploy). Member tokens are known by their
    SHA-256 only (the team's fold). `oauth`, given for /mcp alone, resolves the access tokens OAuth clients were
    issued for /mcp (app/team/oauth.py) to the identity that signed in for them; anywhere else such a token is refused,
    so an app someone allowed to use MCP cannot reach the rest of the API (team administration, export)."""

    def __init__(self, owner_token: str | Callable[[], str], team: TeamService,
                 oauth: Callable[[str], Identity] | None = None, now: Callable[[], float] = time.monotonic) -> None:
        self._token = owner_token if callable(owner_token) else (lambda: owner_token)
        self._team = team
        self._oauth = oauth
        self._now = now
        self._refused: OrderedDict[bytes, tuple[float, Unauthorized]] = OrderedDict()  # oldest first
        self._refused_lock = threading.Lock()

    def __call__(self, request: Request) -> Identity:
        # Tokens in URLs end up in logs and browser history: refused outright, as in the reference's v3.
        if any(name in request.query_params for name in QUERY_TOKEN_NAMES):
            raise Unauthorized()
        return self.check(request.headers.get("authorization", ""))

    def check(self, authorization: str) -> Identity:
        """The identity an Authorization header's bearer token stands for; Unauthorized for any other."""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized()
        token = token.strip()
        digest = hashlib.sha256(token.encode()).digest()
        if hmac.compare_digest(digest, hashlib.sha256(self._token().encode()).digest()):
            return self._team.owner_identity()
        oauth = self._oauth if token.startswith(OAUTH_PREFIX) else None
        if token.startswith(OAUTH_PREFIX) and oauth is None:
            raise Unauthorized(OAUTH_ELSEWHERE)
        self._refused_before(digest)
        try:
            return oauth(token) if oauth else self._team.member_identity(token_hash(token))
        except Unauthorized as refusal:
            if refusal.details.get("code") == "invalid_token":
                self._remember(digest, refusal)
            raise

    def _refused_before(self, digest: bytes) -> None:
        """Raise again a refusal of this token still remembered."""
        with self._refused_lock:
            held = self._refused.get(digest)
            if held is None:
                return
            until, refusal = held
            if until <= self._now():
                del self._refused[digest]
                return
        raise Unauthorized(refusal.message, code=str(refusal.details.get("code", "invalid_token")))

    def _remember(self, digest: bytes, refusal: Unauthorized) -> None:
        with self._refused_lock:
            self._refused[digest] = (self._now() + REFUSAL_SECONDS, refusal)
            self._refused.move_to_end(digest)
            while len(self._refused) > REFUSALS_KEPT:
                self._refused.popitem(last=False)
