"""DynamoDB Streams (the events table) → OpenSearch, then embeddings. Partial batch failures: a record
that cannot be projected is reported alone and retried (bisected) without holding the others back."""

from functools import cache

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
    DynamoDBRecord,
)

from second_brain.aws.composition import AwsBrain, Clients, build_aws
from second_brain.aws.streams import embed_pending, project_record
from second_brain.settings import Settings

logger, tracer, metrics = Logger(), Tracer(), Metrics(namespace="SecondBrain")
processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


@cache
def brain() -> AwsBrain:
    aws = build_aws(Settings(), Clients())
    aws.index.create()
    return aws


def record_handler(record: DynamoDBRecord) -> None:
    project_record(brain(), record.raw_event)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: object) -> dict:
    response = process_partial_response(event=event, record_handler=record_handler, processor=processor,
                                        context=context)
    report = embed_pending(brain())
    metrics.add_metric(name="Projected", unit=MetricUnit.Count, value=len(event.get("Records", [])))
    metrics.add_metric(name="Vectorized", unit=MetricUnit.Count, value=report["vectorized"])
    return response
