"""The projector's work on one DynamoDB Streams batch: each stream the batch touches re-projected from the log
once (read several at a time, written in one bulk request), then the new content embedded. A record whose
stream cannot be projected fails alone (partial batch response)."""

import time
from collections.abc import Sequence
from typing import Any

from .composition import AwsBrain

# Streams read from the log at once: each read waits on a DynamoDB round trip, not on the CPU.
PROJECTION_THREADS = 8


class OutOfTime(Exception):
    """A stream not projected because the invocation neared its timeout: its records are reported failed, so
    Lambda retries them in the next invocation instead of the whole batch timing out."""


def stream_of(record: dict[str, Any]) -> str | None:
    """The stream a record's event belongs to; None for what is not an event to project."""
    if record.get("eventName") == "REMOVE":
        return None  # the log deletes only the parts of an erased event; nothing to project
    stream_id = record["dynamodb"]["NewImage"]["stream_id"]["S"]
    return None if stream_id.startswith("$") else stream_id  # the position counter, or a part of a large event


def project_streams(aws: AwsBrain, records: Sequence[dict[str, Any]], until: float) -> dict[str, Exception | None]:
    """Project each stream these records touch once (the document is rebuilt from the whole stream, so one
    projection covers all of its records; all of them are written in one bulk request), and say how each went:
    None, or what stopped it."""
    streams = list(dict.fromkeys(s for s in map(stream_of, records) if s is not None))
    if time.monotonic() >= until:
        return {stream_id: OutOfTime(stream_id) for stream_id in streams}
    return aws.index.projection.project_each(streams, threads=PROJECTION_THREADS)


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
