"""EventBridge Scheduler, nightly: finish erasures a failure left halfway, make sure the indexes exist and
embed whatever is still pending."""

import time
from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

from second_brain.aws.composition import AwsBrain, Clients, build_aws
from second_brain.aws.streams import deadline, embed_pending
from second_brain.settings import Settings

logger, tracer, metrics = Logger(), Tracer(), Metrics(namespace="SecondBrain")


@cache
def brain() -> AwsBrain:
    return build_aws(Settings(), Clients())


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: Any) -> dict:
    aws = brain()
    aws.index.create()
    until = deadline(context)
    erased = aws.log.complete_erasures()  # forgets whose erasure a failure left halfway: before anything else
    total = {"vectorized": 0, "failed": 0, "remaining": 0}
    while time.monotonic() < until:  # in rounds, until none is left, a round makes no progress or time is short
        report = embed_pending(aws, limit=256, until=until)
        total = {k: total[k] + report[k] for k in ("vectorized", "failed")} | {"remaining": report["remaining"]}
        if not report["remaining"] or not report["vectorized"]:
            break
    aws.index.flush()
    metrics.add_metric(name="Vectorized", unit=MetricUnit.Count, value=total["vectorized"])
    metrics.add_metric(name="ErasuresFinished", unit=MetricUnit.Count, value=erased)
    logger.info("nightly maintenance", extra={**total, "erasures_finished": erased})
    return {"ok": True, **total, "erasures_finished": erased}
