"""DynamoDB Streams (the events table) → OpenSearch, then embeddings. Partial batch failures: the records of a
stream that cannot be projected (or is left for lack of time) are reported alone and retried without holding the
others back."""

from functools import cache, partial
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
    DynamoDBRecord,
)

from second_brain.aws.composition import AwsBrain, Clients, build_aws
from second_brain.aws.streams import deadline, embed_pending, project_streams, stream_of
from second_brain.aws.tracing import TRACED
from second_brain.settings import Settings

logger, tracer, metrics = Logger(), Tracer(patch_modules=TRACED), Metrics(namespace="SecondBrain")
# Records left for lack of time are all reported failed, as a partial response (retried from the first of
# them), not as an error of the whole batch.
processor = BatchProcessor(event_type=EventType.DynamoDBStreams, raise_on_entire_batch_failure=False)


@cache
def brain() -> AwsBrain:
    return build_aws(Settings(), Clients()).with_indexes()


def record_handler(record: DynamoDBRecord, outcome: dict[str, Exception | None]) -> None:
    stream_id = stream_of(record.raw_event)
    if stream_id is not None and (failure := outcome[stream_id]) is not None:
        raise failure


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)  # memory text stays out of X-Ray
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: Any) -> PartialItemFailureResponse:
    until = deadline(context)
    outcome = project_streams(brain(), event.get("Records", []), until)
    response = process_partial_response(event=event, record_handler=partial(record_handler, outcome=outcome),
                                        processor=processor, context=context)
    metrics.add_metric(name="Projected", unit=MetricUnit.Count,
                       value=len(event.get("Records", [])) - len(response["batchItemFailures"]))
    # The batch is projected: an embedding failure must not fail it (and have it all redone); what was not
    # embedded stays pending for the next batch or the nightly run.
    try:
        report = embed_pending(brain(), until=until)
        metrics.add_metric(name="Vectorized", unit=MetricUnit.Count, value=report["vectorized"])
    except Exception:
        logger.exception("embedding after projection failed; the memories stay pending")
        metrics.add_metric(name="EmbeddingFailed", unit=MetricUnit.Count, value=1)
    brain().refresh()  # searchable by the API now, not at the next refresh interval
    return response
