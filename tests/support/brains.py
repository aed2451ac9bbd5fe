"""Brains for the contract suites: the embedded SQLite one; one whose read model and vector index are
OpenSearch (the AWS adapter) over an in-memory log, projected right after each append; and the AWS one, the same
over the DynamoDB log (through moto)."""

import itertools
import os
from concurrent.futures import Future, ThreadPoolExecutor

import boto3
import pytest
from moto import mock_aws
from opensearchpy import OpenSearch

from second_brain.adapters.event_store.dynamodb import DynamoDBEventStore, table_definition
from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.adapters.event_store.projecting import ProjectingEventStore
from second_brain.adapters.llm.none import NoLanguageModel
from second_brain.adapters.opensearch.index import OpenSearchIndex
from second_brain.adapters.opensearch.indexes import Indexes
from second_brain.bootstrap import Brain, assemble, build
from second_brain.settings import Settings

_prefixes = itertools.count()
RUN = os.getpid()  # pytest-xdist's workers share one node: each keeps to index prefixes of its own


def sqlite_brain(tmp_path, clock, embedder) -> Brain:
    return build(Settings(data_dir=tmp_path / "brain"), clock=clock, embedder=embedder)


class IndexSets:
    """This test process's OpenSearch index sets: each contract test on OpenSearch gets empty indexes of its own (a
    set cleared of another test's documents would still count them in its term statistics until a merge), under
    its own prefix. Making a set (five indexes) takes the node 0.4-1 s, so the next one is made on a thread while
    the test runs, and a test's set is dropped on that thread after it (keeping the node's cluster state small)."""

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="index-sets")
        self._spares: dict[tuple[str, int], Future[str]] = {}

    def take(self, url: str, dimension: int) -> str:
        """The prefix of a set of empty indexes made for vectors of `dimension`."""
        ready = self._spares.pop((url, dimension), None) or self._thread.submit(self._make, url, dimension)
        self._spares[(url, dimension)] = self._thread.submit(self._make, url, dimension)
        return ready.result()

    def release(self, url: str, prefix: str) -> None:
        self._thread.submit(self._indexes(url, prefix, 0).drop, cache=True)

    def _make(self, url: str, dimension: int) -> str:
        prefix = f"contract-{RUN}-{next(_prefixes)}"
        self._indexes(url, prefix, dimension).create()
        return prefix

    @staticmethod
    def _indexes(url: str, prefix: str, dimension: int) -> Indexes:
        return Indexes(OpenSearch(url, timeout=60), prefix=prefix, dimension=dimension)


INDEX_SETS = IndexSets()


def opensearch_brain(url: str, tmp_path, clock, embedder, log=None, refresh: bool = True, request=None) -> Brain:
    """`refresh`: every write waits until it is searchable; False as deployed (a search refreshes what this
    process wrote first). With the test's `request`, its indexes are dropped after it."""
    log = log or InMemoryEventStore()
    prefix = INDEX_SETS.take(url, embedder.dimension)
    if request is not None:
        request.addfinalizer(lambda: INDEX_SETS.release(url, prefix))
    index = OpenSearchIndex(OpenSearch(url, timeout=60), log, prefix=prefix, dimension=embedder.dimension,
                            refresh=refresh)
    store = ProjectingEventStore(log, [index])
    # As deployed, where the keys table holds the brain's secret: claims and mirror ids are keyed with it.
    return assemble(Settings(data_dir=tmp_path / "unused"), clock, store, index.read_model, index.vectors, embedder,
                    NoLanguageModel(), None, worker=False, index_check=index.check, content_key=os.urandom(32))


def make_brain(backend: str, request, tmp_path, clock, embedder) -> Brain:
    """A brain on `backend`, which it remembers (for `sqlite_only`)."""
    if backend == "sqlite":
        brain = sqlite_brain(tmp_path, clock, embedder)
    elif backend == "aws":
        assert request.node.get_closest_marker("opensearch"), f"{request.node.nodeid} needs @pytest.mark.opensearch"
        mock = mock_aws()
        mock.start()
        request.addfinalizer(mock.stop)
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**table_definition("events"))
        brain = opensearch_brain(request.getfixturevalue("opensearch_url"), tmp_path, clock, embedder,
                                 # the test's clock; settled at once: one process writes and reads. Two partitions:
                                 # moto reads the whole table for every query (the contract suite runs 16)
                                 DynamoDBEventStore(client, "events", clock.now_ms, settle_ms=0, partitions=2),
                                 request=request)
    else:
        # tests/conftest.py marks a test `opensearch` when it is parametrized with this backend; one that reaches
        # here some other way would start Java inside `make test-fast`
        assert request.node.get_closest_marker("opensearch"), f"{request.node.nodeid} needs @pytest.mark.opensearch"
        brain = opensearch_brain(request.getfixturevalue("opensearch_url"), tmp_path, clock, embedder,
                                 request=request)
    brain.backend = backend
    return brain


def sqlite_only(brain: Brain, why: str) -> None:
    if brain.backend != "sqlite":
        pytest.skip(why)
