"""The read model on OpenSearch: entries, keyword search, the graph, projects, exports and stats, behind the
same ports as SQLite, so the recall pipeline's fusion and ranking stay in shared code."""

from collections.abc import Sequence
from typing import Any

from ...domain import text
from ...domain.memory import DIGEST_MIN_ENTRIES
from ...ports.read_model import (
    BrainStats,
    Connection,
    EdgeRow,
    EntryRow,
    Filters,
    KeywordHit,
    LinkedPair,
    ProjectRow,
    TagCount,
    TermStats,
)
from .brief import OpenSearchBriefReads
from .digest import OpenSearchDigestReads, eligible
from .indexes import MAX_RESULTS, Indexes
from .queries import both, phrase, recall_scope, row_of, scope

SPELLING_PROPOSALS = 10  # the suggester's best words one slip away, each then counted in the caller's scope


# LIST_ORDERS as sorts; seq (the log position) breaks ties.
ORDER_SORT = {"newest": [{"created_at": "desc"}, {"seq": "desc"}], "oldest": [{"created_at": "asc"}, {"seq": "asc"}],
              "updated": [{"updated_at": "desc"}, {"seq": "desc"}],
              "important": [{"importance_score": "desc"}, {"created_at": "desc"}, {"seq": "desc"}]}


class OpenSearchReadModel(OpenSearchDigestReads, OpenSearchBriefReads):
    def __init__(self, indexes: Indexes) -> None:
        self.ix = indexes

    def get(self, entry_id: str, workspaces: Sequence[str]) -> EntryRow | None:
        source = self.ix.source(self.ix.entries, entry_id)
        return row_of(source) if source and source["workspace"] in workspaces else None

    def many(self, entry_ids: Sequence[str], workspaces: Sequence[str]) -> dict[str, EntryRow]:
        return {entry_id: row for entry_id, row in self.ix.mget(self.ix.entries, entry_ids).items()
                if row.workspace in workspaces}

    def recent(self, filters: Filters, limit: int, order: str = "newest", offset: int = 0) -> list[EntryRow]:
        return self.ix.rows(scope(filters), limit, ORDER_SORT[order], offset)

    def count(self, workspaces: Sequence[str]) -> int:
        return self.ix.count(scope(Filters(tuple(workspaces))))

    def tag_counts(self, workspaces: Sequence[str]) -> list[TagCount]:
        body = {"size": 0, "query": scope(Filters(tuple(workspaces))),
                "aggs": {"tags": {"terms": {"field": "tags", "size": 65_536, "order": {"_key": "asc"}}}}}
        buckets = self.ix.query(self.ix.entries, body)["aggregations"]["tags"]["buckets"]
        return [TagCount(b["key"], b["doc_count"]) for b in buckets]

    def tag_count(self, tag: str, workspaces: Sequence[str]) -> int:
        return self.ix.count(scope(Filters(tuple(workspaces), tag=tag)))

    def count_matching(self, filters: Filters) -> int:
        return self.ix.count(scope(filters)) if filters.workspaces else 0

    def term_stats(self, terms: Sequence[str], workspaces: Sequence[str]) -> TermStats:
        # One request: the memories in scope, and each term's among them as a bucket (a count per term was a round
        # trip per term on every recall).
        wanted = list(dict.fromkeys(terms))
        body: dict[str, Any] = {"size": 0, "track_total_hits": True, "query": scope(Filters(tuple(workspaces)))}
        if wanted:
            body["aggs"] = {"df": {"filters": {"filters": {str(n): phrase(t) for n, t in enumerate(wanted)}}}}
        answer = self.ix.query(self.ix.entries, body)
        buckets = answer["aggregations"]["df"]["buckets"] if wanted else {}
        return TermStats(total=int(answer["hits"]["total"]["value"]),
                         df={term: int(buckets[str(n)]["doc_count"]) for n, term in enumerate(wanted)})

    def spellings(self, words: Sequence[str], workspaces: Sequence[str]) -> dict[str, dict[str, int]]:
        """The index's own spell checker (a term suggester over the words of `content`) proposes; each proposal
        is then counted in the caller's workspaces, as the suggester reads every workspace's words."""
        in_scope = scope(Filters(tuple(workspaces)))
        found: dict[str, dict[str, int]] = {}
        for word in dict.fromkeys(words):
            if not workspaces or len(word) > text.SLIP_WORD_MAX \
                    or self.ix.count(both(in_scope, {"prefix": {"content": word}})):
                continue
            body = {"size": 0, "suggest": {"near": {"text": word, "term": {
                "field": "content", "suggest_mode": "always", "max_edits": 1, "prefix_length": 0,
                "min_word_length": 3, "size": SPELLING_PROPOSALS, "string_distance": "damerau_levenshtein"}}}}
            near = text.one_edit(word)
            proposed = [option["text"] for entry in self.ix.query(self.ix.entries, body)["suggest"]["near"]
                        for option in entry["options"] if option["text"] in near]
            counts = {term: self.ix.count(both(in_scope, {"term": {"content": term}})) for term in proposed}
            found[word] = {term: n for term, n in counts.items() if n > 0}
        return found

    def keyword_search(self, terms: Sequence[str], filters: Filters, limit: int, require_all: bool = False,
                       newest_first: bool = False) -> list[KeywordHit]:
        if not terms:
            return []
        matches = [phrase(t) for t in terms]
        query = {"bool": {"filter": [recall_scope(filters)],
                          **({"must": matches} if require_all else {"should": matches, "minimum_should_match": 1})}}
        sort = [{"created_at": "desc"}, {"seq": "desc"}] if newest_first else ["_score", {"seq": "desc"}]
        hits = self.ix.search(self.ix.entries, query, limit, sort)
        return [KeywordHit(row_of(h["_source"]), float(h["_score"] or 0.0)) for h in hits]

    def scan_search(self, terms: Sequence[str], filters: Filters, limit: int) -> list[KeywordHit]:
        if not terms:
            return []
        query = {"bool": {"filter": [recall_scope(filters)], "minimum_should_match": 1,
                          "should": [{"match": {"content": t}} for t in terms]
                          + [{"wildcard": {"content": {"value": f"*{t}*", "case_insensitive": True}}} for t in terms]}}
        hits = self.ix.search(self.ix.entries, query, limit, [{"created_at": "desc"}, {"seq": "desc"}])
        return [KeywordHit(row_of(h["_source"]), 0.0) for h in hits]

    def hydrate(self, ids: Sequence[str], filters: Filters) -> dict[str, EntryRow]:
        found: dict[str, EntryRow] = {}
        for start in range(0, len(ids), 1000):
            batch = list(ids[start : start + 1000])
            query = both(recall_scope(filters), {"ids": {"values": batch}})
            found.update({h["_id"]: row_of(h["_source"]) for h in self.ix.search(self.ix.entries, query, len(batch))})
        return found

    def written(self, ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        if not ids:
            return {}
        docs = self.ix.client.mget(index=self.ix.entries, body={"ids": list(dict.fromkeys(ids))},
                                   _source=["created_at", "seq"])["docs"]
        return {d["_id"]: (d["_source"]["created_at"], d["_source"]["seq"]) for d in docs if d.get("found")}

    def neighbours(self, entries: Sequence[EntryRow], reach: int, window_ms: int) -> dict[str, list[tuple[str, int]]]:
        if not entries:  # a recall that found nothing (an empty mget is a 400)
            return {}
        seqs = {d["_id"]: d["_source"]["seq"] for d in self.ix.client.mget(
            index=self.ix.entries, body={"ids": [e.id for e in entries]}, _source=["seq"])["docs"] if d.get("found")}
        # Both sides of every entry in one multi search: two searches an entry were 40 round trips a recall.
        requests: list[tuple[dict, int, list]] = []
        for entry in entries:
            at, seq = entry.created_at, seqs.get(entry.id, 0)
            scope = [{"term": {"workspace": entry.workspace}}, {"term": {"source": entry.source}}]
            for order, beyond, window in (("desc", "lt", {"gte": text.within_int64(at - window_ms), "lte": at}),
                                          ("asc", "gt", {"gte": at, "lte": text.within_int64(at + window_ms)})):
                # (created_at, seq) strictly before (or after) the entry's own, within the window
                side = {"bool": {"minimum_should_match": 1, "should": [
                    {"range": {"created_at": {beyond: at}}},
                    {"bool": {"filter": [{"term": {"created_at": at}}, {"range": {"seq": {beyond: seq}}}]}}]}}
                query = {"bool": {"filter": [*scope, {"range": {"created_at": window}}, side]}}
                requests.append((query, reach, [{"created_at": order}, {"seq": order}]))
        sides = iter(self.ix.searches(self.ix.entries, requests))
        return {entry.id: [(h["_id"], step) for hits in (next(sides), next(sides))
                           for step, h in enumerate(hits, start=1)] for entry in entries}

    def connections(self, entry_id: str, workspaces: Sequence[str], link_type: str | None, limit: int,
                    superseded: bool = False, deprecated: bool = False) -> list[Connection]:
        ends = {"bool": {"should": [{"term": {"source_id": entry_id}}, {"term": {"target_id": entry_id}}],
                         "minimum_should_match": 1}}
        query = both(ends, {"term": {"type": link_type}}) if link_type else ends
        edges = self.ix.search(self.ix.edges, query, MAX_RESULTS, [{"weight": "desc"}, {"created_at": "desc"}])
        others = [e["_source"]["target_id"] if e["_source"]["source_id"] == entry_id else e["_source"]["source_id"]
                  for e in edges]
        rows = self.ix.mget(self.ix.entries, others)
        found: list[Connection] = []
        for edge, other in zip(edges, others, strict=True):
            row = rows.get(other)
            if row is None or row.workspace not in workspaces:
                continue  # an end forgotten, or in a workspace the caller cannot read
            if text.DEPRECATED in row.tags and not (
                    deprecated or superseded and edge["_source"]["type"] == "supersedes"):
                continue
            found.append(Connection(row, edge["_source"]["type"], edge["_source"]["weight"],
                                    edge["_source"]["provenance"], edge["_source"]["created_at"],
                                    edge["_source"]["source_id"] == entry_id))
        return found[:limit]

    def linked_pairs(self, ids: Sequence[str], workspaces: Sequence[str], types: Sequence[str]) -> list[LinkedPair]:
        if not ids or not workspaces or not types:
            return []
        query = {"bool": {"filter": [{"terms": {"type": list(types)}}], "minimum_should_match": 1,
                          "should": [{"terms": {"source_id": list(ids)}}, {"terms": {"target_id": list(ids)}}]}}
        hits = self.ix.search(self.ix.edges, query, MAX_RESULTS, [{"created_at": "desc"}])
        edges = [EdgeRow(s["source_id"], s["target_id"], s["type"], s["weight"], s["provenance"], s["created_at"])
                 for s in (h["_source"] for h in hits)]
        rows = self.ix.mget(self.ix.entries, list({end for e in edges for end in (e.source_id, e.target_id)}))
        rows = {key: row for key, row in rows.items() if row.workspace in workspaces}
        return [LinkedPair(edge, rows[edge.source_id], rows[edge.target_id]) for edge in edges
                if edge.source_id in rows and edge.target_id in rows]

    def all_entries(self, workspaces: Sequence[str]) -> list[EntryRow]:
        query = scope(Filters(tuple(workspaces)))
        hits = self.ix.scan(self.ix.entries, query, [{"created_at": "asc"}, {"seq": "asc"}])
        return [row_of(h["_source"]) for h in hits]

    def all_edges(self, workspaces: Sequence[str]) -> list[EdgeRow]:
        """Edges with both ends readable: an end shared or taken back since the link was made may be elsewhere."""
        query = {"terms": {"workspace": list(workspaces)}}
        edges = [EdgeRow(s["source_id"], s["target_id"], s["type"], s["weight"], s["provenance"], s["created_at"])
                 for s in (h["_source"] for h in self.ix.scan(self.ix.edges, query, [{"created_at": "asc"}]))]
        ends = self.ix.mget(self.ix.entries, list({x for e in edges for x in (e.source_id, e.target_id)}))
        readable = {key for key, row in ends.items() if row.workspace in workspaces}
        edges = [e for e in edges if e.source_id in readable and e.target_id in readable]
        return sorted(edges, key=lambda e: (e.created_at, e.source_id, e.target_id, e.type))

    def projects(self, workspaces: Sequence[str], include_archived: bool = True) -> list[ProjectRow]:
        clauses: list[dict] = [{"terms": {"workspace": list(workspaces)}}]
        if not include_archived:
            clauses.append({"term": {"status": "active"}})
        hits = self.ix.search(self.ix.projects, {"bool": {"filter": clauses}}, MAX_RESULTS)
        rows = [ProjectRow(s["slug"], s["workspace"], s["name"], s["description"], tuple(s["aliases"]), s["status"],
                           s["created_at"], s.get("updated_at")) for s in (h["_source"] for h in hits)]
        return sorted(rows, key=lambda p: (p.name.lower(), p.slug))

    def anchored(self, workspaces: Sequence[str], before: int, after: int | None = None) -> list[EntryRow]:
        window = {"lt": before, **({"gte": after} if after is not None else {})}
        query = {"bool": {"filter": [scope(Filters(tuple(workspaces))), {"range": {"when_at": window}}],
                          "must_not": [{"term": {"tags": text.DEPRECATED}}]}}
        return self.ix.rows(query, MAX_RESULTS, [{"when_at": "asc"}])

    def loops(self, workspaces: Sequence[str], limit: int, offset: int) -> tuple[list[EntryRow], int]:
        query = scope(Filters(tuple(workspaces), tag="task"))
        body = {"query": query, "from": offset, "size": limit, "sort": [{"created_at": "desc"}, {"seq": "desc"}],
                "track_total_hits": True}
        result = self.ix.query(self.ix.entries, body)
        return [row_of(h["_source"]) for h in result["hits"]["hits"]], result["hits"]["total"]["value"]

    def stats(self, workspaces: Sequence[str], now: int) -> BrainStats:
        in_scope = scope(Filters(tuple(workspaces)))
        body = {"size": 0, "query": in_scope, "track_total_hits": True,
                "aggs": {"importance": {"avg": {"field": "importance_score"}}}}
        result = self.ix.query(self.ix.entries, body)
        count = result["hits"]["total"]["value"]
        average = result["aggregations"]["importance"]["value"]
        unclassified = self.ix.count({"bool": {"filter": [in_scope], "must_not": [
            {"prefix": {"tags": "status:"}}, {"prefix": {"tags": "kind:"}}]}})
        by_tag = {"terms": {"field": "tags", "size": 1000, "min_doc_count": DIGEST_MIN_ENTRIES}}
        body = {"size": 0, "query": eligible(Filters(tuple(workspaces)), now), "aggs": {"tags": by_tag}}
        buckets = self.ix.query(self.ix.entries, body)["aggregations"]["tags"]["buckets"]
        candidates = sorted((TagCount(b["key"], b["doc_count"]) for b in buckets), key=lambda tc: (-tc.count, tc.tag))
        return BrainStats(count, None if average is None else round(average, 1), tuple(self.tag_counts(workspaces)),
                          tuple(candidates), unclassified)
