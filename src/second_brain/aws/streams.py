"""The projector's work on one DynamoDB Streams batch: each stream the batch touches re-projected from the log
once, several at a time, then the new content embedded. A record whose stream cannot be projected fails alone
(partial batch response)."""

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .composition import AwsBrain

# Streams projected at once: each projection waits on DynamoDB and OpenSearch round trips, not on the CPU.
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
    projection covers all of its records), and say how each went: None, or what stopped it."""

    def project(stream_id: str) -> Exception | None:
        if time.monotonic() >= until:
            return OutOfTime(stream_id)
        try:
            aws.index.projection.project([stream_id])
        except Exception as exc:  # noqa: BLE001 (reported against this stream's records only)
            return exc
        return None

    streams = list(dict.fromkeys(s for s in map(stream_of, records) if s is not None))
    if not streams:
        return {}
    with ThreadPoolExecutor(min(PROJECTION_THREADS, len(streams))) as pool:
        return dict(zip(streams, pool.map(project, streams), strict=True))


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
