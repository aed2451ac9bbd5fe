"""The nightly index check on OpenSearch: each sampled memory's document (its text is also the n-gram keyword
index) against its stream in the log, re-projected where they differ; a document that claims vectors it lacks is
queued for embedding again."""

from collections.abc import Sequence
from dataclasses import asdict

from ...domain.events import memory_stream
from ...domain.memory import Memory, fold
from ...ports.event_store import EventStore
from ...ports.read_model import EntryRow
from .indexes import Indexes
from .projection import OpenSearchProjection


class OpenSearchIndexCheck:
    def __init__(self, indexes: Indexes, projection: OpenSearchProjection, log: EventStore) -> None:
        self.ix = indexes
        self.projection = projection
        self.log = log

    def verify(self, memory_ids: Sequence[str], whole: bool = False) -> dict[str, int]:
        report = {"checked": 0, "drifted": 0, "repaired": 0, "vectors_requeued": 0}
        for memory_id in memory_ids:
            report["checked"] += 1
            memory = fold(self.log.read_stream(memory_stream(memory_id)), Memory(memory_id))
            doc = self.ix.source(self.ix.entries, memory_id)
            if not _matches(doc, memory):
                report["drifted"] += 1
                self.projection.project([memory_stream(memory_id)])
                report["repaired"] += 1
            elif doc is not None and doc.get("needs_vectors") is False and not memory.deprecated \
                    and not self.ix.count({"term": {"entry_id": memory_id}}, self.ix.passages):
                self.ix.client.update(index=self.ix.entries, id=memory_id, body={"doc": {"needs_vectors": True}},
                                      refresh=self.ix.write(self.ix.entries), retry_on_conflict=3)
                report["vectors_requeued"] += 1
        return report


def _matches(doc: dict | None, memory: Memory) -> bool:
    if doc is None or not memory.exists:
        return doc is None and not memory.exists
    expected = {k: v for k, v in asdict(EntryRow.of(memory)).items() if k != "indexed"} | {
        "tags": list(memory.tags), "content_version": memory.content_version, "seq": memory.position}
    return all(doc.get(k) == v for k, v in expected.items())
