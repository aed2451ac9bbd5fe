"""OAuth for MCP on the function URL, offline: the MCP handler in functions/mcp fed function-URL events, the log
in DynamoDB through moto. The flow's routes run over the log alone; the brain (and OpenSearch) is never built."""

import base64
import copy
import hashlib
import json
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

import boto3
import pytest
from moto import mock_aws

from tests.aws.test_lambda_paths import CONTEXT, EVENTS, TOKEN, load, table_from_template

DOMAIN = "abcdefghijk.lambda-url.us-east-1.on.aws"
ISSUER = f"https://{DOMAIN}"
REDIRECT = "http://localhost:3030/callback"


@pytest.fixture
def mcp(monkeypatch):
    for key, value in {"AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "x",
                       "AWS_SECRET_ACCESS_KEY": "x", "POWERTOOLS_TRACE_DISABLED": "1",
                       "POWERTOOLS_SERVICE_NAME": "second-brain", "BRAIN_EVENTS_TABLE": "events",
                       "BRAIN_AUTH_TOKEN_SECRET": "brain/owner-token"}.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        boto3.client("dynamodb").create_table(**table_from_template("events"))
        boto3.client("secretsmanager").create_secret(Name="brain/owner-token", SecretString=TOKEN)
        yield load("mcp")


def invoke(mcp, method: str, path: str, query: dict | None = None, form: dict | None = None,
           body: dict | None = None, authorization: str | None = None, source: str = "203.0.113.7",
           headers: dict | None = None) -> dict:
    event = copy.deepcopy(json.loads((EVENTS / "function-url-mcp.json").read_text()))
    event["requestContext"]["http"]["sourceIp"] = source
    event["headers"] = {"host": DOMAIN, "x-forwarded-proto": "https", **(headers or {})}
    if authorization:
        event["headers"]["authorization"] = authorization
    if form is not None:
        event["headers"]["content-type"] = "application/x-www-form-urlencoded"
        event["body"] = urlencode(form)
    else:
        event["headers"]["content-type"] = "application/json"
        event["body"] = json.dumps(body) if body is not None else None
    event["rawPath"], event["rawQueryString"] = path, urlencode(query or {})
    event["requestContext"]["http"] |= {"method": method, "path": path}
    return mcp.handler(event, CONTEXT)


def test_the_oauth_flow_works_on_the_function_url_without_building_the_brain(mcp):
    refused = invoke(mcp, "POST", "/mcp", body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert refused["statusCode"] == 401
    metadata_url = f"{ISSUER}/.well-known/oauth-protected-resource/mcp"
    assert refused["headers"]["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    resource = json.loads(invoke(mcp, "GET", "/.well-known/oauth-protected-resource/mcp")["body"])
    assert resource["resource"] == f"{ISSUER}/mcp"
    server = json.loads(invoke(mcp, "GET", "/.well-known/oauth-authorization-server")["body"])
    assert server["token_endpoint"] == f"{ISSUER}/token"

    registered = invoke(mcp, "POST", "/register", body={"redirect_uris": [REDIRECT], "client_name": "Lambda"})
    client_id = json.loads(registered["body"])["client_id"]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    sent = invoke(mcp, "GET", "/authorize", query={
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s1",
        "code_challenge": challenge, "code_challenge_method": "S256", "resource": f"{ISSUER}/mcp"})
    consent = urlsplit(sent["headers"]["location"])
    assert f"{consent.scheme}://{consent.netloc}{consent.path}" == f"{ISSUER}/oauth/consent"
    request_id = parse_qs(consent.query)["request"][0]
    assert "Lambda" in invoke(mcp, "GET", "/oauth/consent", query={"request": request_id})["body"]
    wrong = invoke(mcp, "POST", "/oauth/consent", form={"request": request_id, "token": "nope", "action": "allow"})
    assert wrong["statusCode"] == 401
    allowed = invoke(mcp, "POST", "/oauth/consent", form={"request": request_id, "token": TOKEN, "action": "allow"})
    assert allowed["statusCode"] == 303
    code = parse_qs(urlsplit(allowed["headers"]["location"]).query)["code"][0]
    tokens = json.loads(invoke(mcp, "POST", "/token", form={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": client_id,
        "code_verifier": verifier})["body"])

    assert mcp.gate().check(f"Bearer {tokens['access_token']}").owner is True  # the gate in front of /mcp
    assert mcp.brain.cache_info().currsize == 0
    assert invoke(mcp, "POST", "/revoke", form={"token": tokens["refresh_token"],
                                                "client_id": client_id})["statusCode"] == 200
    assert invoke(mcp, "POST", "/mcp", authorization=f"Bearer {tokens['access_token']}",
                  body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})["statusCode"] == 401
    assert mcp.brain.cache_info().currsize == 0


def test_on_the_function_url_strangers_register_without_writing_and_are_slowed_down(mcp):
    for n in range(10):
        answer = invoke(mcp, "POST", "/register", body={"redirect_uris": [REDIRECT], "client_name": f"App {n}"})
        assert answer["statusCode"] == 201, answer["body"]
    slowed = invoke(mcp, "POST", "/register", body={"redirect_uris": [REDIRECT]})
    assert slowed["statusCode"] == 429 and json.loads(slowed["body"])["error"] == "too_many_requests"
    assert invoke(mcp, "POST", "/register", body={"redirect_uris": [REDIRECT]}, source="198.51.100.9"
                  )["statusCode"] == 201  # another address is not held back
    refused = invoke(mcp, "POST", "/register", body={"redirect_uris": ["javascript:alert(1)//"]},
                     source="198.51.100.10")
    assert refused["statusCode"] == 400 and json.loads(refused["body"])["error"] == "invalid_redirect_uri"
    items = boto3.client("dynamodb").scan(TableName="events")["Items"]
    assert [item["type"]["S"] for item in items if "type" in item] == ["SigningKeyMade"]


def test_a_refused_token_on_the_function_url_is_told_so(mcp):
    refused = invoke(mcp, "POST", "/mcp", authorization="Bearer sbo_not-a-token",
                     body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert refused["statusCode"] == 401
    assert refused["headers"]["www-authenticate"].startswith('Bearer error="invalid_token", resource_metadata=')


def test_with_the_edge_on_only_what_came_through_it_is_served_under_its_address(mcp, monkeypatch):
    """With McpRateLimit, CloudFront (and its per-address limit) stands before the function URL: a request that
    went around it has no secret header and is refused before anything else; one through it is served under the
    address the client used."""
    monkeypatch.setenv("BRAIN_MCP_EDGE_SECRET", "edge-secret-7f3a")
    for sent in ({}, {"x-brain-edge": "a-guess"}):
        around = invoke(mcp, "POST", "/register", body={"redirect_uris": [REDIRECT]}, headers=sent)
        assert around["statusCode"] == 403 and json.loads(around["body"])["ok"] is False
    edge = {"x-brain-edge": "edge-secret-7f3a", "x-forwarded-host": "d111111abcdef8.cloudfront.net"}
    server = json.loads(invoke(mcp, "GET", "/.well-known/oauth-authorization-server", headers=edge)["body"])
    assert server["issuer"] == "https://d111111abcdef8.cloudfront.net/"  # as the function URL's own issuer is
    refused = invoke(mcp, "POST", "/mcp", body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=edge)
    assert refused["statusCode"] == 401 and "d111111abcdef8.cloudfront.net" in refused["headers"]["www-authenticate"]
