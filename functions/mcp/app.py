"""Lambda function URL → /mcp (stateless streamable HTTP), over the AWS composition root. The brain and the app are
built once per container (the app once per public address it is reached at); the MCP session manager, which runs
once, is made again for each invocation by the app's lifespan. The Host check allows this function URL's own
domain.

The URL is public (AuthType NONE: MCP clients send a bearer token, not SigV4), so the token is checked before
anything costly: a stranger's request never builds the brain or touches the indexes (a member's token is
looked up in the team's stream of the event log, an OAuth access token in its own stream). The OAuth flow's
routes (discovery, registration, authorize, consent, token, revoke) are served over the event log alone, without
the brain, at this same URL.

With the stack's edge on (McpRateLimit), clients reach this function through CloudFront and its per-address rate
limit: CloudFront adds a secret header (BRAIN_MCP_EDGE_SECRET), and a request without it is refused before
anything else; the address the client used (x-forwarded-host) is then the issuer and the Host."""

import hmac
import json
import os
from collections.abc import Callable
from functools import cache

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from mangum import Mangum
from mangum.types import LambdaContext

from second_brain.aws.composition import AwsBrain, Clients, build_access, build_aws, owner_token
from second_brain.aws.tracing import TRACED
from second_brain.domain.errors import Unauthorized
from second_brain.entrypoints.api import oauth
from second_brain.entrypoints.api.app import create_app
from second_brain.entrypoints.api.auth import BearerAuth
from second_brain.settings import Settings

logger, tracer, metrics = Logger(), Tracer(patch_modules=TRACED), Metrics(namespace="SecondBrain")


@cache
def clients() -> Clients:
    return Clients()


@cache
def token() -> Callable[[], str]:
    return owner_token(Settings(), clients())


@cache
def authentication() -> oauth.Authentication:
    """The owner's token, members' token hashes read from the team's stream in the log (one query), and OAuth
    access tokens (one more)."""
    log, team = build_access(Settings(), clients())
    return oauth.authentication(log, team, token())


def gate() -> BearerAuth:
    return authentication().mcp


@cache
def oauth_app(issuer: str) -> Mangum:
    return Mangum(oauth.oauth_app(authentication().grants, issuer), lifespan="off")


def unauthorized(refusal: Unauthorized, issuer: str | None, token_sent: bool) -> dict:
    """The REST API's 401 (with its code: invalid_token, suspended, removed), naming where OAuth is discovered."""
    return {"statusCode": 401, "headers": {"content-type": "application/json",
                                           "www-authenticate": oauth.challenge(issuer, token_sent)},
            "body": json.dumps({"ok": False, "error": refusal.message, **refusal.details})}


@cache
def brain() -> AwsBrain:
    return build_aws(Settings(), clients()).with_indexes()


@cache
def app(issuer: str | None) -> Mangum:
    """/mcp over the brain; its lifespan (per invocation) runs a new session manager over tools made once."""
    return Mangum(create_app(brain().brain, token(), public_url=issuer), lifespan="auto")


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)  # memory text stays out of X-Ray
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: LambdaContext) -> dict:
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    domain = event.get("requestContext", {}).get("domainName")
    if edge := os.environ.get("BRAIN_MCP_EDGE_SECRET"):  # only what came through the edge's rate limit
        if not hmac.compare_digest(headers.get("x-brain-edge", ""), edge):
            metrics.add_metric(name="AroundTheEdge", unit=MetricUnit.Count, value=1)
            return {"statusCode": 403, "headers": {"content-type": "application/json"}, "body": json.dumps(
                {"ok": False, "error": "Reach the MCP server at the McpUrl the stack outputs, not the function URL"})}
        if forwarded := headers.get("x-forwarded-host"):  # the address the client used: the issuer, the Host
            domain = forwarded
            event = {**event, "headers": {**{k: v for k, v in (event.get("headers") or {}).items()
                                             if k.lower() != "host"}, "host": forwarded}}
    issuer = f"https://{domain}" if domain else None
    if issuer and oauth.is_oauth_path(event.get("rawPath", "")):
        return oauth_app(issuer)(event, context)
    if event.get("requestContext", {}).get("http", {}).get("method") != "OPTIONS":  # CORS preflights carry none
        try:
            gate().check(headers.get("authorization", ""))
        except Unauthorized as refusal:
            metrics.add_metric(name="Unauthorized", unit=MetricUnit.Count, value=1)
            return unauthorized(refusal, issuer, "authorization" in headers)
    return app(issuer)(event, context)
