"""This brain's OpenSearch indexes (mapped in mappings/, linked from infra/opensearch/): entries (the read model,
with a 3-gram subfield for the keyword side), passages (one knn_vector per passage, lucene HNSW, cosine), edges,
projects, and embeddings (every passage vector made, by model and text: the cache a replay and a recall as of a
past moment read instead of embedding again); and the few requests every role makes of them."""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import NotFoundError

from ...ports.read_model import EntryRow
from .queries import row_of

MAPPINGS = Path(__file__).resolve().parent / "mappings"  # infra/opensearch links here
MAX_RESULTS = 10_000
# A projection's write lands only on a document projected from the same or an older version of its stream: two
# writers (the API projecting its own append, the stream projector) can race, and the one that read the stream
# first must not land last. Documents written before the field existed carry none, and take any write.
NEWER_ONLY = ("if (ctx._source.stream_version != null && ctx._source.stream_version > params.doc.stream_version)"
              " { ctx.op = 'none' } else { ctx._source.putAll(params.doc) }")


def mapping(name: str, dimension: int = 0) -> dict[str, Any]:
    """An index definition from mappings/, with the vector dimension filled in."""
    raw = (MAPPINGS / f"{name}.json").read_text()
    return json.loads(raw.replace('"${DIMENSION}"', str(dimension)))


class Indexes:
    """The indexes of one brain (`prefix` names them) on one cluster."""

    def __init__(self, client: OpenSearch, prefix: str = "brain", dimension: int = 384,
                 refresh: bool | str = False) -> None:
        self.client = client
        self.dimension = dimension
        # False: writes return at once (waiting for OpenSearch's refresh took a second per write), and this
        # process refreshes an index it wrote before it next searches it (read-your-writes for the API and
        # the projector); other processes see the writes within the refresh interval or after `flush`.
        self.refresh = refresh
        self._unrefreshed: set[str] = set()
        self.entries, self.passages = f"{prefix}-entries", f"{prefix}-passages"
        self.edges, self.projects = f"{prefix}-edges", f"{prefix}-projects"
        self.embeddings = f"{prefix}-embeddings"

    def create(self) -> None:
        """Create the indexes that do not exist yet, and add fields a newer mapping has to those that do
        (idempotent: OpenSearch accepts new fields on a live index, and the same fields again)."""
        for index, name in ((self.entries, "entries"), (self.passages, "passages"), (self.edges, "edges"),
                            (self.projects, "projects"), (self.embeddings, "embeddings")):
            body = mapping(name, self.dimension)
            if not self.client.indices.exists(index=index):
                self.client.indices.create(index=index, body=body)
            else:
                self.client.indices.put_mapping(index=index, body=body["mappings"])

    def drop(self, cache: bool = False) -> None:
        """Drop the projections (a replay rebuilds them); the embedding cache too only with `cache`, as it is
        keyed by what was embedded and outlives replays (a forget takes its own vectors out of it)."""
        for index in (self.entries, self.passages, self.edges, self.projects, *([self.embeddings] if cache else [])):
            self.client.indices.delete(index=index, ignore_unavailable=True)

    def write(self, *indexes: str) -> bool | str:
        """The refresh argument of a write to these indexes; they are refreshed before this process searches them."""
        if self.refresh is False:
            self._unrefreshed.update(indexes)
        return self.refresh

    def flush(self) -> None:
        """Make every write of this process searchable now (the projector, at the end of each batch)."""
        if self._unrefreshed:
            indexes, self._unrefreshed = sorted(self._unrefreshed), set()
            self.client.indices.refresh(index=",".join(indexes))

    def _fresh(self, index: str) -> None:
        if index in self._unrefreshed:
            self._unrefreshed.discard(index)
            self.client.indices.refresh(index=index)

    def query(self, index: str, body: dict) -> dict:
        """A search request as it is (aggregations included), after this process's writes to the index."""
        self._fresh(index)
        return self.client.search(index=index, body=body)

    def bulk(self, actions: list[dict[str, Any]], *indexes: str) -> None:
        """Write these actions at once; a delete of what is already gone is not an error."""
        if not actions:
            return
        _, failed = helpers.bulk(self.client, actions, refresh=self.write(*indexes), raise_on_error=False)
        errors = [f for f in failed if next(iter(f.values())).get("status") != 404]  # type: ignore[union-attr]
        if errors:
            raise helpers.BulkIndexError(f"{len(errors)} document(s) failed to write", errors)

    def passage_ids(self, entry_id: str, entry: dict[str, Any], start: int = 0) -> list[str]:
        """The ids of this entry's passages from the `start`th on, from the count its document keeps (found by a
        search only for a document written before the count was kept)."""
        if "passage_count" in entry:
            return [f"{entry_id}:{n}" for n in range(start, entry["passage_count"])]
        if entry.get("indexed_version") is None:
            return []  # never given vectors
        hits = self.scan(self.passages, {"term": {"entry_id": entry_id}}, [])
        return [h["_id"] for h in hits if int(h["_id"].rpartition(":")[2]) >= start]

    def delete_passages(self, entry_id: str) -> None:
        self.delete_where(self.passages, {"term": {"entry_id": entry_id}})

    def delete_where(self, index: str, query: dict) -> None:
        """Delete the (few) documents a query finds; plain deletes, so no reindex module is needed."""
        hits = self.scan(index, query, [])
        if hits:
            helpers.bulk(self.client, [{"_op_type": "delete", "_index": index, "_id": h["_id"]} for h in hits],
                         refresh=self.write(index), raise_on_error=False)

    def source(self, index: str, doc_id: str) -> dict | None:
        try:
            return self.client.get(index=index, id=doc_id)["_source"]
        except NotFoundError:
            return None

    def sources(self, index: str, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The documents of these ids that exist, as stored (read in real time: no refresh needed)."""
        if not ids:
            return {}
        docs = self.client.mget(index=index, body={"ids": list(dict.fromkeys(ids))})["docs"]
        return {d["_id"]: d["_source"] for d in docs if d.get("found")}

    def mget(self, index: str, ids: Sequence[str]) -> dict[str, EntryRow]:
        return {doc_id: row_of(source) for doc_id, source in self.sources(index, ids).items()}

    def count(self, query: dict, index: str | None = None) -> int:
        index = index or self.entries
        self._fresh(index)
        return int(self.client.count(index=index, body={"query": query})["count"])

    def search(self, index: str, query: dict, size: int, sort: list | None = None) -> list[dict]:
        body: dict[str, Any] = {"query": query, "size": min(size, MAX_RESULTS)}
        if sort:
            body["sort"] = sort
        return self.query(index, body)["hits"]["hits"]

    def rows(self, query: dict, size: int, sort: list) -> list[EntryRow]:
        return [row_of(h["_source"]) for h in self.search(self.entries, query, size, sort)]

    def scan(self, index: str, query: dict, sort: list) -> list[dict]:
        """Every hit, paged with search_after (no scroll context to leak)."""
        found: list[dict] = []
        after = None
        while True:
            body: dict[str, Any] = {"query": query, "size": 1000, "sort": [*sort, {"_id": "asc"}]}
            if after:
                body["search_after"] = after
            hits = self.query(index, body)["hits"]["hits"]
            found.extend(hits)
            if len(hits) < 1000:
                return found
            after = hits[-1]["sort"]


def newer_only(doc: dict[str, Any]) -> dict[str, Any]:
    """The update script that sets these fields unless the document holds a newer stream version."""
    return {"lang": "painless", "source": NEWER_ONLY, "params": {"doc": doc}}
