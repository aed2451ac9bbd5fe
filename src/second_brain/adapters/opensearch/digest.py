"""What compression reads on OpenSearch: `memory.digest_eligible` as a query, its newest matches, and its volumes
per workspace and tag as one aggregation."""

from collections.abc import Sequence

from ...domain import text
from ...domain.memory import DIGEST_MIN_ENTRIES, DIGEST_RECALL_GRACE_MS
from ...ports.read_model import EntryRow, Filters, WorkspaceTagCount
from .indexes import Indexes
from .queries import clauses

WORKSPACES_READ = 10_000
TAGS_READ = 1_000  # per workspace


def eligible(filters: Filters, now: int) -> dict:
    """memory.digest_eligible, within the filters."""
    return {"bool": {
        "filter": [*clauses(filters), {"range": {"importance_score": {"lt": text.PROTECTED_IMPORTANCE}}},
                   {"term": {"contradiction_wins": 0}},
                   {"bool": {"minimum_should_match": 1, "should": [
                       {"term": {"recall_count": 0}},
                       {"bool": {"filter": [{"range": {"recall_count": {"lt": 2}}},
                                            {"range": {"created_at": {"lt": now - DIGEST_RECALL_GRACE_MS}}}]}}]}}],
        "must_not": [{"terms": {"tags": list(text.NEVER_DIGESTED)}}, {"term": {"source": text.SYSTEM_SOURCE}}]}}


class OpenSearchDigestReads:
    ix: Indexes

    def digest_pool(self, filters: Filters, now: int, limit: int) -> list[EntryRow]:
        if not filters.workspaces:
            return []
        return self.ix.rows(eligible(filters, now), limit, [{"created_at": "desc"}, {"seq": "desc"}])

    def digest_volumes(self, workspaces: Sequence[str], now: int) -> list[WorkspaceTagCount]:
        if not workspaces:
            return []
        by_tag = {"terms": {"field": "tags", "size": TAGS_READ, "min_doc_count": DIGEST_MIN_ENTRIES}}
        body = {"size": 0, "query": eligible(Filters(tuple(workspaces)), now),
                "aggs": {"workspaces": {"terms": {"field": "workspace", "size": WORKSPACES_READ},
                                        "aggs": {"tags": by_tag}}}}
        buckets = self.ix.query(self.ix.entries, body)["aggregations"]["workspaces"]["buckets"]
        counts = [WorkspaceTagCount(w["key"], t["key"], t["doc_count"]) for w in buckets for t in w["tags"]["buckets"]]
        return sorted(counts, key=lambda c: (-c.count, c.workspace, c.tag))
