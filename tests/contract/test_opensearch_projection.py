"""The OpenSearch projection against the real node: writers that race, and writes that are not refreshed."""

import itertools
import os

import pytest
from opensearchpy import OpenSearch

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.adapters.opensearch.index import OpenSearchIndex
from second_brain.domain.events import MemoryCaptured, MemoryForgotten, MemoryRevised, TagsChanged
from second_brain.ports.read_model import Filters
from tests.conftest import envelope

pytestmark = pytest.mark.opensearch
WS = ("personal-owner",)
_prefixes = itertools.count()


class RacingLog(InMemoryEventStore):
    """The first read of a stream returns what it held, but a rival writer appends `event` and projects it
    completely before that read's projection writes: the read's write lands last, and is stale."""

    def __init__(self) -> None:
        super().__init__()
        self.rival: tuple[OpenSearchIndex, object] | None = None

    def read_stream(self, stream_id: str):
        history = super().read_stream(stream_id)
        if self.rival:
            index, event = self.rival
            self.rival = None
            self.append([envelope(stream_id, history[-1].version + 1, event)])
            index.projection.project([stream_id])
        return history


def indexes(url: str, log) -> tuple[OpenSearchIndex, OpenSearchIndex]:
    """Two writers (the API's inline projection and the stream projector) over one brain's indexes."""
    prefix = f"race-{os.getpid()}-{next(_prefixes)}"  # pytest-xdist's workers share the node
    mine, theirs = (OpenSearchIndex(OpenSearch(url, timeout=60), log, prefix=prefix, dimension=8) for _ in range(2))
    mine.drop()
    mine.create()
    # No scheduled refresh (and no search-idle refresh on demand): only an explicit refresh makes a write visible.
    mine.indexes.client.indices.put_settings(index=f"{prefix}-*", body={"index": {"refresh_interval": "1h"}})
    return mine, theirs


@pytest.mark.parametrize("rival_event", [MemoryRevised("the newer text"), MemoryForgotten()],
                         ids=["revised", "forgotten"])
def test_a_stale_projection_that_lands_last_is_redone_from_the_log(opensearch_url, rival_event):
    log = RacingLog()
    mine, theirs = indexes(opensearch_url, log)
    log.append([envelope("memory-a", 1, MemoryCaptured("the older text", (), "api", "personal-owner"))])
    log.rival = (theirs, rival_event)
    mine.projection.project(["memory-a"])
    row = mine.read_model.get("a", WS)
    if isinstance(rival_event, MemoryForgotten):
        assert row is None  # a forgotten memory never comes back
    else:
        assert row is not None and row.content == "the newer text"


def test_writes_are_not_refreshed_one_by_one_yet_searchable_by_their_writer_and_after_flush(opensearch_url):
    log = InMemoryEventStore()
    mine, theirs = indexes(opensearch_url, log)
    log.append([envelope("memory-a", 1, MemoryCaptured("kestrel over the quarry", (), "api", "personal-owner"))])
    mine.apply(log.read_all(0))
    assert mine.indexes.refresh is False and mine.indexes._unrefreshed  # nothing waited for a refresh
    assert [h.entry.id for h in mine.read_model.keyword_search(["kestrel"], Filters(WS), 5)] == ["a"]
    log.append([envelope("memory-b", 1, MemoryCaptured("kestrel nest found", (), "api", "personal-owner"))])
    mine.apply(log.read_all(1))
    mine.flush()  # the projector, at the end of its batch: every other process sees it now
    assert {h.entry.id for h in theirs.read_model.keyword_search(["kestrel"], Filters(WS), 5)} == {"a", "b"}


def test_a_stale_writer_that_never_reads_the_log_again_cannot_land_last(opensearch_url):
    """The redo above needs the stale writer to live on; one that dies (a Lambda timed out) right after its
    write must still not leave the older document: the index refuses a write from an older stream version."""
    log = InMemoryEventStore()
    mine, theirs = indexes(opensearch_url, log)
    log.append([envelope("memory-a", 1, MemoryCaptured("the older text", ("draft",), "api", "personal-owner"))])
    stale = log.read_stream("memory-a")
    theirs.projection.project(["memory-a"])
    log.append([envelope("memory-a", 2, MemoryRevised("the newer text")),
                envelope("memory-a", 3, TagsChanged(("final",)))])
    theirs.projection.project(["memory-a"])
    outcome = {"memory-a": None}
    mine.projection._write({"memory-a": stale}, outcome)  # what a writer that read the stream first then writes
    assert outcome == {"memory-a": None}
    row = mine.read_model.get("a", WS)
    assert row is not None and row.content == "the newer text" and row.tags == ("final",)


class FailingLog(InMemoryEventStore):
    """A log one of whose streams cannot be read."""

    def read_stream(self, stream_id: str):
        if stream_id == "memory-broken":
            raise ConnectionError("the log timed out")
        return super().read_stream(stream_id)


def test_a_batch_of_streams_is_written_in_one_request_and_a_failure_stays_with_its_stream(opensearch_url):
    """The projector's batch: every document in one bulk request after one read of the current entries, not two
    round trips per stream; a stream that fails is reported alone, and the others are projected."""
    log = FailingLog()
    mine, _ = indexes(opensearch_url, log)
    streams = [f"memory-m{n}" for n in range(20)]
    for stream_id in [*streams, "memory-broken"]:
        log.append([envelope(stream_id, 1, MemoryCaptured(f"osprey nest {stream_id}", (), "api", "personal-owner"))])
    log.append([envelope("memory-m0", 2, TagsChanged(("checked",)))])
    sent: list[str] = []
    perform = mine.indexes.client.transport.perform_request

    def counting(method, url, *args, **kwargs):
        sent.append(f"{method} {url.rsplit('/', 1)[-1]}")
        return perform(method, url, *args, **kwargs)

    mine.indexes.client.transport.perform_request = counting
    outcome = mine.projection.project_each([*streams, "memory-broken", "team"], threads=4)
    assert sent == ["POST _mget", "POST _bulk"]
    assert isinstance(outcome.pop("memory-broken"), ConnectionError)
    assert set(outcome.values()) == {None}
    rows = [mine.read_model.get(s.removeprefix("memory-"), WS) for s in streams]
    assert all(row is not None and row.content == f"osprey nest {s}" for row, s in zip(rows, streams, strict=True))
    assert rows[0].tags == ("checked",)


def test_indexes_are_made_with_the_replicas_the_deployment_asks_and_keep_up_with_a_change(opensearch_url):
    """A production domain runs a replica of every shard (template.yaml's SearchReplicas, BRAIN_OPENSEARCH_REPLICAS):
    new indexes are made with it, and the indexes of a brain deployed before follow it at the next start."""
    from second_brain.adapters.opensearch.indexes import Indexes

    client = OpenSearch(opensearch_url, timeout=60)
    prefix = f"replicas-{os.getpid()}"
    names = [f"{prefix}-{name}" for name in ("entries", "passages", "edges", "projects", "embeddings")]
    try:
        Indexes(client, prefix, 4, replicas=1).create()
        replicas = lambda: {name: client.indices.get_settings(index=name)[name]["settings"]["index"]  # noqa: E731
                            ["number_of_replicas"] for name in names}
        assert replicas() == dict.fromkeys(names, "1")
        Indexes(client, prefix, 4, replicas=2).create()  # the parameter changed: the live indexes follow
        assert replicas() == dict.fromkeys(names, "2")
        Indexes(client, prefix, 4).create()  # no setting: left as the operator set it
        assert replicas() == dict.fromkeys(names, "2")
    finally:
        client.indices.delete(index=",".join(names), ignore_unavailable=True)


class CountingLog(InMemoryEventStore):
    """Counts whole-stream reads."""

    def __init__(self) -> None:
        super().__init__()
        self.whole: list[str] = []

    def read_stream(self, stream_id: str):
        self.whole.append(stream_id)
        return super().read_stream(stream_id)


def test_an_append_that_begins_a_stream_is_projected_without_reading_it_back(opensearch_url):
    """A capture's new memory and its new edges are known whole from the append: the projection writes them
    and only asks the log whether anything came after (DynamoDB: one batch read for all of them, no query)."""
    log = CountingLog()
    mine, _ = indexes(opensearch_url, log)
    stored = log.append([envelope("memory-n", 1, MemoryCaptured("a new note", ("t",), "api", "personal-owner"))])
    checked: list[dict] = []
    original = log.read_streams
    log.read_streams = lambda streams, after=None: checked.append(dict(after or {})) or original(streams, after)
    mine.projection.apply(stored)
    assert log.whole == [] and checked == [{"memory-n": 1}]
    row = mine.read_model.get("n", WS)
    assert row is not None and row.content == "a new note"
    # an append to a stream begun earlier is read whole from the log, as before
    stored = log.append([envelope("memory-n", 2, TagsChanged(("u",)))])
    mine.projection.apply(stored)
    assert log.whole == ["memory-n"] and mine.read_model.get("n", WS).tags == ("u",)
