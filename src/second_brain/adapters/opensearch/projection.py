"""The OpenSearch projection: each touched stream's document rebuilt from the whole stream, through the
domain's fold, so a redelivered, repeated or reordered batch leaves exactly what one clean delivery would."""

from collections.abc import Iterable, Sequence
from dataclasses import asdict

from ...domain.events import Envelope
from ...domain.links import Edge, fold_edge
from ...domain.memory import Memory, fold
from ...domain.projects import Project, fold_project
from ...ports.event_store import EventStore
from ...ports.read_model import EdgeRow, EntryRow, ProjectRow
from .indexes import Indexes

MAX_ROUNDS = 5  # a stream still moving after this many rewrites is left to the writer that moved it
PROJECTED = ("memory-", "link-", "project-")  # the streams the indexes show


class OpenSearchProjection:
    def __init__(self, indexes: Indexes, log: EventStore) -> None:
        self.ix = indexes
        self.log = log  # the event log the projection re-reads streams from

    def apply(self, events: Sequence[Envelope]) -> None:
        """Bring every stream these events touch up to date, from the stream itself."""
        self.project(dict.fromkeys(e.stream_id for e in events))

    def project(self, stream_ids: Iterable[str]) -> None:
        """Rebuild these streams' documents from the log.

        Two writers (the API projecting its own append, the stream projector) can race: one that read the
        stream before the other's append could write last and leave the older document, or bring a forgotten
        memory back. So each write is checked against the log afterwards, and redone from the newer stream
        when the stream moved on meanwhile: the last writer always leaves what the log says."""
        for stream_id in stream_ids:
            if not stream_id.startswith(PROJECTED):  # the team, settings, OAuth grants: nothing to show here
                continue
            history = self.log.read_stream(stream_id)
            for _ in range(MAX_ROUNDS):
                self._project(stream_id, history)
                latest = self.log.read_stream(stream_id)
                if _version(latest) == _version(history):
                    break
                history = latest

    def _project(self, stream_id: str, history: list[Envelope]) -> None:  # one branch per PROJECTED prefix
        if stream_id.startswith("memory-"):
            self._project_entry(stream_id.removeprefix("memory-"), history)
        elif stream_id.startswith("link-"):
            self._project_edge(stream_id, history)
        elif stream_id.startswith("project-"):
            self._project_project(stream_id, history)

    def _project_entry(self, entry_id: str, history: list[Envelope]) -> None:
        memory = fold(history, Memory(entry_id))
        if not memory.exists:  # forgotten (or never written): the entry, its vectors and its edges go
            self.ix.client.delete(index=self.ix.entries, id=entry_id, refresh=self.ix.write(self.ix.entries),
                                  ignore=[404])
            self.ix.delete_passages(entry_id)
            # Vectors can be inverted back into text: the cached ones of every version of this memory go too.
            self.ix.delete_where(self.ix.embeddings, {"term": {"entry_id": entry_id}})
            self.ix.delete_where(self.ix.edges, {"bool": {"should": [
                {"term": {"source_id": entry_id}}, {"term": {"target_id": entry_id}}]}})
            return
        deprecated, version = memory.deprecated, _version(history)
        current = self.ix.source(self.ix.entries, entry_id)
        doc = {k: v for k, v in asdict(EntryRow.of(memory)).items() if k != "indexed"} | {
            "tags": list(memory.tags), "content_version": memory.content_version, "seq": memory.position,
            "stream_version": version}
        changed = current is None or current.get("content_version") != memory.content_version
        if deprecated:  # its passages go by id; a store under way when this lands deletes its own (vector_index)
            doc["needs_vectors"] = False
            self.ix.bulk([{"_op_type": "delete", "_index": self.ix.passages, "_id": passage_id}
                          for passage_id in self.ix.passage_ids(entry_id, current or {})], self.ix.passages)
        elif changed or current.get("needs_vectors") is None:
            doc["needs_vectors"] = True
        self.ix.put_newer(self.ix.entries, entry_id, doc)
        copied = {"tags": doc["tags"], "workspace": memory.workspace}
        if current and not deprecated and any(current.get(k) != v for k, v in copied.items()):
            # Vector search filters on the passages' copy of the tags and workspace: they follow the entry's
            # (a share moves the memory's passages into the company workspace with it).
            passages = self.ix.passage_ids(entry_id, current)
            if passages:
                self.ix.put_newer_all(self.ix.passages, dict.fromkeys(passages, copied | {"stream_version": version}))

    def _project_edge(self, stream_id: str, history: list[Envelope]) -> None:
        edge = fold_edge(history, Edge("", "", ""))
        if not edge.exists:
            self.ix.client.delete(index=self.ix.edges, id=stream_id, refresh=self.ix.write(self.ix.edges), ignore=[404])
            return
        self.ix.put_newer(self.ix.edges, stream_id, {
            **asdict(EdgeRow.of(edge)), "workspace": edge.workspace, "stream_version": _version(history)})

    def _project_project(self, stream_id: str, history: list[Envelope]) -> None:
        project = fold_project(history, Project("", history[0].workspace if history else ""))
        if not project.exists:
            self.ix.client.delete(index=self.ix.projects, id=stream_id, refresh=self.ix.write(self.ix.projects),
                                  ignore=[404])
            return
        self.ix.put_newer(self.ix.projects, stream_id, {
            **asdict(ProjectRow.of(project)), "aliases": list(project.aliases), "stream_version": _version(history)})


def _version(history: list[Envelope]) -> int:
    return history[-1].version if history else 0
