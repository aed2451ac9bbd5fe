"""Brains for the contract suites: the embedded SQLite one; one whose read model and vector index are
OpenSearch (the AWS adapter) over an in-memory log, projected right after each append; and the AWS one, the same
over the DynamoDB log (through moto)."""

import itertools
import os

import boto3
import pytest
from moto import mock_aws
from opensearchpy import OpenSearch

from second_brain.adapters.event_store.dynamodb import DynamoDBEventStore, table_definition
from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.adapters.event_store.projecting import ProjectingEventStore
from second_brain.adapters.llm.none import NoLanguageModel
from second_brain.adapters.opensearch.index import OpenSearchIndex
from second_brain.bootstrap import Brain, assemble, build
from second_brain.settings import Settings

_prefixes = itertools.count()
RUN = os.getpid()  # pytest-xdist's workers share one node: each keeps to index prefixes of its own


def sqlite_brain(tmp_path, clock, embedder) -> Brain:
    return build(Settings(data_dir=tmp_path / "brain"), clock=clock, embedder=embedder)


def opensearch_brain(url: str, tmp_path, clock, embedder, log=None, refresh: bool = True) -> Brain:
    """`refresh`: every write waits until it is searchable; False as deployed (a search refreshes what this
    process wrote first)."""
    log = log or InMemoryEventStore()
    index = OpenSearchIndex(OpenSearch(url, timeout=60), log, prefix=f"contract-{RUN}-{next(_prefixes)}",
                            dimension=embedder.dimension, refresh=refresh)
    index.drop()
    index.create()
    store = ProjectingEventStore(log, [index])
    return assemble(Settings(data_dir=tmp_path / "unused"), clock, store, index.read_model, index.vectors, embedder,
                    NoLanguageModel(), None, worker=False, index_check=index.check)


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
                                 DynamoDBEventStore(client, "events"))
    else:
        # tests/conftest.py marks a test `opensearch` when it is parametrized with this backend; one that reaches
        # here some other way would start Java inside `make test-fast`
        assert request.node.get_closest_marker("opensearch"), f"{request.node.nodeid} needs @pytest.mark.opensearch"
        brain = opensearch_brain(request.getfixturevalue("opensearch_url"), tmp_path, clock, embedder)
    brain.backend = backend
    return brain


def sqlite_only(brain: Brain, why: str) -> None:
    if brain.backend != "sqlite":
        pytest.skip(why)
