"""The vector index on OpenSearch: one knn_vector document per passage. Vectors are written by the indexer
(the same app/memories/indexing.py as locally), guarded by the entry document's sequence number so a content change
made meanwhile keeps the entry pending."""

import base64
from collections.abc import Sequence
from typing import Any

import numpy as np
from opensearchpy import helpers
from opensearchpy.exceptions import NotFoundError

from ...domain import text
from ...ports.read_model import Filters
from ...ports.vector_index import PassageVector, PendingEntry, VectorHit
from .indexes import MAX_RESULTS, HeldPassages, Indexes
from .queries import clauses, cosine, passage_matches

# An entry marked indexed whose passages did not all land is pending again, unless its text changed meanwhile
# (then it is already) or it was deprecated (it keeps no passages).
PENDING_AGAIN = ("if (ctx._source.content_version == params.version && !ctx._source.tags.contains('"
                 + text.DEPRECATED + "')) { ctx._source.needs_vectors = true } else { ctx.op = 'none' }")


class OpenSearchVectorIndex:
    def __init__(self, indexes: Indexes) -> None:
        self.ix = indexes

    def pending(self, limit: int, ids: Sequence[str] | None = None) -> list[PendingEntry]:
        if ids is not None:  # read in real time, by id: no refresh of what this process just wrote
            docs = sorted(((i, d) for i, d in self.ix.sources(self.ix.entries, ids).items() if d.get("needs_vectors")),
                          key=lambda item: item[1]["seq"])
        else:
            hits = self.ix.search(self.ix.entries, {"term": {"needs_vectors": True}}, limit, [{"seq": "asc"}])
            docs = [(h["_id"], h["_source"]) for h in hits]
        return [PendingEntry(doc_id, doc["content"], doc["content_version"], doc["workspace"])
                for doc_id, doc in docs[:limit]]

    def pending_count(self, older_than: int | None = None, workspaces: Sequence[str] | None = None) -> int:
        clauses: list[dict] = [{"term": {"needs_vectors": True}}]
        if older_than is not None:
            clauses.append({"range": {"created_at": {"lt": older_than}}})
        if workspaces is not None:
            clauses.append({"terms": {"workspace": list(workspaces)}})
        return self.ix.count({"bool": {"filter": clauses}})

    def is_indexed(self, entry_id: str) -> bool:
        source = self.ix.source(self.ix.entries, entry_id)
        if not source:
            return False
        return source.get("needs_vectors") is False and text.DEPRECATED not in source["tags"]

    def vector_count(self, entry_id: str) -> int:
        return self.ix.count({"term": {"entry_id": entry_id}}, self.ix.passages)

    def cached(self, model_id: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        hashes = list(dict.fromkeys(text_hashes))
        for start in range(0, len(hashes), 500):
            batch = hashes[start : start + 500]
            query = {"bool": {"filter": [{"term": {"model_id": model_id}}, {"terms": {"text_hash": batch}}]}}
            for hit in self.ix.scan(self.ix.embeddings, query, []):
                found[hit["_source"]["text_hash"]] = np.frombuffer(base64.b64decode(hit["_source"]["vector"]),
                                                                   dtype=np.float32)
        return found

    def store(self, model_id: str, entry: PendingEntry, passages: Sequence[PassageVector]) -> bool:
        """Write an entry's passages; False (it stays pending) if its content changed meanwhile."""
        try:
            found = self.ix.client.get(index=self.ix.entries, id=entry.id)
        except NotFoundError:
            return False
        source = found["_source"]
        if source["content_version"] != entry.version or text.DEPRECATED in source["tags"]:
            return False
        # The passages are `<entry>:<n>`: those this write does not overwrite go by id. Finding them by a search
        # would need a refresh of the passages index first, in every capture.
        stale = self.ix.passage_ids(entry.id, source, start=len(passages))
        actions: list[dict[str, Any]] = [{"_op_type": "delete", "_index": self.ix.passages, "_id": passage_id}
                                         for passage_id in stale]
        actions += [{"_index": self.ix.passages, "_id": f"{entry.id}:{n}", "_source": {
            "entry_id": entry.id, "workspace": source["workspace"], "tags": source["tags"],
            "created_at": source["created_at"], "seq": source["seq"], "stream_version": source.get("stream_version"),
            "content_version": entry.version, "passage": n,
            "is_update": passage.is_update, "vector": [float(x) for x in passage.vector]}}
            for n, passage in enumerate(passages)]
        # The cache: one document per memory and text, so forgetting the memory can take its vectors out.
        actions += [{"_index": self.ix.embeddings, "_id": f"{model_id}:{passage.text_hash}:{entry.id}", "_source": {
            "model_id": model_id, "text_hash": passage.text_hash, "entry_id": entry.id,
            "vector": base64.b64encode(np.asarray(passage.vector, dtype=np.float32).tobytes()).decode()}}
            for passage in passages]
        vectors = np.asarray([passage.vector for passage in passages], dtype=np.float32).reshape(len(passages), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        held = self.ix.hold({entry.id: HeldPassages(
            {key: source[key] for key in ("workspace", "tags", "created_at", "seq")},
            vectors / np.where(norms == 0, 1, norms), tuple(passage.is_update for passage in passages))})
        # The entry is marked indexed in the same request, guarded by the version read above.
        actions.append({"_op_type": "update", "_index": self.ix.entries, "_id": entry.id,
                        "if_seq_no": found["_seq_no"], "if_primary_term": found["_primary_term"],
                        "doc": {"needs_vectors": False, "indexed_version": entry.version,
                                "passage_count": len(passages)}})
        self.ix.write(self.ix.entries)
        try:
            failed = self.ix.bulk(actions, self.ix.passages, self.ix.embeddings, held=held)
        except Exception:
            self.ix.release([entry.id])  # what did land is not held: the next search refreshes
            raise
        if not failed:
            return True
        self.ix.release([entry.id])
        lost = [item for item in failed if item["_index"] != self.ix.entries]
        if len(lost) == len(failed):  # marked indexed without every passage: pending again, unless it moved on
            self.ix.client.update(index=self.ix.entries, id=entry.id, refresh=self.ix.write(self.ix.entries),
                                  body={"script": {"lang": "painless", "source": PENDING_AGAIN,
                                                   "params": {"version": entry.version}}})
        else:
            # The entry changed after we read it (or is gone). Changed text stays pending and is embedded again;
            # but a forget or deprecation projected while we wrote may have missed these passages: they must not
            # stay. Nor may those past the count the entry keeps, which the next write would not know to delete.
            now = self.ix.source(self.ix.entries, entry.id)
            if now is None or text.DEPRECATED in now["tags"]:
                self.ix.delete_passages(entry.id)
            elif now["content_version"] != entry.version:
                self.ix.delete_where(self.ix.passages, {"bool": {"filter": [
                    {"term": {"entry_id": entry.id}}, {"range": {"passage": {"gte": now.get("passage_count", 0)}}}]}})
        if lost:
            raise helpers.BulkIndexError(f"{len(lost)} passage document(s) failed to write", lost)
        return False

    def search(self, query: np.ndarray, filters: Filters, limit: int) -> list[VectorHit]:
        wanted = clauses(filters, entry_fields=False)  # passages carry no author or position
        k = min(MAX_RESULTS, max(limit * 4, 10))
        body = {"size": k, "_source": ["entry_id", "is_update"], "query": {"knn": {"vector": {
            "vector": [float(x) for x in query], "k": k, "filter": {"bool": {"filter": wanted}}}}}}
        found = self.ix.query(self.ix.passages, body, held=True)["hits"]["hits"]
        held = self.ix.held()  # after the search: a refresh it made lets the held passages go
        best: dict[str, VectorHit] = {}
        for hit in found:
            entry_id = hit["_source"]["entry_id"]
            if entry_id not in best and entry_id not in held:  # best first: a memory's first passage is its best
                best[entry_id] = VectorHit(entry_id, cosine(hit["_score"]), hit["_source"]["is_update"])
        unit = query / (np.linalg.norm(query) or 1.0)
        for entry_id, passages in held.items():  # the index may not see these as written yet
            if passages is not None and passage_matches(filters, passages.fields):
                scores = passages.vectors @ unit
                top = int(np.argmax(scores))
                best[entry_id] = VectorHit(entry_id, float(scores[top]), passages.is_update[top])
        return sorted(best.values(), key=lambda hit: hit.score, reverse=True)[:limit]

    def scores_for(self, query: np.ndarray, entry_ids: Sequence[str]) -> dict[str, VectorHit]:
        if not entry_ids:
            return {}
        hits = self.ix.scan(self.ix.passages, {"terms": {"entry_id": list(entry_ids)}}, [{"passage": "asc"}])
        best: dict[str, VectorHit] = {}
        for hit in hits:
            source = hit["_source"]
            score = float(np.dot(np.asarray(source["vector"], dtype=np.float32), query))
            if source["entry_id"] not in best or score > best[source["entry_id"]].score:
                best[source["entry_id"]] = VectorHit(source["entry_id"], score, source["is_update"])
        return best

    def vector_of(self, entry_id: str) -> np.ndarray | None:
        source = self.ix.source(self.ix.passages, f"{entry_id}:0")
        return np.asarray(source["vector"], dtype=np.float32) if source else None

    def vectors_of(self, entry_ids: Sequence[str]) -> dict[str, np.ndarray]:
        # One multi get: a get each was a round trip per candidate of every recall.
        first = {f"{entry_id}:0": entry_id for entry_id in entry_ids}
        return {first[doc_id]: np.asarray(source["vector"], dtype=np.float32)
                for doc_id, source in self.ix.sources(self.ix.passages, list(first)).items()}
