"""Lambda function URL → /mcp (stateless streamable HTTP). The MCP session manager runs once per app, so
the app is built per invocation over the brain built once per container; the Host check allows this
function URL's own domain."""

from functools import cache

from aws_lambda_powertools import Logger, Metrics, Tracer
from mangum import Mangum

from second_brain.aws.composition import AwsBrain, Clients, build_aws, owner_token
from second_brain.entrypoints.api.app import create_app
from second_brain.settings import Settings

logger, tracer, metrics = Logger(), Tracer(), Metrics(namespace="SecondBrain")


@cache
def brain() -> tuple[AwsBrain, str]:
    settings, clients = Settings(), Clients()
    aws = build_aws(settings, clients)
    aws.index.create()
    return aws, owner_token(settings, clients)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: object) -> dict:
    aws, token = brain()
    domain = event.get("requestContext", {}).get("domainName")
    app = create_app(aws.brain, token, public_url=f"https://{domain}" if domain else None)
    return Mangum(app, lifespan="auto")(event, context)
