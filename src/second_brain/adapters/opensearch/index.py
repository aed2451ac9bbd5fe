"""The read model and the vector index on OpenSearch (the AWS deployment), behind the same two ports the
SQLite brain implements, so the recall pipeline's fusion and ranking stay in shared code.

Four indexes, mapped in mappings/ (linked from infra/opensearch/): entries (the read model, with a 3-gram subfield for the keyword
side), passages (one knn_vector per passage, lucene HNSW, cosine), edges and projects.

The projection rebuilds each touched stream's document from the whole stream (app/folds.py) rather than
applying event deltas, so a redelivered, repeated or reordered batch leaves exactly what one clean
delivery would. Vectors are written by the indexer (the same app/indexing.py as locally), guarded by the
entry document's sequence number so a content change made meanwhile keeps the entry pending.
"""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import ConflictError, NotFoundError

from ...app.folds import fold_edge, fold_project
from ...domain import text
from ...domain.events import Envelope
from ...domain.memory import DIGEST_MIN_ENTRIES, DIGEST_RECALL_GRACE_MS, Memory, fold
from ...ports.event_store import EventStore
from ...ports.read_model import (
    Connection,
    EdgeRow,
    EntryRow,
    Filters,
    KeywordHit,
    ProjectRow,
    TagCount,
    TermStats,
)
from ...ports.vector_index import PassageVector, PendingEntry, VectorHit

MAPPINGS = Path(__file__).resolve().parent / "mappings"  # infra/opensearch links here
ENTRY_FIELDS = ("id", "content", "tags", "source", "workspace", "actor", "created_at", "updated_at",
                "importance_score", "recall_count", "contradiction_wins", "contradiction_losses", "when_at",
                "when_kind")
MAX_RESULTS = 10_000


def mapping(name: str, dimension: int = 0) -> dict[str, Any]:
    """An index definition from infra/opensearch, with the vector dimension filled in."""
    raw = (MAPPINGS / f"{name}.json").read_text()
    return json.loads(raw.replace('"${DIMENSION}"', str(dimension)))


class OpenSearchIndex:
    """ReadModel + VectorIndex over one OpenSearch cluster; `prefix` names this brain's four indexes."""

    def __init__(self, client: OpenSearch, store: EventStore, prefix: str = "brain", dimension: int = 384,
                 refresh: bool | str = "wait_for") -> None:
        self.client = client
        self.log = store  # the event log the projection re-reads streams from
        self.dimension = dimension
        self.refresh = refresh  # "wait_for": a capture is readable when the projection step returns
        self.entries, self.passages = f"{prefix}-entries", f"{prefix}-passages"
        self.edges, self.project_index = f"{prefix}-edges", f"{prefix}-projects"

    def create(self) -> None:
        """Create the indexes that do not exist yet (idempotent)."""
        for index, name in ((self.entries, "entries"), (self.passages, "passages"), (self.edges, "edges"),
                            (self.project_index, "projects")):
            if not self.client.indices.exists(index=index):
                self.client.indices.create(index=index, body=mapping(name, self.dimension))

    def drop(self) -> None:
        for index in (self.entries, self.passages, self.edges, self.project_index):
            self.client.indices.delete(index=index, ignore_unavailable=True)

    # -- projection -------------------------------------------------------------------------------------------------

    def apply(self, events: Sequence[Envelope]) -> None:
        """Bring every stream these events touch up to date, from the stream itself."""
        for stream_id in dict.fromkeys(e.stream_id for e in events):
            history = self.log.read_stream(stream_id)
            if stream_id.startswith("memory-"):
                self._project_entry(stream_id.removeprefix("memory-"), history)
            elif stream_id.startswith("link-"):
                self._project_edge(stream_id, history)
            elif stream_id.startswith("project-"):
                self._project_project(stream_id, history)

    def _project_entry(self, entry_id: str, history: list[Envelope]) -> None:
        memory = fold(history, Memory(entry_id))
        if not memory.exists:  # forgotten (or never written): the entry, its vectors and its edges go
            self.client.delete(index=self.entries, id=entry_id, refresh=self.refresh, ignore=[404])
            self._delete_passages(entry_id)
            self._delete_where(self.edges, {"bool": {"should": [
                {"term": {"source_id": entry_id}}, {"term": {"target_id": entry_id}}]}})
            return
        deprecated = memory.deprecated
        current = self._source(self.entries, entry_id)
        doc = {field: getattr(EntryRow.of(memory), field) for field in ENTRY_FIELDS} | {
            "tags": list(memory.tags), "content_version": memory.content_version, "seq": memory.position}
        changed = current is None or current.get("content_version") != memory.content_version
        if deprecated:
            doc["needs_vectors"] = False
            self._delete_passages(entry_id)
        elif changed or current.get("needs_vectors") is None:
            doc["needs_vectors"] = True
        self.client.update(index=self.entries, id=entry_id, body={"doc": doc, "doc_as_upsert": True},
                           refresh=self.refresh, retry_on_conflict=3)
        if current and not deprecated and current.get("tags") != doc["tags"]:
            # Vector search filters on the passages' copy of the tags: it must follow the entry's.
            passages = self._scan(self.passages, {"term": {"entry_id": entry_id}}, [])
            if passages:
                helpers.bulk(self.client, [{"_op_type": "update", "_index": self.passages, "_id": p["_id"],
                                            "doc": {"tags": doc["tags"]}} for p in passages], refresh=self.refresh)

    def _project_edge(self, stream_id: str, history: list[Envelope]) -> None:
        folded = fold_edge(history)
        if folded is None:
            self.client.delete(index=self.edges, id=stream_id, refresh=self.refresh, ignore=[404])
            return
        edge, workspace = folded
        self.client.index(index=self.edges, id=stream_id, refresh=self.refresh, body={
            "source_id": edge.source_id, "target_id": edge.target_id, "type": edge.type, "weight": edge.weight,
            "provenance": edge.provenance, "workspace": workspace, "created_at": edge.created_at})

    def _project_project(self, stream_id: str, history: list[Envelope]) -> None:
        project = fold_project(history)
        if project is None:
            self.client.delete(index=self.project_index, id=stream_id, refresh=self.refresh, ignore=[404])
            return
        self.client.index(index=self.project_index, id=stream_id, refresh=self.refresh, body={
            "slug": project.slug, "workspace": project.workspace, "name": project.name,
            "description": project.description, "aliases": list(project.aliases), "status": project.status,
            "created_at": project.created_at, "updated_at": project.updated_at})

    # -- read model -------------------------------------------------------------------------------------------------

    def get(self, entry_id: str, workspaces: Sequence[str]) -> EntryRow | None:
        source = self._source(self.entries, entry_id)
        return _row(source) if source and source["workspace"] in workspaces else None

    def recent(self, filters: Filters, limit: int) -> list[EntryRow]:
        return self._rows(_filter(filters), limit, [{"created_at": "desc"}, {"seq": "desc"}])

    def count(self, workspaces: Sequence[str]) -> int:
        return self._count(_filter(Filters(tuple(workspaces))))

    def tag_counts(self, workspaces: Sequence[str]) -> list[TagCount]:
        body = {"size": 0, "query": _filter(Filters(tuple(workspaces))),
                "aggs": {"tags": {"terms": {"field": "tags", "size": 65_536, "order": {"_key": "asc"}}}}}
        buckets = self.client.search(index=self.entries, body=body)["aggregations"]["tags"]["buckets"]
        return [TagCount(b["key"], b["doc_count"]) for b in buckets]

    def tag_count(self, tag: str, workspaces: Sequence[str]) -> int:
        return self._count(_filter(Filters(tuple(workspaces), tag=tag)))

    def term_stats(self, terms: Sequence[str], workspaces: Sequence[str]) -> TermStats:
        scope = _filter(Filters(tuple(workspaces)))
        total = self._count(scope)
        df = {term: self._count(_and(scope, _phrase(term))) for term in dict.fromkeys(terms)}
        return TermStats(total=total, df=df)

    def keyword_search(self, terms: Sequence[str], filters: Filters, limit: int, require_all: bool = False,
                       newest_first: bool = False) -> list[KeywordHit]:
        if not terms:
            return []
        matches = [_phrase(t) for t in terms]
        query = {"bool": {"filter": [_recall_filter(filters)],
                          **({"must": matches} if require_all else {"should": matches, "minimum_should_match": 1})}}
        sort = [{"created_at": "desc"}, {"seq": "desc"}] if newest_first else ["_score", {"seq": "desc"}]
        hits = self._search(self.entries, query, limit, sort)
        return [KeywordHit(_row(h["_source"]), float(h["_score"] or 0.0)) for h in hits]

    def scan_search(self, terms: Sequence[str], filters: Filters, limit: int) -> list[KeywordHit]:
        if not terms:
            return []
        query = {"bool": {"filter": [_recall_filter(filters)], "minimum_should_match": 1,
                          "should": [{"match": {"content": t}} for t in terms]
                          + [{"wildcard": {"content": {"value": f"*{t}*", "case_insensitive": True}}} for t in terms]}}
        hits = self._search(self.entries, query, limit, [{"created_at": "desc"}, {"seq": "desc"}])
        return [KeywordHit(_row(h["_source"]), 0.0) for h in hits]

    def hydrate(self, ids: Sequence[str], filters: Filters) -> dict[str, EntryRow]:
        found: dict[str, EntryRow] = {}
        for start in range(0, len(ids), 1000):
            batch = list(ids[start : start + 1000])
            query = _and(_recall_filter(filters), {"ids": {"values": batch}})
            found.update({h["_id"]: _row(h["_source"]) for h in self._search(self.entries, query, len(batch))})
        return found

    def neighbours(self, entries: Sequence[EntryRow], reach: int, window_ms: int) -> dict[str, list[tuple[str, int]]]:
        seqs = {d["_id"]: d["_source"]["seq"] for d in self.client.mget(
            index=self.entries, body={"ids": [e.id for e in entries]}, _source=["seq"])["docs"] if d.get("found")}
        found: dict[str, list[tuple[str, int]]] = {}
        for entry in entries:
            at, seq = entry.created_at, seqs.get(entry.id, 0)
            scope = [{"term": {"workspace": entry.workspace}}, {"term": {"source": entry.source}}]
            near: list[tuple[str, int]] = []
            for order, beyond, window in (("desc", "lt", {"gte": at - window_ms, "lte": at}),
                                          ("asc", "gt", {"gte": at, "lte": at + window_ms})):
                # (created_at, seq) strictly before (or after) the entry's own, within the window
                side = {"bool": {"minimum_should_match": 1, "should": [
                    {"range": {"created_at": {beyond: at}}},
                    {"bool": {"filter": [{"term": {"created_at": at}}, {"range": {"seq": {beyond: seq}}}]}}]}}
                query = {"bool": {"filter": [*scope, {"range": {"created_at": window}}, side]}}
                hits = self._search(self.entries, query, reach, [{"created_at": order}, {"seq": order}])
                near.extend((h["_id"], step) for step, h in enumerate(hits, start=1))
            found[entry.id] = near
        return found

    def connections(self, entry_id: str, workspaces: Sequence[str], link_type: str | None, limit: int,
                    superseded: bool = False) -> list[Connection]:
        ends = {"bool": {"should": [{"term": {"source_id": entry_id}}, {"term": {"target_id": entry_id}}],
                         "minimum_should_match": 1}}
        query = _and(ends, {"term": {"type": link_type}}) if link_type else ends
        edges = self._search(self.edges, query, MAX_RESULTS, [{"weight": "desc"}, {"created_at": "desc"}])
        others = [e["_source"]["target_id"] if e["_source"]["source_id"] == entry_id else e["_source"]["source_id"]
                  for e in edges]
        rows = self._mget(self.entries, others)
        found: list[Connection] = []
        for edge, other in zip(edges, others, strict=True):
            row = rows.get(other)
            if row is None or row.workspace not in workspaces:
                continue  # an end forgotten, or in a workspace the caller cannot read
            if text.DEPRECATED in row.tags and not (superseded and edge["_source"]["type"] == "supersedes"):
                continue
            found.append(Connection(row, edge["_source"]["type"], edge["_source"]["weight"],
                                    edge["_source"]["provenance"], edge["_source"]["created_at"]))
        return found[:limit]

    def all_entries(self, workspaces: Sequence[str]) -> list[EntryRow]:
        query = _filter(Filters(tuple(workspaces)))
        return [_row(h["_source"]) for h in self._scan(self.entries, query, [{"created_at": "asc"}, {"seq": "asc"}])]

    def all_edges(self, workspaces: Sequence[str]) -> list[EdgeRow]:
        query = {"terms": {"workspace": list(workspaces)}}
        edges = [EdgeRow(s["source_id"], s["target_id"], s["type"], s["weight"], s["provenance"], s["created_at"])
                 for s in (h["_source"] for h in self._scan(self.edges, query, [{"created_at": "asc"}]))]
        alive = self._mget(self.entries, list({x for e in edges for x in (e.source_id, e.target_id)}))
        edges = [e for e in edges if e.source_id in alive and e.target_id in alive]
        return sorted(edges, key=lambda e: (e.created_at, e.source_id, e.target_id, e.type))

    def projects(self, workspaces: Sequence[str], include_archived: bool = True) -> list[ProjectRow]:
        clauses: list[dict] = [{"terms": {"workspace": list(workspaces)}}]
        if not include_archived:
            clauses.append({"term": {"status": "active"}})
        hits = self._search(self.project_index, {"bool": {"filter": clauses}}, MAX_RESULTS)
        rows = [ProjectRow(s["slug"], s["workspace"], s["name"], s["description"], tuple(s["aliases"]), s["status"],
                           s["created_at"], s.get("updated_at")) for s in (h["_source"] for h in hits)]
        return sorted(rows, key=lambda p: (p.name.lower(), p.slug))

    def anchored(self, workspaces: Sequence[str], before: int) -> list[EntryRow]:
        query = {"bool": {"filter": [_filter(Filters(tuple(workspaces))), {"range": {"when_at": {"lt": before}}}],
                          "must_not": [{"term": {"tags": text.DEPRECATED}}]}}
        return self._rows(query, MAX_RESULTS, [{"when_at": "asc"}])

    def loops(self, workspaces: Sequence[str], limit: int, offset: int) -> tuple[list[EntryRow], int]:
        query = _filter(Filters(tuple(workspaces), tag="task"))
        body = {"query": query, "from": offset, "size": limit, "sort": [{"created_at": "desc"}, {"seq": "desc"}],
                "track_total_hits": True}
        result = self.client.search(index=self.entries, body=body)
        return [_row(h["_source"]) for h in result["hits"]["hits"]], result["hits"]["total"]["value"]

    def stats(self, workspaces: Sequence[str], now: int) -> dict:
        scope = _filter(Filters(tuple(workspaces)))
        body = {"size": 0, "query": scope, "track_total_hits": True,
                "aggs": {"importance": {"avg": {"field": "importance_score"}}}}
        result = self.client.search(index=self.entries, body=body)
        count = result["hits"]["total"]["value"]
        average = result["aggregations"]["importance"]["value"]
        unclassified = self._count({"bool": {"filter": [scope], "must_not": [
            {"prefix": {"tags": "status:"}}, {"prefix": {"tags": "kind:"}}]}})
        topics = [tc for tc in self.tag_counts(workspaces) if text.is_topic_tag(tc.tag)]
        eligible = {"bool": {  # memory.digest_eligible, as a query
            "filter": [scope, {"range": {"importance_score": {"lt": text.PROTECTED_IMPORTANCE}}},
                       {"term": {"contradiction_wins": 0}},
                       {"bool": {"should": [{"term": {"recall_count": 0}}, {"bool": {"filter": [
                           {"range": {"recall_count": {"lt": 2}}},
                           {"range": {"created_at": {"lt": now - DIGEST_RECALL_GRACE_MS}}}]}}]}}],
            "must_not": [{"terms": {"tags": list(text.NEVER_DIGESTED)}}]}}
        buckets = self.client.search(index=self.entries, body={"size": 0, "query": eligible, "aggs": {"tags": {
            "terms": {"field": "tags", "size": 1000, "min_doc_count": DIGEST_MIN_ENTRIES}}}}
                                     )["aggregations"]["tags"]["buckets"]
        candidates = sorted(((b["key"], b["doc_count"]) for b in buckets if text.is_topic_tag(b["key"])),
                            key=lambda kv: (-kv[1], kv[0]))
        return {
            "count": count,
            "avg_importance": None if average is None else round(average, 1),
            "top_tags": [tc.tag for tc in sorted(topics, key=lambda tc: (-tc.count, tc.tag))[:5]],
            "digest_candidates": [{"tag": t, "count": n} for t, n in candidates][:10],
            "unclassified": unclassified,
        }

    # -- vector index -----------------------------------------------------------------------------------------------

    def pending(self, limit: int, ids: Sequence[str] | None = None) -> list[PendingEntry]:
        clauses: list[dict] = [{"term": {"needs_vectors": True}}]
        if ids is not None:
            clauses.append({"ids": {"values": list(ids)}})
        hits = self._search(self.entries, {"bool": {"filter": clauses}}, limit, [{"seq": "asc"}])
        return [PendingEntry(h["_id"], h["_source"]["content"], h["_source"]["content_version"],
                             h["_source"]["workspace"]) for h in hits]

    def pending_count(self, older_than: int | None = None) -> int:
        clauses: list[dict] = [{"term": {"needs_vectors": True}}]
        if older_than is not None:
            clauses.append({"range": {"created_at": {"lt": older_than}}})
        return self._count({"bool": {"filter": clauses}})

    def is_indexed(self, entry_id: str) -> bool:
        source = self._source(self.entries, entry_id)
        return bool(source) and source.get("needs_vectors") is False and text.DEPRECATED not in source["tags"]

    def vector_count(self, entry_id: str) -> int:
        return self._count({"term": {"entry_id": entry_id}}, self.passages)

    def cached(self, model_id: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return {}  # no embedding cache here: the model service is the cache's reason to exist locally

    def store(self, model_id: str, entry: PendingEntry, passages: Sequence[PassageVector]) -> bool:
        """Write an entry's passages; False (it stays pending) if its content changed meanwhile."""
        try:
            found = self.client.get(index=self.entries, id=entry.id)
        except NotFoundError:
            return False
        source = found["_source"]
        if source["content_version"] != entry.version or text.DEPRECATED in source["tags"]:
            return False
        self._delete_passages(entry.id)
        actions = [{"_index": self.passages, "_id": f"{entry.id}:{n}", "_source": {
            "entry_id": entry.id, "workspace": source["workspace"], "tags": source["tags"],
            "created_at": source["created_at"], "content_version": entry.version, "passage": n,
            "is_update": passage.is_update, "vector": [float(x) for x in passage.vector]}}
            for n, passage in enumerate(passages)]
        helpers.bulk(self.client, actions, refresh=self.refresh)
        try:
            self.client.update(index=self.entries, id=entry.id, if_seq_no=found["_seq_no"],
                               if_primary_term=found["_primary_term"], refresh=self.refresh,
                               body={"doc": {"needs_vectors": False, "indexed_version": entry.version}})
        except ConflictError:
            return False  # the entry changed after we read it: it stays pending, and is embedded again
        return True

    def search(self, query: np.ndarray, filters: Filters, limit: int) -> list[VectorHit]:
        clauses = _clauses(filters, actor=False)  # passages carry no author
        k = min(MAX_RESULTS, max(limit * 4, 10))
        body = {"size": k, "_source": ["entry_id", "is_update"], "query": {"knn": {"vector": {
            "vector": [float(x) for x in query], "k": k, "filter": {"bool": {"filter": clauses}}}}}}
        best: dict[str, VectorHit] = {}
        for hit in self.client.search(index=self.passages, body=body)["hits"]["hits"]:
            entry_id = hit["_source"]["entry_id"]
            if entry_id not in best:  # hits come best first: the first passage of a memory is its best
                best[entry_id] = VectorHit(entry_id, _cosine(hit["_score"]), hit["_source"]["is_update"])
        return list(best.values())[:limit]

    def scores_for(self, query: np.ndarray, entry_ids: Sequence[str]) -> dict[str, VectorHit]:
        if not entry_ids:
            return {}
        hits = self._scan(self.passages, {"terms": {"entry_id": list(entry_ids)}}, [{"passage": "asc"}])
        best: dict[str, VectorHit] = {}
        for hit in hits:
            source = hit["_source"]
            score = float(np.dot(np.asarray(source["vector"], dtype=np.float32), query))
            if source["entry_id"] not in best or score > best[source["entry_id"]].score:
                best[source["entry_id"]] = VectorHit(source["entry_id"], score, source["is_update"])
        return best

    def vector_of(self, entry_id: str) -> np.ndarray | None:
        source = self._source(self.passages, f"{entry_id}:0")
        return np.asarray(source["vector"], dtype=np.float32) if source else None

    # -- helpers ----------------------------------------------------------------------------------------------------

    def _delete_passages(self, entry_id: str) -> None:
        self._delete_where(self.passages, {"term": {"entry_id": entry_id}})

    def _delete_where(self, index: str, query: dict) -> None:
        """Delete the (few) documents a query finds; plain deletes, so no reindex module is needed."""
        hits = self._scan(index, query, [])
        if hits:
            helpers.bulk(self.client, [{"_op_type": "delete", "_index": index, "_id": h["_id"]} for h in hits],
                         refresh=self.refresh, raise_on_error=False)

    def _source(self, index: str, doc_id: str) -> dict | None:
        try:
            return self.client.get(index=index, id=doc_id)["_source"]
        except NotFoundError:
            return None

    def _mget(self, index: str, ids: Sequence[str]) -> dict[str, EntryRow]:
        if not ids:
            return {}
        docs = self.client.mget(index=index, body={"ids": list(dict.fromkeys(ids))})["docs"]
        return {d["_id"]: _row(d["_source"]) for d in docs if d.get("found")}

    def _count(self, query: dict, index: str | None = None) -> int:
        return int(self.client.count(index=index or self.entries, body={"query": query})["count"])

    def _search(self, index: str, query: dict, size: int, sort: list | None = None) -> list[dict]:
        body: dict[str, Any] = {"query": query, "size": min(size, MAX_RESULTS)}
        if sort:
            body["sort"] = sort
        return self.client.search(index=index, body=body)["hits"]["hits"]

    def _rows(self, query: dict, size: int, sort: list) -> list[EntryRow]:
        return [_row(h["_source"]) for h in self._search(self.entries, query, size, sort)]

    def _scan(self, index: str, query: dict, sort: list) -> list[dict]:
        """Every hit, paged with search_after (no scroll context to leak)."""
        found: list[dict] = []
        after = None
        while True:
            body: dict[str, Any] = {"query": query, "size": 1000, "sort": [*sort, {"_id": "asc"}]}
            if after:
                body["search_after"] = after
            hits = self.client.search(index=index, body=body)["hits"]["hits"]
            found.extend(hits)
            if len(hits) < 1000:
                return found
            after = hits[-1]["sort"]


def _row(source: dict) -> EntryRow:
    return EntryRow(
        id=source["id"], content=source["content"], tags=tuple(source["tags"]), source=source["source"],
        workspace=source["workspace"], actor=source["actor"], created_at=source["created_at"],
        updated_at=source["updated_at"], importance_score=source["importance_score"],
        recall_count=source["recall_count"], contradiction_wins=source["contradiction_wins"],
        contradiction_losses=source["contradiction_losses"], when_at=source.get("when_at"),
        when_kind=source.get("when_kind"),
    )


def _filter(filters: Filters) -> dict:
    """A read's filter; the workspace scope is never optional."""
    return {"bool": {"filter": _clauses(filters)}}


def _clauses(filters: Filters, actor: bool = True) -> list[dict]:
    clauses: list[dict] = [{"terms": {"workspace": list(filters.workspaces)}}]
    for tag in (filters.tag, f"kind:{filters.kind}" if filters.kind else None):
        if tag:
            clauses.append({"term": {"tags": tag}})
    if filters.any_tags:
        clauses.append({"terms": {"tags": list(filters.any_tags)}})
    if filters.after is not None or filters.before is not None:
        bounds = {k: v for k, v in (("gte", filters.after), ("lte", filters.before)) if v is not None}
        clauses.append({"range": {"created_at": bounds}})
    if actor and filters.actor is not None:
        clauses.append({"term": {"actor": filters.actor}})
    return clauses


def _recall_filter(filters: Filters) -> dict:
    query = _filter(filters)
    query["bool"]["must_not"] = [{"terms": {"tags": list(text.NEVER_RECALLED)}}]
    return query


def _and(*queries: dict) -> dict:
    return {"bool": {"filter": list(queries)}}


def _phrase(term: str) -> dict:
    """A term found anywhere in the text, inside words too: its trigrams, in order (a shorter term, as a word)."""
    return {"match_phrase": {"content.tri": term}} if len(term) >= 3 else {"match": {"content": term}}


def _cosine(score: float) -> float:
    """The lucene engine's cosinesimil score is (1 + cosine) / 2."""
    return 2.0 * float(score) - 1.0
