"""OAuth for MCP clients, over HTTP: the discovery documents (RFC 9728 for /mcp, RFC 8414 for the authorization
server), registration (RFC 7591), authorize and token from the `mcp` package's route builders over app/oauth.py's
provider, revocation (RFC 7009, for public clients), and the consent page where the person signs in with their
brain token."""

import html
import logging
from collections.abc import Callable
from urllib.parse import urlsplit

import anyio.to_thread
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.routes import (
    build_metadata,
    build_resource_metadata_url,
    cors_middleware,
    create_auth_routes,
    create_protected_resource_routes,
    validate_issuer_url,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...app.oauth import BrainOAuthProvider, OAuthIdentities, OAuthService
from ...app.team import TeamService
from ...domain.errors import NotFound, Unauthorized
from ...domain.oauth import SCOPE
from ...ports.event_store import EventStore
from ...settings import Settings
from .auth import BearerAuth

MCP_PATH = "/mcp"
CONSENT_PATH = "/oauth/consent"
AS_METADATA_PATH = "/.well-known/oauth-authorization-server"
REVOKE_PATH = "/revoke"
PATHS = (AS_METADATA_PATH, "/.well-known/oauth-protected-resource", "/authorize", "/token", "/register", REVOKE_PATH,
         CONSENT_PATH)
PAGE_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin",
                "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
                                           "base-uri 'none'"}
log = logging.getLogger("second_brain.oauth")


def authentication(store: EventStore, team: TeamService, owner_token: str | Callable[[], str]
                   ) -> tuple[BearerAuth, OAuthService]:
    """The bearer check that also takes OAuth access tokens, and the OAuth bookkeeping whose consent page signs
    people in with a brain token (the owner's or a member's, never a token OAuth issued)."""
    brain_tokens = BearerAuth(owner_token, team)
    grants = OAuthService(store, team.clock, lambda secret: brain_tokens.check(f"Bearer {secret}"))
    return BearerAuth(owner_token, team, oauth=OAuthIdentities(grants, team, owner_token)), grants


def issuer_of(settings: Settings, public_url: str | None = None) -> str | None:
    """Where the brain is reached (BRAIN_PUBLIC_URL, else the bound host), if OAuth may be served there: https, or
    plain http on a loopback host (RFC 8414 wants https; local clients are the exception the `mcp` package makes)."""
    public = urlsplit(public_url or settings.public_url or f"http://{settings.host}:{settings.port}")
    issuer = f"{public.scheme}://{public.netloc}"
    try:
        validate_issuer_url(AnyHttpUrl(issuer))
    except ValueError:
        log.warning("OAuth for MCP is off: %s is neither https nor a loopback address (set BRAIN_PUBLIC_URL)", issuer)
        return None
    return issuer


def is_oauth_path(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in PATHS)


def resource_metadata_url(issuer: str) -> str:
    return str(build_resource_metadata_url(AnyHttpUrl(issuer + MCP_PATH)))


def routes(oauth: OAuthService, issuer: str) -> list[BaseRoute]:
    """Discovery, registration, authorize, token, revoke and the consent page, for clients of `issuer`/mcp."""
    resource = issuer + MCP_PATH
    provider = BrainOAuthProvider(oauth, issuer + CONSENT_PATH, resource)
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE])
    revocation = RevocationOptions(enabled=True)
    # Every client is public (see app/oauth.py): the metadata says so instead of offering client secrets.
    metadata = build_metadata(AnyHttpUrl(issuer), None, registration, revocation)
    metadata.token_endpoint_auth_methods_supported = metadata.revocation_endpoint_auth_methods_supported = ["none"]
    served = [r for r in create_auth_routes(provider, AnyHttpUrl(issuer), None, registration, revocation)
              if getattr(r, "path", None) not in (AS_METADATA_PATH, REVOKE_PATH)]
    consent, revoke = Consent(oauth, issuer), Revocation(provider).handle
    return [
        *create_protected_resource_routes(AnyHttpUrl(resource), [AnyHttpUrl(issuer)], [SCOPE], "Second Brain"),
        Route(AS_METADATA_PATH, cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
              methods=["GET", "OPTIONS"]),
        *served,
        Route(REVOKE_PATH, RequestBodyLimitMiddleware(cors_middleware(revoke, ["POST", "OPTIONS"]),
                                                      DEFAULT_MAX_REQUEST_BODY_SIZE), methods=["POST", "OPTIONS"]),
        Route(CONSENT_PATH, consent.show, methods=["GET"]),
        Route(CONSENT_PATH, consent.answer, methods=["POST"]),
    ]


def oauth_app(oauth: OAuthService, issuer: str) -> Starlette:
    """The OAuth routes alone (the MCP function URL serves them without building the brain)."""
    return Starlette(routes=routes(oauth, issuer))


class Challenge:
    """Every 401 from /mcp names the resource metadata (RFC 9728 §5.1): where a client discovers the OAuth flow."""

    def __init__(self, app: ASGIApp, issuer: str) -> None:
        self.app = app
        self.header = f'Bearer resource_metadata="{resource_metadata_url(issuer)}"'

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_challenge(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                MutableHeaders(scope=message)["WWW-Authenticate"] = self.header
            await send(message)

        await self.app(scope, receive, send_challenge)


class Revocation:
    """RFC 7009 as the SDK's handler does it, but without requiring a `client_secret` field, which public clients
    (all of ours) never send."""

    def __init__(self, provider: BrainOAuthProvider) -> None:
        self.provider = provider
        self.clients = ClientAuthenticator(provider)

    async def handle(self, request: Request) -> Response:
        try:
            client = await self.clients.authenticate_request(request)
        except AuthenticationError as exc:
            return JSONResponse({"error": "unauthorized_client", "error_description": exc.message}, status_code=401)
        token = (await request.form()).get("token")
        if not isinstance(token, str) or not token:
            return JSONResponse({"error": "invalid_request", "error_description": "token is required"}, status_code=400)
        found = await self.provider.load_access_token(token) or await self.provider.load_refresh_token(client, token)
        if found is not None and found.client_id == client.client_id:  # anything else: 200 all the same (§2.2)
            await self.provider.revoke_token(found)
        return Response(status_code=200, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})


class Consent:
    """GET: who asks, and a form for the brain token. POST: a code for that identity, back to the client; a wrong
    token gets the form again (401). The pending request is kept on the server and known by an unguessable,
    single-use id, so the form carries nothing a forger could change."""

    def __init__(self, oauth: OAuthService, issuer: str) -> None:
        self.oauth = oauth
        self.issuer = issuer

    async def show(self, request: Request) -> Response:
        request_id = request.query_params.get("request", "")
        try:
            client = await anyio.to_thread.run_sync(self._client_of, request_id)
        except NotFound as exc:
            return page("Sign-in expired", f"<p>{html.escape(exc.message)}</p>", 400)
        return self._form(request_id, client)

    async def answer(self, request: Request) -> Response:
        origin = request.headers.get("origin")
        if origin is not None and origin != self.issuer:  # a form posted from another site
            return page("Refused", "<p>This form may only be sent from this page.</p>", 403)
        form = await request.form()
        request_id, token = str(form.get("request", "")), str(form.get("token", ""))
        try:
            try:
                if form.get("action") == "deny":
                    target = await anyio.to_thread.run_sync(self.oauth.deny, request_id)
                else:
                    target = await anyio.to_thread.run_sync(self.oauth.approve, request_id, token)
            except Unauthorized as exc:  # the request stays open: the form again, with the reason
                client = await anyio.to_thread.run_sync(self._client_of, request_id)
                unknown = exc.details.get("code") == "invalid_token"
                return self._form(request_id, client, "That is not a valid brain token" if unknown else exc.message,
                                  401)
        except NotFound as exc:
            return page("Sign-in expired", f"<p>{html.escape(exc.message)}</p>", 400)
        return RedirectResponse(target, status_code=303, headers={"Cache-Control": "no-store"})

    def _client_of(self, request_id: str) -> tuple[str, str]:
        """The client's name and where it sends the person back to."""
        pending = self.oauth.pending(request_id)
        metadata = self.oauth.client(pending.client_id) or {}
        return str(metadata.get("client_name") or pending.client_id), urlsplit(pending.redirect_uri).netloc

    def _form(self, request_id: str, client: tuple[str, str], error: str = "", status: int = 200) -> Response:
        name, back_to = (html.escape(part) for part in client)
        alert = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
        body = f"""<p><strong>{name}</strong> wants to use your Second Brain as you: read and write what you may.
Afterwards you go back to <strong>{back_to}</strong>.</p>{alert}
<form method="post" action="{CONSENT_PATH}">
<input type="hidden" name="request" value="{html.escape(request_id)}">
<label>Your brain token (the owner's, or the member token an admin gave you)<br>
<input type="password" name="token" autocomplete="off" autofocus size="50"></label>
<p><button type="submit" name="action" value="allow">Allow</button>
<button type="submit" name="action" value="deny" formnovalidate>Deny</button></p>
</form>"""
        return page("Connect an app", body, status)


def page(title: str, body: str, status: int = 200) -> HTMLResponse:
    document = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Second Brain: {html.escape(title)}</title>
<style>body{{font:16px system-ui,sans-serif;max-width:36em;margin:3em auto;padding:0 1em}}.error{{color:#b00020}}
</style></head><body><h1>{html.escape(title)}</h1>
{body}
</body></html>
"""
    return HTMLResponse(document, status_code=status, headers=PAGE_HEADERS)
