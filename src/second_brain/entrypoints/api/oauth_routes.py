"""OAuth for MCP clients, its routes: the discovery documents (RFC 9728 for /mcp, RFC 8414 for the authorization
server), registration (RFC 7591, limited per source), authorize and token from the `mcp` package's route builders
over app/team/oauth_provider.py (the token endpoint refusing other resources), revocation (RFC 7009, for public
clients), and the consent page where the person signs in with their brain token."""

import html
import time
from collections import deque
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import anyio.to_thread
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.routes import (
    build_metadata,
    cors_middleware,
    create_auth_routes,
    create_protected_resource_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...app.team.oauth import OAuthService
from ...app.team.oauth_provider import BrainOAuthProvider
from ...domain.errors import NotFound, Unauthorized
from ...domain.oauth import ACCESS, REFRESH, SCOPE, TokenIssued
from .oauth_paths import AS_METADATA_PATH, CONSENT_PATH, MCP_PATH, REGISTER_PATH, REVOKE_PATH, TOKEN_PATH

REGISTRATIONS_PER_SOURCE, REGISTRATION_WINDOW_S = 10, 600  # a client registers once per install
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
PAGE_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin",
                "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
                                           "base-uri 'none'"}


def routes(oauth: OAuthService, issuer: str) -> list[BaseRoute]:
    """Discovery, registration, authorize, token, revoke and the consent page, for clients of `issuer`/mcp."""
    resource = issuer + MCP_PATH
    provider = BrainOAuthProvider(oauth, issuer + CONSENT_PATH, resource)
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE])
    revocation = RevocationOptions(enabled=True)
    # Every client is public (see app/team/oauth.py): the metadata says so instead of offering client secrets.
    metadata = build_metadata(AnyHttpUrl(issuer), None, registration, revocation)
    metadata.token_endpoint_auth_methods_supported = metadata.revocation_endpoint_auth_methods_supported = ["none"]
    sdk = {getattr(r, "path", None): r for r in create_auth_routes(provider, AnyHttpUrl(issuer), None, registration,
                                                                   revocation)}
    consent, revoke = Consent(oauth, issuer), Revocation(provider).handle
    register, token = sdk.pop(REGISTER_PATH), sdk.pop(TOKEN_PATH)
    served = [r for path, r in sdk.items() if path not in (AS_METADATA_PATH, REVOKE_PATH)]
    return [
        *create_protected_resource_routes(AnyHttpUrl(resource), [AnyHttpUrl(issuer)], [SCOPE], "Second Brain"),
        Route(AS_METADATA_PATH, cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
              methods=["GET", "OPTIONS"]),
        *served,
        Route(REGISTER_PATH, PerSource(register.endpoint, REGISTRATIONS_PER_SOURCE, REGISTRATION_WINDOW_S),
              methods=register.methods),
        Route(TOKEN_PATH, RequestBodyLimitMiddleware(TokenTarget(token.endpoint, resource),
                                                     DEFAULT_MAX_REQUEST_BODY_SIZE), methods=token.methods),
        Route(REVOKE_PATH, RequestBodyLimitMiddleware(cors_middleware(revoke, ["POST", "OPTIONS"]),
                                                      DEFAULT_MAX_REQUEST_BODY_SIZE), methods=["POST", "OPTIONS"]),
        Route(CONSENT_PATH, consent.show, methods=["GET"]),
        Route(CONSENT_PATH, consent.answer, methods=["POST"]),
    ]


class PerSource:
    """At most `limit` POSTs per `window` seconds from one source address, the rest answered 429: anyone may
    register a client, so no one address may make the brain do it without end. Kept in this process (on Lambda,
    in each container), for at most `max_sources` addresses at once."""

    def __init__(self, app: ASGIApp, limit: int, window: float, max_sources: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app = app
        self.limit, self.window, self.max_sources = limit, window, max_sources
        self.clock = clock
        self.seen: dict[str, deque[float]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and (wait := self._wait(scope)) > 0:
            body = {"error": "too_many_requests",
                    "error_description": f"Too many registrations from this address: try again in {wait} s"}
            await JSONResponse(body, status_code=429, headers={"Retry-After": str(wait), **NO_STORE})(
                scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _wait(self, scope: Scope) -> int:
        """Seconds until this source may send again (0: now, and the request is counted)."""
        now, source = self.clock(), (scope.get("client") or ("unknown",))[0]
        times = self.seen.pop(source, deque())
        while times and times[0] <= now - self.window:
            times.popleft()
        if len(self.seen) >= self.max_sources:  # the oldest-seen sources are forgotten first
            del self.seen[next(iter(self.seen))]
        self.seen[source] = times
        if len(times) >= self.limit:
            return max(1, int(times[0] + self.window - now) + 1)
        times.append(now)
        return 0


class TokenTarget:
    """The token endpoint, refusing a `resource` other than the one every grant here is for (RFC 8707 §2.2:
    `invalid_target`) before the `mcp` package's handler, which does not look at it, sees the request."""

    def __init__(self, app: ASGIApp, resource: str) -> None:
        self.app = app
        self.resource = resource

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False) and message["type"] == "http.request"
        asked = parse_qs(body.decode("utf-8", "replace")).get("resource", [])
        if any(target.rstrip("/") != self.resource for target in asked):
            refusal = {"error": "invalid_target", "error_description": f"This server grants access to {self.resource} "
                                                                       "only"}
            await JSONResponse(refusal, status_code=400, headers=NO_STORE)(scope, receive, send)
            return

        async def replay() -> Message:
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


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
        found = await anyio.to_thread.run_sync(self._find, token)
        if found is not None and found.client_id == client.client_id:  # anything else: 200 all the same (§2.2)
            await anyio.to_thread.run_sync(self.provider.oauth.revoke, token)
        return Response(status_code=200, headers=NO_STORE)

    def _find(self, token: str) -> TokenIssued | None:
        """The live token, access or refresh (a refresh token already rotated away is not one: revoking it again
        is no reuse)."""
        return self.provider.oauth.token(token, ACCESS) or self.provider.oauth.token(token, REFRESH)


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
