"""The authorization server the `mcp` package's OAuth routes call, over app/team/oauth.py's bookkeeping: clients whose
redirect URIs follow the brain's rules (`BrainClient`) and the provider itself (`BrainOAuthProvider`; its blocking
calls run off the event loop). Imported with the OAuth routes, not with the REST API."""

import functools
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlencode

import anyio.to_thread
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl, model_validator

from ...domain import oauth as o
from ...domain.errors import ConcurrencyConflict, InvalidInput, NotFound, Unauthorized
from ...domain.team import check_name
from ...domain.text import shorten
from .oauth import OAuthService

T = TypeVar("T")


KEPT_METADATA = ("redirect_uris", "token_endpoint_auth_method", "grant_types", "response_types", "scope", "client_name",
                 "client_id_issued_at")  # what a sealed client id carries: what the flow and the consent page read


class BrainClient(OAuthClientInformationFull):
    """A registered client whose loopback redirect URIs match on any port (RFC 8252 §7.3: a native app gets one
    from its operating system each time), and whose other URIs must be exactly the registered ones. A client an
    earlier release registered keeps only its URIs that are still acceptable."""

    @model_validator(mode="after")
    def _acceptable_uris_only(self) -> "BrainClient":
        if self.redirect_uris:
            self.redirect_uris = [uri for uri in self.redirect_uris if o.redirect_refusal(str(uri)) is None]
        return self

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is not None and any(o.same_redirect(str(uri), str(redirect_uri))
                                            for uri in self.redirect_uris or []):
            return redirect_uri
        if redirect_uri is not None:
            raise InvalidRedirectUriError(f"Redirect URI '{redirect_uri}' not registered for client")
        return super().validate_redirect_uri(redirect_uri)


class BrainOAuthProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """`OAuthAuthorizationServerProvider` for the `mcp` package's routes: `authorize` sends the person to the
    consent page; codes and tokens live in the event store (blocking calls run off the event loop). The grants
    it does not override keep the protocol's answer (the JWT bearer grant: unsupported_grant_type)."""

    def __init__(self, oauth: OAuthService, consent_url: str, resource: str) -> None:
        self.oauth = oauth
        self.consent_url = consent_url
        self.resource = resource

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        record = await _run(self.oauth.client, client_id)
        return BrainClient.model_validate(record) if record else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        """Check the client's metadata and give it a sealed id that is its whole record. The registration handler
        answers with this very object: the client learns it is public (RFC 7591 lets the server replace requested
        metadata), that no secret exists, and which metadata was kept."""
        uris = [str(uri) for uri in client_info.redirect_uris or []]
        if len(uris) > o.MAX_REDIRECT_URIS:
            raise RegistrationError("invalid_redirect_uri", f"at most {o.MAX_REDIRECT_URIS} redirect URIs")
        for uri in uris:
            if (refusal := o.redirect_refusal(uri)) is not None:
                raise RegistrationError("invalid_redirect_uri", f"{refusal}: {shorten(uri)}")
        if len(client_info.client_name or "") > o.MAX_CLIENT_NAME_CHARS:
            raise RegistrationError("invalid_client_metadata",
                                    f"client_name has at most {o.MAX_CLIENT_NAME_CHARS} characters")
        if client_info.client_name:  # shown on the consent page: the rules of a person's name
            try:
                check_name(client_info.client_name)
            except InvalidInput as refused:
                raise RegistrationError("invalid_client_metadata", f"client_name: {refused.message}") from refused
        client_info.token_endpoint_auth_method = "none"
        client_info.client_secret = client_info.client_secret_expires_at = None
        record = client_info.model_dump(mode="json", include=set(KEPT_METADATA), exclude_none=True)
        for dropped in set(type(client_info).model_fields) - set(KEPT_METADATA) - {"client_id"}:
            setattr(client_info, dropped, None)
        client_info.client_id = await _run(self.oauth.register, record)

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
        issued = await _run(self.oauth.presented_code, code)
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
        issued = await _run(self.oauth.presented_refresh, refresh_token)
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
    """The token response for a code or refresh token redeemed by `issue`; invalid_grant if it was spent, or if
    the person who allowed it no longer has the access they allowed it with."""
    try:
        access, refresh, issued = await _run(issue)
    except (NotFound, ConcurrencyConflict) as exc:
        raise TokenError("invalid_grant", spent) from exc
    except Unauthorized as exc:
        raise TokenError("invalid_grant", f"the person who allowed this app no longer has that access "
                                          f"({exc.details.get('code', 'invalid_token')})") from exc
    return OAuthToken(access_token=access, expires_in=o.ACCESS_TTL_MS // 1000, scope=" ".join(issued.scopes),
                      refresh_token=refresh)


def _grant(issued: o.TokenIssued) -> dict[str, Any]:
    return {"client_id": issued.client_id, "scopes": list(issued.scopes), "expires_at": issued.expires_at // 1000,
            "resource": issued.resource, "subject": issued.actor_id}
