"""One brain on OpenSearch (the AWS deployment): its indexes, and the three roles they play behind the ports
the SQLite brain implements: the projection, the read model and the vector index."""

from collections.abc import Sequence

from opensearchpy import OpenSearch

from ...domain.events import Envelope
from ...ports.event_store import EventStore
from .check import OpenSearchIndexCheck
from .indexes import Indexes, mapping
from .projection import OpenSearchProjection
from .read_model import OpenSearchReadModel
from .vector_index import OpenSearchVectorIndex

__all__ = ["OpenSearchIndex", "mapping"]


class OpenSearchIndex:
    """The four indexes of one brain (`prefix`), and the projection, read model, vector index and nightly check over
    them."""

    def __init__(self, client: OpenSearch, store: EventStore, prefix: str = "brain", dimension: int = 384,
                 refresh: bool | str = False, replicas: int | None = None) -> None:
        self.indexes = Indexes(client, prefix, dimension, refresh, replicas)
        self.projection = OpenSearchProjection(self.indexes, store)
        self.read_model = OpenSearchReadModel(self.indexes)
        self.vectors = OpenSearchVectorIndex(self.indexes)
        self.check = OpenSearchIndexCheck(self.indexes, self.projection, store)

    def create(self) -> None:
        self.indexes.create()

    def drop(self) -> None:
        self.indexes.drop()

    def expunge_deletes(self) -> None:
        self.indexes.expunge_deletes()

    def flush(self) -> None:
        """Make this process's writes searchable by every other one now."""
        self.indexes.flush()

    def apply(self, events: Sequence[Envelope]) -> None:
        """Project a batch (the event store calls this after each append, the stream projector per record)."""
        self.projection.apply(events)
