"""The stack's `SearchAccessSetup` custom resource (only with SearchAccessControl=fine-grained): maps the
functions' roles to a role on the brain's indexes inside OpenSearch, and turns the audit log on
(second_brain/aws/search_access.py). It runs as the domain's master user."""

import os
from typing import Any

from aws_lambda_powertools import Logger, Tracer

from second_brain.aws.composition import opensearch_client
from second_brain.aws.search_access import handle
from second_brain.aws.tracing import TRACED
from second_brain.settings import Settings

logger, tracer = Logger(), Tracer(patch_modules=TRACED)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
def handler(event: dict, context: Any) -> dict:
    answer = handle(event, lambda: opensearch_client(Settings()), os.environ)
    logger.info("search access", extra={"request": event.get("RequestType"), "status": answer["Status"],
                                        "reason": answer.get("Reason")})
    return answer
