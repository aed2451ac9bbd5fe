"""API Gateway (REST, {proxy+}) → the brain's FastAPI app, through Mangum."""

from functools import cache

from aws_lambda_powertools import Logger, Metrics, Tracer
from mangum import Mangum
from mangum.types import LambdaContext

from second_brain.aws.composition import Clients, build_aws, owner_token
from second_brain.aws.tracing import TRACED
from second_brain.entrypoints.api.app import create_app
from second_brain.settings import Settings

logger, tracer, metrics = Logger(), Tracer(patch_modules=TRACED), Metrics(namespace="SecondBrain")


@cache
def asgi() -> Mangum:
    settings, clients = Settings(), Clients()
    aws = build_aws(settings, clients).with_indexes()
    return Mangum(create_app(aws.brain, owner_token(settings, clients), blobs=aws.blobs,
                             serve_oauth=False), lifespan="off")


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)  # memory text stays out of X-Ray
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: LambdaContext) -> dict:
    return asgi()(event, context)
