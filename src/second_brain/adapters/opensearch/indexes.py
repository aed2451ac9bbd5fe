"""This brain's OpenSearch indexes (mapped in mappings/, linked from infra/opensearch/): entries (the read model,
with a 3-gram subfield for the keyword side), passages (one knn_vector per passage, lucene HNSW, cosine), edges,
projects, and embeddings (every passage vector made, by model and text: the cache a replay and a recall as of a
past moment read instead of embedding again); and the few requests every role makes of them."""

import json
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import NotFoundError, TransportError

from ...ports.read_model import EntryRow
from .queries import row_of

MAPPINGS = Path(__file__).resolve().parent / "mappings"  # infra/opensearch links here
MAX_RESULTS = 10_000
# The passages this process wrote or deleted since it last refreshed the passages index are held in memory, so a
# search can merge them in instead of refreshing first (20-60 ms on the test node, in every capture: its duplicate
# check reads the previous capture's passages, its link inference follows its own). Beyond HELD_AT_MOST memories a
# search refreshes instead. After HELD_FOR seconds OpenSearch has refreshed them itself (the mappings keep the 1 s
# refresh interval, and a search of an idle shard waits for its pending refresh), and what another process wrote
# since, such as a forget, must win over the copy held here.
HELD_AT_MOST = 256
HELD_FOR = 3.0
# A projection's write lands only on a document projected from the same or an older version of its stream: two
# writers (the API projecting its own append, the stream projector) can race, and the one that read the stream
# first must not land last. Documents written before the field existed carry none, and take any write.
NEWER_ONLY = ("if (ctx._source.stream_version != null && ctx._source.stream_version > params.doc.stream_version)"
              " { ctx.op = 'none' } else { ctx._source.putAll(params.doc) }")


@dataclass(frozen=True)
class HeldPassages:
    """A memory's passages as this process last wrote them."""

    fields: dict[str, Any]  # what a search filters passages on: workspace, tags, created_at, seq
    vectors: np.ndarray  # one unit row per passage
    is_update: tuple[bool, ...]


def mapping(name: str, dimension: int = 0) -> dict[str, Any]:
    """An index definition from mappings/, with the vector dimension filled in."""
    raw = (MAPPINGS / f"{name}.json").read_text()
    return json.loads(raw.replace('"${DIMENSION}"', str(dimension)))


class Indexes:
    """The indexes of one brain (`prefix` names them) on one cluster."""

    def __init__(self, client: OpenSearch, prefix: str = "brain", dimension: int = 384,
                 refresh: bool | str = False, replicas: int | None = None) -> None:
        self.client = client
        self.dimension = dimension
        self.replicas = replicas  # copies of each shard on other nodes; None: the mappings' 0 for a new index
        # False: writes return at once (waiting for OpenSearch's refresh took a second per write), and this
        # process refreshes an index it wrote before it next searches it (read-your-writes for the API and
        # the projector); other processes see the writes within the refresh interval or after `flush`.
        self.refresh = refresh
        self._unrefreshed: set[str] = set()
        # Written since the last refresh by a writer that does not hold what it wrote in memory (see `hold`).
        self._unheld: set[str] = set()
        self._held: dict[str, tuple[float, HeldPassages | None]] = {}  # oldest first; None: deleted
        self._held_lock = threading.Lock()
        self.entries, self.passages = f"{prefix}-entries", f"{prefix}-passages"
        self.edges, self.projects = f"{prefix}-edges", f"{prefix}-projects"
        self.embeddings = f"{prefix}-embeddings"

    def create(self) -> None:
        """Create the indexes that do not exist yet, and add fields a newer mapping has to those that do
        (idempotent: OpenSearch accepts new fields on a live index, and the same fields again)."""
        for index, name in ((self.entries, "entries"), (self.passages, "passages"), (self.edges, "edges"),
                            (self.projects, "projects"), (self.embeddings, "embeddings")):
            body = mapping(name, self.dimension)
            if self.replicas is not None:
                body["settings"]["index"]["number_of_replicas"] = self.replicas
            if not self.client.indices.exists(index=index):
                self.client.indices.create(index=index, body=body)
                continue
            self.client.indices.put_mapping(index=index, body=body["mappings"])
            if self.replicas is not None:  # a dynamic setting: a deployment that asks for more gets them now
                self.client.indices.put_settings(index=index, body={"index": {"number_of_replicas": self.replicas}})

    def expunge_deletes(self) -> None:
        """Start rewriting the segments that hold deleted documents (a forgotten memory's entry, passages and edges
        stay in their segment, readable on disk and in every snapshot, until a merge drops them). It runs on the
        domain after this returns: a large index takes longer than a nightly run has."""
        indexes = ",".join((self.entries, self.passages, self.edges, self.projects, self.embeddings))
        self.client.indices.forcemerge(index=indexes, params={"only_expunge_deletes": "true",
                                                              "wait_for_completion": "false",
                                                              "ignore_unavailable": "true"})

    def drop(self, cache: bool = False) -> None:
        """Drop the projections (a replay rebuilds them); the embedding cache too only with `cache`, as it is
        keyed by what was embedded and outlives replays (a forget takes its own vectors out of it)."""
        for index in (self.entries, self.passages, self.edges, self.projects, *([self.embeddings] if cache else [])):
            self.client.indices.delete(index=index, ignore_unavailable=True)

    def write(self, *indexes: str, held: bool = False) -> bool | str:
        """The refresh argument of a write to these indexes; they are refreshed before this process searches them,
        except by a search that merges in what `held` writes left in memory (until the index's next refresh)."""
        if self.refresh is False:
            self._unrefreshed.update(indexes)
            if not held:
                self._unheld.update(indexes)
        return self.refresh

    def hold(self, passages: dict[str, HeldPassages | None]) -> bool:
        """Hold these memories' passages (None: deleted) in memory until the passages index is next refreshed, for
        a search to merge in; False if they are not held (writes searchable at once, or too many held), and the
        write that follows is then not `held`."""
        if self.refresh is not False:
            return False
        with self._held_lock:
            self._expire()
            if len(self._held.keys() | passages.keys()) > HELD_AT_MOST:
                return False
            now = time.monotonic()
            for entry_id, held in passages.items():
                self._held.pop(entry_id, None)  # written again: it goes to the end, with the newest
                self._held[entry_id] = (now, held)
            return True

    def release(self, entry_ids: Iterable[str]) -> None:
        """Stop holding these memories' passages (their write failed or was undone): the next search refreshes."""
        with self._held_lock:
            for entry_id in entry_ids:
                self._held.pop(entry_id, None)
        self.write(self.passages)

    def held(self) -> dict[str, HeldPassages | None]:
        """The passages held in memory, which a search of the passages index may not see yet."""
        with self._held_lock:
            self._expire()
            return {entry_id: held for entry_id, (_, held) in self._held.items()}

    def _expire(self, before: float | None = None) -> None:
        before = time.monotonic() - HELD_FOR if before is None else before
        while self._held and next(iter(self._held.values()))[0] < before:
            del self._held[next(iter(self._held))]

    def flush(self) -> None:
        """Make every write of this process searchable now (the projector, at the end of each batch)."""
        if self._unrefreshed:
            self._refresh(sorted(self._unrefreshed))

    def _refresh(self, indexes: list[str]) -> None:
        started = time.monotonic()
        for index in indexes:
            self._unrefreshed.discard(index)
            self._unheld.discard(index)
        self.client.indices.refresh(index=",".join(indexes))
        if self.passages in indexes:
            with self._held_lock:
                self._expire(before=started)  # what was written before the refresh is searchable now

    def _fresh(self, index: str, held: bool = False) -> None:
        """Refresh the index if this process wrote it since: any write, or with `held` one nobody holds."""
        if index in (self._unheld if held else self._unrefreshed):
            self._refresh([index])

    def query(self, index: str, body: dict, held: bool = False) -> dict:
        """A search request as it is (aggregations included), after this process's writes to the index: all of
        them, or with `held` those the caller does not hold in memory to merge in itself."""
        self._fresh(index, held)
        return self.client.search(index=index, body=body)

    def bulk(self, actions: list[dict[str, Any]], *indexes: str, held: bool = False) -> list[dict[str, Any]]:
        """Write these actions at once; the items that failed, as the response gives them (a delete of what is
        already gone did not)."""
        if not actions:
            return []
        _, failed = helpers.bulk(self.client, actions, refresh=self.write(*indexes, held=held), raise_on_error=False)
        return [item for f in failed for op, item in f.items()
                if not (op == "delete" and item.get("status") == 404)]

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

    def search(self, index: str, query: dict, size: int, sort: list | None = None, offset: int = 0) -> list[dict]:
        body: dict[str, Any] = {"query": query, "size": max(0, min(size, MAX_RESULTS - offset))}
        if offset:
            body["from"] = offset
        if sort:
            body["sort"] = sort
        return self.query(index, body)["hits"]["hits"]

    def searches(self, index: str, requests: Sequence[tuple[dict, int, list]]) -> list[list[dict]]:
        """Several searches of one index, each (query, size, sort), in one round trip (a multi search): the hits
        of each, as `search` would give them; a search that failed raises as `search` would."""
        if not requests:
            return []
        self._fresh(index)
        lines: list[dict[str, Any]] = []
        for query, size, sort in requests:
            lines += [{"index": index}, {"query": query, "size": max(0, min(size, MAX_RESULTS)),
                                         **({"sort": sort} if sort else {})}]
        answers = self.client.msearch(body=lines)["responses"]
        for answer in answers:
            if "error" in answer:
                error = answer["error"]
                raise TransportError(answer.get("status", 500), error.get("type", "search_failed")
                                     if isinstance(error, dict) else str(error), error)
        return [answer["hits"]["hits"] for answer in answers]

    def rows(self, query: dict, size: int, sort: list, offset: int = 0) -> list[EntryRow]:
        return [row_of(h["_source"]) for h in self.search(self.entries, query, size, sort, offset)]

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
