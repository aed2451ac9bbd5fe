"""Query pieces shared by the OpenSearch roles: filters from a Filters, and rows from documents."""

from ...domain import text
from ...ports.read_model import ENTRY_FIELDS, EntryRow, Filters

# EntryRow's fields that documents written before the field existed may lack, with the value they then had.
_LATER_FIELDS = {"use_count": 0, "when_at": None, "when_kind": None}


def row_of(source: dict) -> EntryRow:
    """An entry document read by EntryRow's field names (the projection writes it from EntryRow too)."""
    return EntryRow(**{name: source[name] if name not in _LATER_FIELDS else source.get(name, _LATER_FIELDS[name])
                       for name in ENTRY_FIELDS} | {"tags": tuple(source["tags"])})


def scope(filters: Filters) -> dict:
    """A read's filter; the workspace scope is never optional."""
    return {"bool": {"filter": clauses(filters)}}


def clauses(filters: Filters, entry_fields: bool = True) -> list[dict]:
    """`entry_fields`: the documents are entries (passages carry no author, and a log position only since time
    travel)."""
    clauses: list[dict] = [{"terms": {"workspace": list(filters.workspaces)}}]
    for tag in (filters.tag, f"kind:{filters.kind}" if filters.kind else None):
        if tag:
            clauses.append({"term": {"tags": tag}})
    if filters.any_tags:
        clauses.append({"terms": {"tags": list(filters.any_tags)}})
    if filters.after is not None or filters.before is not None:
        bounds = {k: v for k, v in (("gte", filters.after), ("lte", filters.before)) if v is not None}
        clauses.append({"range": {"created_at": bounds}})
    if entry_fields and filters.actor is not None:
        clauses.append({"term": {"actor": filters.actor}})
    if filters.born_by is not None:
        begun = {"range": {"seq": {"lte": filters.born_by}}}
        # Passages written before they carried the entry's position are let through: the caller checks them.
        clauses.append(begun if entry_fields else {"bool": {"should": [
            begun, {"bool": {"must_not": {"exists": {"field": "seq"}}}}], "minimum_should_match": 1}})
    return clauses


def passage_matches(filters: Filters, passage: dict) -> bool:
    """What `clauses(filters, entry_fields=False)` asks of a passage document, asked of one in memory."""
    tags = passage["tags"]
    return (passage["workspace"] in filters.workspaces
            and all(tag in tags for tag in (filters.tag, f"kind:{filters.kind}" if filters.kind else None) if tag)
            and (not filters.any_tags or any(tag in tags for tag in filters.any_tags))
            and (filters.after is None or passage["created_at"] >= filters.after)
            and (filters.before is None or passage["created_at"] <= filters.before)
            and (filters.born_by is None or passage.get("seq") is None or passage["seq"] <= filters.born_by))


def recall_scope(filters: Filters) -> dict:
    query = scope(filters)
    query["bool"]["must_not"] = [{"terms": {"tags": list(text.NEVER_RECALLED)}}]
    return query


def both(*queries: dict) -> dict:
    return {"bool": {"filter": list(queries)}}


def phrase(term: str) -> dict:
    """A term found anywhere in the text, inside words too: its trigrams, in order (a shorter term, as a word)."""
    return {"match_phrase": {"content.tri": term}} if len(term) >= 3 else {"match": {"content": term}}


def cosine(score: float) -> float:
    """The lucene engine's cosinesimil score is (1 + cosine) / 2."""
    return 2.0 * float(score) - 1.0
