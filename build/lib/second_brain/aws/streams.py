"""The projector's work on one DynamoDB Streams batch: each record's stream re-projected from the log, then
the new content embedded. A record that cannot be read fails alone (partial batch response)."""

from typing import Any

from ..adapters.event_store.dynamodb import HEAD_STREAM, envelope_from_item
from .composition import AwsBrain


def project_record(aws: AwsBrain, record: dict[str, Any]) -> None:
    """Project the stream one record belongs to (idempotent: the document is rebuilt from the stream)."""
    if record.get("eventName") == "REMOVE":
        return  # the log never deletes events; nothing to project
    image = record["dynamodb"]["NewImage"]
    if image["stream_id"]["S"] == HEAD_STREAM:
        return  # the position counter, not an event
    aws.index.apply([envelope_from_item(image)])


def embed_pending(aws: AwsBrain, limit: int = 64) -> dict[str, int]:
    """Embed what the batch made pending; failures stay pending for the next batch or the nightly run."""
    if aws.brain.indexer is None:
        return {"vectorized": 0, "failed": 0, "remaining": 0}
    report = aws.brain.indexer.run_once(limit)
    return {"vectorized": report.vectorized, "failed": report.failed, "remaining": report.remaining}
