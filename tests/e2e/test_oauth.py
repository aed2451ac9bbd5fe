"""OAuth for MCP against a real server: the `mcp` package's own OAuth client discovers the flow from the base /mcp
URL, registers, is sent to the consent page (driven headlessly here: a person signs in with their brain token),
gets a code, tokens, calls tools as that person, refreshes and revokes; and the refusals, by plain HTTP."""

import base64
import hashlib
import json
import re
import secrets
import sqlite3
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from tests.e2e.test_durability import files_containing
from tests.e2e.test_mcp import call

REDIRECT = "http://localhost:3030/callback"  # never contacted: the code is read from the redirect itself


class Storage:
    """The client's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Person:
    """The browser side: follows the authorize URL to the consent page, signs in with `token`, and hands the
    code and state the server redirected to back to the client."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.result: AuthorizationCodeResult | None = None
        self.visits = 0

    async def redirect(self, authorize_url: str) -> None:
        self.visits += 1
        async with httpx2.AsyncClient(timeout=30) as browser:
            consent = await browser.get(authorize_url, follow_redirects=True)
            assert consent.status_code == 200 and "<form" in consent.text, consent.text
            decided = await browser.post(str(consent.url).split("?")[0], data={
                "request": hidden_request_id(consent.text), "token": self.token, "action": "allow"})
        assert decided.status_code == 303, decided.text
        query = parse_qs(urlsplit(decided.headers["location"]).query)
        self.result = AuthorizationCodeResult(code=query["code"][0], state=query["state"][0])

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


def oauth_provider(server, person: Person) -> OAuthClientProvider:
    return OAuthClientProvider(
        f"{server.url}/mcp", OAuthClientMetadata(redirect_uris=[AnyUrl(REDIRECT)], client_name="Test Agent"),
        Storage(), person.redirect, person.callback)


def connect(server, provider: OAuthClientProvider) -> Client:
    """An MCP session over HTTP, authorized by the provider (which starts the flow on the first 401)."""
    http = httpx2.AsyncClient(auth=provider, timeout=60)
    return Client(streamable_http_client(f"{server.url}/mcp", http_client=http))


def hidden_request_id(page: str) -> str:
    return re.search(r'name="request" value="([^"]+)"', page).group(1)


@pytest.fixture
def bob(api) -> dict:
    answer = api.post("/team/members", json={"name": "Bob"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def as_bearer(server, token: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def mcp_request(server, token: str, method: str = "tools/list") -> httpx.Response:
    """One JSON-RPC request to /mcp with a bearer token, as a client's first call after signing in."""
    return httpx.post(server.url + "/mcp", timeout=30, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": {}},
                      headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"})


def test_a_member_connects_an_mcp_client_through_oauth_and_acts_as_themselves(server, api, bob):
    person = Person(bob["token"])
    provider = oauth_provider(server, person)

    async def session() -> str:
        async with connect(server, provider) as client:
            teams = json.loads(await call(client, "list_teams"))["teams"]
            assert [t["id"] for t in teams] == ["company"]
            return json.loads(await call(client, "remember", content="The falcon nests on the north tower",
                                         workspace="company"))["id"]

    memory_id = anyio.run(session)
    assert person.visits == 1  # discovered from /mcp, registered, signed in once
    entry = api.get("/entry", params={"id": memory_id}).json()["entry"]
    assert (entry["workspace"], entry["actor_name"]) == ("company", "Bob")
    first = provider.context.current_tokens
    assert first.token_type == "Bearer" and first.scope == "brain" and first.refresh_token
    assert mcp_request(server, first.access_token).status_code == 200
    for secret in (first.access_token, first.refresh_token):
        assert files_containing(server.data_dir, secret.encode()) == []  # only hashes are kept

    # Refresh: a new pair; the old refresh token and the access token issued with it are spent.
    provider.context.token_expiry_time = 1  # long past (0 would read as "never expires")

    async def after_refresh() -> None:
        async with connect(server, provider) as client:
            assert "falcon" in await call(client, "recall", query="falcon nest")

    anyio.run(after_refresh)
    second = provider.context.current_tokens
    assert person.visits == 1 and second.access_token != first.access_token
    assert second.refresh_token != first.refresh_token
    assert mcp_request(server, first.access_token).status_code == 401
    client_id = provider.context.client_info.client_id

    # Revocation ends both tokens of the pair, for the client they were issued to only.
    other = httpx.post(server.url + "/register", json={"redirect_uris": [REDIRECT]}).json()["client_id"]
    revoked = httpx.post(server.url + "/revoke", data={"token": second.access_token, "client_id": other})
    assert revoked.status_code == 200
    assert mcp_request(server, second.access_token).status_code == 200
    revoked = httpx.post(server.url + "/revoke", data={"token": second.access_token, "client_id": client_id})
    assert revoked.status_code == 200, revoked.text
    refused = httpx.post(server.url + "/mcp", headers={"Authorization": f"Bearer {second.access_token}"},
                         json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    assert (refused.status_code, refused.json()["code"]) == (401, "invalid_token")
    again = httpx.post(server.url + "/token", data={"grant_type": "refresh_token", "client_id": client_id,
                                                    "refresh_token": second.refresh_token})
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")
    reused = httpx.post(server.url + "/token", data={"grant_type": "refresh_token", "client_id": client_id,
                                                     "refresh_token": first.refresh_token})
    assert (reused.status_code, reused.json()["error"]) == (400, "invalid_grant")


def test_the_flow_is_discovered_from_the_mcp_url(server):
    answer = httpx.post(server.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert answer.status_code == 401
    metadata_url = f"{server.url}/.well-known/oauth-protected-resource/mcp"
    assert answer.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    resource = httpx.get(metadata_url).json()
    assert resource["resource"] == f"{server.url}/mcp" and resource["scopes_supported"] == ["brain"]
    issuer = resource["authorization_servers"][0].rstrip("/")
    server_metadata = httpx.get(issuer + "/.well-known/oauth-authorization-server").json()
    assert server_metadata["code_challenge_methods_supported"] == ["S256"]
    assert server_metadata["token_endpoint_auth_methods_supported"] == ["none"]
    assert {"authorization_code", "refresh_token"} <= set(server_metadata["grant_types_supported"])
    assert all(server_metadata[k].startswith(issuer) for k in ("authorization_endpoint", "token_endpoint",
                                                                 "registration_endpoint", "revocation_endpoint"))


# -- the flow by hand, for the refusals --------------------------------------------------------------------------------


class Flow:
    """One client's authorization by plain HTTP: register, authorize, consent, token."""

    def __init__(self, server) -> None:
        self.server = server
        self.verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(self.verifier.encode()).digest()).decode().rstrip("=")
        registered = httpx.post(server.url + "/register", json={"redirect_uris": [REDIRECT], "client_name": "Hand"})
        assert registered.status_code == 201, registered.text
        assert registered.json()["token_endpoint_auth_method"] == "none" and "client_secret" not in registered.json()
        self.client_id = registered.json()["client_id"]
        self.state = secrets.token_urlsafe(8)
        sent = httpx.get(server.url + "/authorize", params={
            "response_type": "code", "client_id": self.client_id, "redirect_uri": REDIRECT, "state": self.state,
            "code_challenge": challenge, "code_challenge_method": "S256", "resource": f"{server.url}/mcp"})
        assert sent.status_code == 302, sent.text
        self.consent_url = sent.headers["location"]
        page = httpx.get(self.consent_url)
        assert page.status_code == 200 and "Hand" in page.text
        self.request_id = hidden_request_id(page.text)

    def consent(self, token: str, **extra: str) -> httpx.Response:
        return httpx.post(self.server.url + "/oauth/consent",
                          data={"request": self.request_id, "token": token, "action": "allow", **extra})

    def code(self, token: str) -> str:
        answer = self.consent(token)
        assert answer.status_code == 303, answer.text
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        assert answer.headers["location"].startswith(REDIRECT) and query["state"] == [self.state]
        return query["code"][0]

    def exchange(self, code: str, verifier: str | None = None) -> httpx.Response:
        return httpx.post(self.server.url + "/token", data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": self.client_id,
            "code_verifier": verifier or self.verifier})

    def tokens(self, token: str) -> dict:
        answer = self.exchange(self.code(token))
        assert answer.status_code == 200, answer.text
        return answer.json()


def test_a_wrong_token_on_the_consent_page_gets_the_form_again_and_no_code(server, bob):
    flow = Flow(server)
    for wrong in ("not-a-token", "sbm_" + secrets.token_urlsafe(32), ""):
        answer = flow.consent(wrong)
        assert answer.status_code == 401 and "location" not in answer.headers
        assert "not a valid brain token" in answer.text and hidden_request_id(answer.text) == flow.request_id
    assert flow.code(bob["token"])  # the request stayed open for the right token
    spent = flow.consent(bob["token"])  # the request id is single-use
    assert spent.status_code == 400 and "location" not in spent.headers
    assert httpx.get(flow.consent_url).status_code == 400


def test_the_consent_page_refuses_tokens_oauth_issued_and_forms_from_other_sites(server, bob):
    access = Flow(server).tokens(bob["token"])["access_token"]
    flow = Flow(server)
    assert flow.consent(access).status_code == 401  # an app's token cannot mint itself another grant
    forged = httpx.post(server.url + "/oauth/consent", headers={"Origin": "https://evil.example.net"},
                        data={"request": flow.request_id, "token": bob["token"], "action": "allow"})
    assert forged.status_code == 403 and "location" not in forged.headers
    denied = flow.consent(bob["token"], action="deny")
    assert denied.status_code == 303
    assert parse_qs(urlsplit(denied.headers["location"]).query)["error"] == ["access_denied"]


def test_markup_on_the_consent_page_is_escaped(server):
    registered = httpx.post(server.url + "/register", json={"redirect_uris": [REDIRECT],
                                                            "client_name": "<script>alert(1)</script>"})
    sent = httpx.get(server.url + "/authorize", params={
        "response_type": "code", "client_id": registered.json()["client_id"], "redirect_uri": REDIRECT,
        "code_challenge": "x" * 43, "code_challenge_method": "S256"})
    page = httpx.get(sent.headers["location"])
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


def test_a_code_is_redeemed_once(server, bob):
    flow = Flow(server)
    code = flow.code(bob["token"])
    assert flow.exchange(code).status_code == 200
    again = flow.exchange(code)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")


def test_a_pkce_verifier_that_does_not_match_is_refused(server, bob):
    flow = Flow(server)
    code = flow.code(bob["token"])
    wrong = flow.exchange(code, verifier=secrets.token_urlsafe(48))
    assert (wrong.status_code, wrong.json()) == (400, {"error": "invalid_grant",
                                                       "error_description": "incorrect code_verifier"})
    assert flow.exchange(code).status_code == 200  # a failed guess does not spend the code for its owner


def test_an_oauth_token_follows_its_members_standing(server, api, bob):
    member_id = bob["member"]["id"]
    access = Flow(server).tokens(bob["token"])["access_token"]
    assert mcp_request(server, access).status_code == 200
    api.post("/team/members/suspend", json={"id": member_id, "suspended": True})
    refused = mcp_request(server, access)
    assert (refused.status_code, refused.json()["code"]) == (401, "suspended")
    api.post("/team/members/suspend", json={"id": member_id, "suspended": False})
    assert mcp_request(server, access).status_code == 200
    rotated = api.post("/team/members/token", json={"id": member_id}).json()["token"]
    assert mcp_request(server, access).json()["code"] == "invalid_token"  # the brain token it came from is gone
    access = Flow(server).tokens(rotated)["access_token"]
    api.post("/team/members/remove", json={"id": member_id})
    assert mcp_request(server, access).json()["code"] == "removed"


def test_the_owner_signs_in_as_the_owner_and_query_string_tokens_stay_refused(server):
    access = Flow(server).tokens(server.token)["access_token"]
    assert mcp_request(server, access).status_code == 200
    assert httpx.get(server.url + "/count", params={"access_token": access}).status_code == 401


# -- what an app someone allowed may not do (issue 38, items 1-4) -----------------------------------------------------


def test_an_mcp_grant_is_not_a_key_to_the_rest_api(server, api):
    """An app the owner allowed once, through the `mcp` package's own OAuth client, acts over /mcp only: its
    token mints no member, exports nothing and reads nothing on the REST API."""
    provider = oauth_provider(server, Person(server.token))

    async def session() -> None:
        async with connect(server, provider) as client:
            assert json.loads(await call(client, "list_teams"))["teams"]

    anyio.run(session)
    access = provider.context.current_tokens.access_token
    with as_bearer(server, access) as app:
        for method, path, body in (("POST", "/team/members", {"name": "x", "role": "admin"}), ("GET", "/export", None),
                                   ("GET", "/count", None), ("GET", "/team/me", None), ("POST", "/capture",
                                                                                       {"content": "sneaky"})):
            answer = app.request(method, path, json=body)
            assert answer.status_code == 401, (path, answer.text)
            assert answer.json() == {"ok": False, "error": "This token was issued to an MCP client: it is accepted "
                                                           "at /mcp only", "code": "invalid_token"}, path
    assert [m["name"] for m in api.get("/team/members").json()["members"]] == ["Owner"]
    assert mcp_request(server, access).status_code == 200


@pytest.mark.parametrize("uri", ["javascript:alert(1)//", "data:text/html,<script>alert(1)</script>",
                                 "http://evil.example/cb", "https://app.example.com/cb#frag"])
def test_a_client_registering_a_dangerous_redirect_is_refused(server, uri):
    answer = httpx.post(server.url + "/register", json={"redirect_uris": [REDIRECT, uri], "client_name": "Evil"})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid_redirect_uri"


def test_a_loopback_redirect_may_come_back_on_another_port(server, bob):
    registered = httpx.post(server.url + "/register", json={"redirect_uris": ["http://127.0.0.1:3030/callback"]})
    client_id = registered.json()["client_id"]
    params = {"response_type": "code", "client_id": client_id, "code_challenge": "x" * 43,
              "code_challenge_method": "S256"}
    moved = httpx.get(server.url + "/authorize", params={**params, "redirect_uri": "http://127.0.0.1:49152/callback"})
    assert moved.status_code == 302 and "/oauth/consent" in moved.headers["location"]
    page = httpx.get(moved.headers["location"])
    assert "127.0.0.1:49152" in page.text
    elsewhere = httpx.get(server.url + "/authorize", params={**params, "redirect_uri": "http://127.0.0.1:49152/x"})
    assert elsewhere.status_code == 400 and "location" not in elsewhere.headers


def refresh(server, client_id: str, refresh_token: str, **extra: str) -> httpx.Response:
    return httpx.post(server.url + "/token", data={"grant_type": "refresh_token", "client_id": client_id,
                                                   "refresh_token": refresh_token, **extra})


@pytest.mark.parametrize("ending", ["rotated", "suspended", "removed"])
def test_a_grant_whose_member_lost_access_does_not_refresh(server, api, bob, ending):
    """Driven by the `mcp` package's client: once the member is rotated, suspended or removed, its refresh fails
    and the client is sent to sign in again, instead of being handed a new pair."""
    person = Person(bob["token"])
    provider = oauth_provider(server, person)

    async def session() -> None:
        async with connect(server, provider) as client:
            await call(client, "list_teams")

    anyio.run(session)
    member_id, tokens = bob["member"]["id"], provider.context.current_tokens
    if ending == "rotated":
        api.post("/team/members/token", json={"id": member_id})
    elif ending == "suspended":
        api.post("/team/members/suspend", json={"id": member_id, "suspended": True})
    else:
        api.post("/team/members/remove", json={"id": member_id})
    answer = refresh(server, provider.context.client_info.client_id, tokens.refresh_token)
    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_grant"), answer.text
    assert ending in answer.json()["error_description"] or ending == "rotated"


def test_a_refresh_for_another_resource_is_refused(server, bob):
    flow = Flow(server)
    tokens = flow.tokens(bob["token"])
    for target in ("https://evil.example/mcp", f"{server.url}/other"):
        answer = refresh(server, flow.client_id, tokens["refresh_token"], resource=target)
        assert (answer.status_code, answer.json()["error"]) == (400, "invalid_target"), answer.text
    answer = refresh(server, flow.client_id, tokens["refresh_token"], resource=f"{server.url}/mcp")
    assert answer.status_code == 200, answer.text


def test_a_replayed_code_or_a_reused_refresh_token_ends_the_whole_grant(server, bob):
    flow = Flow(server)
    code = flow.code(bob["token"])
    first = flow.exchange(code).json()
    replayed = flow.exchange(code)
    assert (replayed.status_code, replayed.json()["error"]) == (400, "invalid_grant")
    assert mcp_request(server, first["access_token"]).status_code == 401
    assert refresh(server, flow.client_id, first["refresh_token"]).json()["error"] == "invalid_grant"

    flow = Flow(server)
    first = flow.tokens(bob["token"])
    second = refresh(server, flow.client_id, first["refresh_token"]).json()
    assert mcp_request(server, second["access_token"]).status_code == 200
    reused = refresh(server, flow.client_id, first["refresh_token"])  # a thief's copy of the spent token
    assert (reused.status_code, reused.json()["error"]) == (400, "invalid_grant")
    assert mcp_request(server, second["access_token"]).status_code == 401  # the client's newer pair is gone too
    assert refresh(server, flow.client_id, second["refresh_token"]).json()["error"] == "invalid_grant"


def test_a_refused_token_is_told_so_in_the_challenge(server):
    anonymous = httpx.post(server.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert "error=" not in anonymous.headers["www-authenticate"]
    refused = mcp_request(server, "sbo_" + secrets.token_urlsafe(32))
    metadata_url = f"{server.url}/.well-known/oauth-protected-resource/mcp"
    assert refused.headers["www-authenticate"] == f'Bearer error="invalid_token", resource_metadata="{metadata_url}"'


def test_strangers_cannot_fill_the_log(server):
    """Registering and being sent to the consent page write nothing (but the brain's signing key, once); a source
    registering without end is slowed down."""
    before = log_events(server)
    for n in range(8):
        registered = httpx.post(server.url + "/register", json={"redirect_uris": [REDIRECT], "client_name": f"A{n}"})
        assert registered.status_code == 201, registered.text
        sent = httpx.get(server.url + "/authorize", params={
            "response_type": "code", "client_id": registered.json()["client_id"], "redirect_uri": REDIRECT,
            "code_challenge": "x" * 43, "code_challenge_method": "S256"})
        assert sent.status_code == 302 and httpx.get(sent.headers["location"]).status_code == 200
        declined = httpx.post(server.url + "/oauth/consent", data={
            "request": parse_qs(urlsplit(sent.headers["location"]).query)["request"][0], "action": "deny"})
        assert declined.status_code == 303
    assert log_events(server) - before <= 1
    answers = [httpx.post(server.url + "/register", json={"redirect_uris": [REDIRECT]}).status_code
               for _ in range(4)]
    assert answers[:2] == [201, 201] and answers[2:] == [429, 429]
    slowed = httpx.post(server.url + "/register", json={"redirect_uris": [REDIRECT]})
    assert int(slowed.headers["retry-after"]) > 0 and slowed.json()["error"] == "too_many_requests"


def log_events(server) -> int:
    with sqlite3.connect(server.data_dir / "brain.sqlite3") as db:
        return db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
