"""Bearer-token authentication: header only, compared in constant time."""

import hashlib
import hmac

from fastapi import Request
from fastapi.security import HTTPBearer

from ...domain.errors import Unauthorized
from ...domain.identity import Identity

QUERY_TOKEN_NAMES = ("token", "access_token", "auth", "auth_token", "key")
# Declares the scheme in the OpenAPI schema only; BearerAuth does the checking.
BEARER_SCHEME = HTTPBearer(auto_error=False, scheme_name="bearer", description="The owner's token (BRAIN_AUTH_TOKEN).")


class BearerAuth:
    """Resolves a request's bearer token to an identity; the owner's token is the only one so far."""

    def __init__(self, owner_token: str, owner: Identity) -> None:
        self._owner_digest = hashlib.sha256(owner_token.encode()).digest()
        self._owner = owner

    def __call__(self, request: Request) -> Identity:
        # Tokens in URLs end up in logs and browser history: refused outright, as in the reference's v3.
        if any(name in request.query_params for name in QUERY_TOKEN_NAMES):
            raise Unauthorized()
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized()
        digest = hashlib.sha256(token.strip().encode()).digest()
        if not hmac.compare_digest(digest, self._owner_digest):
            raise Unauthorized()
        return self._owner
