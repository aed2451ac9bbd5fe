"""The brief and the dashboard's graph on OpenSearch: aggregations over the entries (one request for every count
the brief shows), a seeded random pick for the memory to resurface, and the graph's edges from the edges index."""

from collections import Counter
from collections.abc import Sequence

from ...domain import text
from ...domain.brief import DAY_MS, HIDDEN
from ...ports.read_model import Activity, EdgeRow, EntryRow, Filters, SourceCount, TagCount
from .indexes import MAX_RESULTS, Indexes
from .queries import scope

TAGS_READ = 500  # the week's most used tags read back; the bookkeeping ones among them are left out afterwards


class OpenSearchBriefReads:
    ix: Indexes

    def activity(self, workspaces: Sequence[str], since: int, first_day: int, topics_day: int,
                 now: int) -> Activity:
        if not workspaces:
            return Activity((), {}, ())
        recent = {"range": {"created_at": {"gte": min(first_day * DAY_MS, topics_day * DAY_MS, since), "lte": now}}}
        in_days = {"range": {"created_at": {"gte": first_day * DAY_MS}}}
        in_topics = {"range": {"created_at": {"gte": topics_day * DAY_MS}}}
        body = {"size": 0, "query": {"bool": {"filter": [{"terms": {"workspace": list(workspaces)}}, recent]}},
                "aggs": {
                    "window": {"filter": {"range": {"created_at": {"gte": since}}},
                               "aggs": {"sources": {"terms": {"field": "source", "size": 1000}}}},
                    "days": {"filter": in_days, "aggs": {"days": {"histogram": {
                        "field": "created_at", "interval": DAY_MS, "min_doc_count": 1}}}},
                    "topics": {"filter": in_topics,
                               "aggs": {"tags": {"terms": {"field": "tags", "size": TAGS_READ}}}},
                }}
        aggs = self.ix.query(self.ix.entries, body)["aggregations"]
        sources = sorted(((b["key"], b["doc_count"]) for b in aggs["window"]["sources"]["buckets"]),
                         key=lambda item: (-item[1], item[0]))
        days = {int(b["key"]) // DAY_MS: b["doc_count"] for b in aggs["days"]["days"]["buckets"]}
        topics = sorted(((b["key"], b["doc_count"]) for b in aggs["topics"]["tags"]["buckets"]),
                        key=lambda item: (-item[1], item[0]))
        return Activity(tuple(SourceCount(*s) for s in sources), days, tuple(TagCount(*t) for t in topics))

    def newest_tagged(self, tags: Sequence[str], workspaces: Sequence[str], limit: int) -> list[EntryRow]:
        if not workspaces or not tags:
            return []
        query = {"bool": {"filter": [{"terms": {"workspace": list(workspaces)}}, {"terms": {"tags": list(tags)}}],
                          "must_not": [{"term": {"tags": text.DEPRECATED}}]}}
        return self.ix.rows(query, limit, [{"created_at": "desc"}, {"seq": "desc"}])

    def resurface(self, workspaces: Sequence[str], created_before: int, seed: int,
                  exclude: Sequence[str] = ()) -> EntryRow | None:
        if not workspaces:
            return None
        pool = {"bool": {  # brief.resurfaceable, as a query
            "filter": [{"terms": {"workspace": list(workspaces)}}, {"range": {"created_at": {"lt": created_before}}},
                       {"bool": {"minimum_should_match": 1, "should": [
                           {"range": {"importance_score": {"gte": text.PROTECTED_IMPORTANCE}}},
                           {"term": {"tags": text.CANONICAL}}]}}],
            "must_not": [{"terms": {"tags": list(HIDDEN)}},
                         *([{"ids": {"values": list(exclude)}}] if exclude else [])]}}
        # A score hashed from the seed and the id: the same seed ranks the same pool the same way.
        query = {"function_score": {"query": pool, "boost_mode": "replace",
                                    "random_score": {"seed": seed, "field": "id"}}}
        rows = self.ix.rows(query, 1, ["_score", {"id": "asc"}])
        return rows[0] if rows else None

    def hubs(self, filters: Filters, limit: int) -> list[EntryRow]:
        if not filters.workspaces:
            return []
        edges = {"terms": {"workspace": list(filters.workspaces)}}
        body = {"size": 0, "query": edges, "aggs": {end: {"terms": {"field": end, "size": MAX_RESULTS}}
                                                    for end in ("source_id", "target_id")}}
        aggs = self.ix.query(self.ix.edges, body)["aggregations"]
        degree: Counter[str] = Counter()
        for end in ("source_id", "target_id"):
            degree.update({b["key"]: b["doc_count"] for b in aggs[end]["buckets"]})
        shown = {"bool": {"filter": [scope(filters)], "must_not": [{"terms": {"tags": list(HIDDEN)}}]}}
        linked = [row for batch in _batches(list(degree)) for row in self.ix.rows(
            {"bool": {"filter": [shown, {"ids": {"values": batch}}]}}, len(batch), [{"seq": "asc"}])]
        found = sorted(linked, key=lambda r: (-degree[r.id], -r.importance_score, -r.created_at, r.id))[:limit]
        if len(found) < limit:  # too few linked memories: the newest others fill the rest
            seen = {row.id for row in found}
            newest = self.ix.rows(shown, limit + len(seen), [{"created_at": "desc"}, {"seq": "desc"}])
            found += [row for row in newest if row.id not in seen]
        return found[:limit]

    def linked(self, ids: Sequence[str], workspaces: Sequence[str], limit: int) -> list[tuple[EdgeRow, EntryRow]]:
        if not ids or not workspaces:
            return []
        near = set(ids)
        found: list[tuple[EdgeRow, EntryRow]] = []
        for batch in _batches(list(ids)):
            query = {"bool": {"filter": [{"terms": {"workspace": list(workspaces)}}], "minimum_should_match": 1,
                              "should": [{"terms": {"source_id": batch}}, {"terms": {"target_id": batch}}]}}
            edges = [_edge(h["_source"]) for h in self.ix.search(self.ix.edges, query, MAX_RESULTS)]
            others = [e.target_id if e.source_id in near else e.source_id for e in edges]
            rows = self.ix.mget(self.ix.entries, others)
            found += [(edge, rows[other]) for edge, other in zip(edges, others, strict=True)
                      if other in rows and rows[other].workspace in workspaces
                      and not any(tag in HIDDEN for tag in rows[other].tags)]
        found.sort(key=lambda pair: (-pair[0].weight, -pair[0].created_at, pair[1].id))
        return found[:limit]

    def edges_among(self, ids: Sequence[str], workspaces: Sequence[str]) -> list[EdgeRow]:
        if not ids or not workspaces:
            return []
        query = {"bool": {"filter": [{"terms": {"workspace": list(workspaces)}}, {"terms": {"source_id": list(ids)}},
                                     {"terms": {"target_id": list(ids)}}]}}
        edges = [_edge(h["_source"]) for h in self.ix.scan(self.ix.edges, query, [{"created_at": "asc"}])]
        return sorted(edges, key=lambda e: (-e.weight, e.created_at, e.source_id, e.target_id, e.type))


def _edge(source: dict) -> EdgeRow:
    return EdgeRow(source["source_id"], source["target_id"], source["type"], source["weight"], source["provenance"],
                   source["created_at"])


def _batches(ids: list[str], size: int = 1000) -> list[list[str]]:
    return [ids[start : start + size] for start in range(0, len(ids), size)]
