"""The projector's work on one DynamoDB Streams batch: each record's stream re-projected from the log, then
the new content embedded. A record that cannot be read fails alone (partial batch response)."""

import time
from typing import Any

from .composition import AwsBrain


def project_record(aws: AwsBrain, record: dict[str, Any]) -> None:
    """Project the stream one record belongs to (idempotent: the document is rebuilt from the stream)."""
    if record.get("eventName") == "REMOVE":
        return  # the log deletes only the parts of an erased event; nothing to project
    stream_id = record["dynamodb"]["NewImage"]["stream_id"]["S"]
    if stream_id.startswith("$"):
        return  # the position counter or a part of a large event, not an event
    aws.index.projection.project([stream_id])


# What a function keeps back from its timeout: one embedding batch (a model call per text, each bounded by the
# client's timeouts) must still finish, and the function return, before Lambda stops it.
RESERVE_SECONDS = 20.0


def deadline(context: Any, reserve: float = RESERVE_SECONDS) -> float:
    """The time.monotonic() after which no new work starts in this invocation."""
    return time.monotonic() + context.get_remaining_time_in_millis() / 1000 - reserve


def embed_pending(aws: AwsBrain, limit: int = 64, until: float | None = None) -> dict[str, int]:
    """Embed what the batch made pending, stopping at `until`; what is left stays pending for the next batch
    or the nightly run."""
    if aws.brain.indexer is None:
        return {"vectorized": 0, "failed": 0, "remaining": 0}
    report = aws.brain.indexer.run_once(limit, deadline=until)
    return {"vectorized": report.vectorized, "failed": report.failed, "remaining": report.remaining}
