"""The OpenSearch projection: each touched stream's document rebuilt from the whole stream, through the
domain's fold, so a redelivered, repeated or reordered batch leaves exactly what one clean delivery would.

Streams are projected together: one read of the entries they show, one bulk write of all their documents,
whatever the number of streams (the projector's batch of 100 records, or a capture's one or two)."""

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from typing import Any

from opensearchpy import helpers

from ...domain.events import MEMORY_STREAM, Envelope, memory_of, memory_stream
from ...domain.links import Edge, fold_edge
from ...domain.memory import Memory, fold
from ...domain.projects import Project, fold_project
from ...ports.event_store import EventStore
from ...ports.read_model import EdgeRow, EntryRow, ProjectRow
from .indexes import Indexes, newer_only

MAX_ROUNDS = 5  # a stream still moving after this many rewrites is left to the writer that moved it
PROJECTED = (MEMORY_STREAM, "link-", "project-")  # the streams the indexes show


class OpenSearchProjection:
    def __init__(self, indexes: Indexes, log: EventStore) -> None:
        self.ix = indexes
        self.log = log  # the event log the projection re-reads streams from

    def apply(self, events: Sequence[Envelope]) -> None:
        """Bring every stream these events touch up to date, from the stream itself (a stream these events
        begin is known whole from them: it is not read back)."""
        self.project(dict.fromkeys(e.stream_id for e in events), known=begun(events))

    def project(self, stream_ids: Iterable[str], known: dict[str, list[Envelope]] | None = None) -> None:
        """Rebuild these streams' documents from the log; the first failure is raised once all were tried."""
        for failure in self.project_each(stream_ids, known=known).values():
            if failure is not None:
                raise failure

    def project_each(self, stream_ids: Iterable[str], threads: int = 1,
                     known: dict[str, list[Envelope]] | None = None) -> dict[str, Exception | None]:
        """Rebuild these streams' documents from the log (read on up to `threads` threads; `known`: streams
        whose whole history the caller holds), and say how each went: None, or what stopped it. One stream's
        failure never holds the others back.

        Two writers (the API projecting its own append, the stream projector) can race: one that read the
        stream before the other's append could write last and leave the older document, or bring a forgotten
        memory back. So each write is checked against the log afterwards, and redone from the newer stream
        when the stream moved on meanwhile: the last writer always leaves what the log says. The check asks
        the log for what lies past each version written, all streams in one read."""
        outcome: dict[str, Exception | None] = dict.fromkeys(stream_ids)
        wanted = [s for s in outcome if s.startswith(PROJECTED)]
        known = {s: known[s] for s in wanted if known and s in known}
        histories = known | self._read([s for s in wanted if s not in known], outcome, threads)
        for _ in range(MAX_ROUNDS):
            if not histories:
                break
            self._write(histories, outcome)
            moved = self._moved({s: _version(h) for s, h in histories.items() if outcome[s] is None}, outcome)
            histories = self._read(moved, outcome, threads)
        return outcome

    def _moved(self, versions: dict[str, int], outcome: dict[str, Exception | None]) -> list[str]:
        """The streams with an event past the version written for them."""
        if not versions:
            return []
        try:
            newer = self.log.read_streams(list(versions), after=versions)
        except Exception as exc:  # noqa: BLE001 (unchecked: each stream is reported failed, and redone later)
            outcome.update(dict.fromkeys(versions, exc))
            return []
        return [s for s, events in newer.items() if events]

    def _read(self, stream_ids: list[str], outcome: dict[str, Exception | None],
              threads: int) -> dict[str, list[Envelope]]:
        def read(stream_id: str) -> list[Envelope] | Exception:
            try:
                return self.log.read_stream(stream_id)
            except Exception as exc:  # noqa: BLE001 (this stream's failure alone)
                return exc

        if threads > 1 and len(stream_ids) > 1:
            with ThreadPoolExecutor(min(threads, len(stream_ids))) as pool:
                results = list(pool.map(read, stream_ids))
        else:
            results = [read(s) for s in stream_ids]
        histories: dict[str, list[Envelope]] = {}
        for stream_id, result in zip(stream_ids, results, strict=True):
            if isinstance(result, Exception):
                outcome[stream_id] = result
            else:
                histories[stream_id] = result
        return histories

    def _write(self, histories: dict[str, list[Envelope]], outcome: dict[str, Exception | None]) -> None:
        """Every document these histories show, in one bulk request; a failure is recorded against its stream."""
        memories = {s: fold(h, Memory(m)) for s, h in histories.items() if (m := memory_of(s)) is not None}
        live = [m.id for m in memories.values() if m.exists]
        try:
            current = self.ix.sources(self.ix.entries, live)
        except Exception as exc:  # noqa: BLE001 (every live memory's stream failed)
            current = {}
            outcome.update({memory_stream(entry_id): exc for entry_id in live})
        actions: list[tuple[str, dict[str, Any]]] = []  # (stream, bulk action)
        for stream_id, history in histories.items():
            if outcome[stream_id] is not None:
                continue
            try:
                if stream_id in memories:
                    memory = memories[stream_id]
                    if not memory.exists:
                        self._forget(memory.id)
                        continue
                    written = self._entry(memory, _version(history), current.get(memory.id))
                elif stream_id.startswith("link-"):
                    written = self._edge(stream_id, history)
                else:
                    written = self._project_doc(stream_id, history)
            except Exception as exc:  # noqa: BLE001 (this stream's failure alone)
                outcome[stream_id] = exc
                continue
            actions += [(stream_id, action) for action in written]
        self._bulk(actions, outcome)

    def _bulk(self, actions: list[tuple[str, dict[str, Any]]], outcome: dict[str, Exception | None]) -> None:
        if not actions:
            return
        # A deprecation's passages go by id: held as deleted, the next search leaves them out without a refresh.
        passages = [action for _, action in actions if action["_index"] == self.ix.passages]
        deleted = {action["_id"].rpartition(":")[0] for action in passages if action["_op_type"] == "delete"}
        held = all(action["_op_type"] == "delete" for action in passages) and self.ix.hold(dict.fromkeys(deleted))
        for index in {action["_index"] for _, action in actions}:
            self.ix.write(index, held=held and index == self.ix.passages)
        try:
            results = list(helpers.streaming_bulk(self.ix.client, [action for _, action in actions],
                                                  raise_on_error=False, refresh=self.ix.refresh))
        except Exception as exc:  # noqa: BLE001 (the request as a whole failed: every stream in it did)
            outcome.update({stream_id: exc for stream_id, _ in actions})
            self.ix.release(deleted)
            return
        for (stream_id, action), (ok, item) in zip(actions, results, strict=True):
            # A passage already gone (a store replaced it) or an edge or project never written: nothing to do.
            gone = next(iter(item.values())).get("status") == 404 and "upsert" not in action
            if not ok and not gone:
                if action["_index"] == self.ix.passages:
                    self.ix.release(deleted)
                if outcome[stream_id] is None:
                    outcome[stream_id] = helpers.BulkIndexError(f"{stream_id} was not projected", [item])

    def _entry(self, memory: Memory, version: int, current: dict[str, Any] | None) -> list[dict[str, Any]]:
        entry_id, deprecated = memory.id, memory.deprecated
        doc = {k: v for k, v in asdict(EntryRow.of(memory)).items() if k != "indexed"} | {
            "tags": list(memory.tags), "content_version": memory.content_version, "seq": memory.position,
            "stream_version": version}
        changed = current is None or current.get("content_version") != memory.content_version
        actions: list[dict[str, Any]] = []
        if deprecated:  # its passages go by id; a store under way when this lands deletes its own (vector_index)
            doc["needs_vectors"] = False
            actions += [{"_op_type": "delete", "_index": self.ix.passages, "_id": passage_id}
                        for passage_id in self.ix.passage_ids(entry_id, current or {})]
        elif changed or current is None or current.get("needs_vectors") is None:
            doc["needs_vectors"] = True
        actions.append(self._newer(self.ix.entries, entry_id, doc))
        copied = {"tags": doc["tags"], "workspace": memory.workspace}
        if current and not deprecated and any(current.get(k) != v for k, v in copied.items()):
            # Vector search filters on the passages' copy of the tags and workspace: they follow the entry's
            # (a share moves the memory's passages into the company workspace with it). Missing ones are not made.
            actions += [{"_op_type": "update", "_index": self.ix.passages, "_id": passage_id, "retry_on_conflict": 3,
                         "script": newer_only(copied | {"stream_version": version})}
                        for passage_id in self.ix.passage_ids(entry_id, current)]
        return actions

    def _forget(self, entry_id: str) -> None:
        """A forgotten (or never written) memory: the entry, its vectors and its edges go."""
        self.ix.client.delete(index=self.ix.entries, id=entry_id, refresh=self.ix.write(self.ix.entries),
                              ignore=[404])
        self.ix.delete_passages(entry_id)
        # Vectors can be inverted back into text: the cached ones of every version of this memory go too.
        self.ix.delete_where(self.ix.embeddings, {"term": {"entry_id": entry_id}})
        self.ix.delete_where(self.ix.edges, {"bool": {"should": [
            {"term": {"source_id": entry_id}}, {"term": {"target_id": entry_id}}]}})

    def _edge(self, stream_id: str, history: list[Envelope]) -> list[dict[str, Any]]:
        edge = fold_edge(history, Edge("", "", ""))
        if not edge.exists:
            return [{"_op_type": "delete", "_index": self.ix.edges, "_id": stream_id}]
        return [self._newer(self.ix.edges, stream_id, {
            **asdict(EdgeRow.of(edge)), "workspace": edge.workspace, "stream_version": _version(history)})]

    def _project_doc(self, stream_id: str, history: list[Envelope]) -> list[dict[str, Any]]:
        project = fold_project(history, Project("", history[0].workspace if history else ""))
        if not project.exists:
            return [{"_op_type": "delete", "_index": self.ix.projects, "_id": stream_id}]
        return [self._newer(self.ix.projects, stream_id, {
            **asdict(ProjectRow.of(project)), "aliases": list(project.aliases), "stream_version": _version(history)})]

    @staticmethod
    def _newer(index: str, doc_id: str, doc: dict[str, Any]) -> dict[str, Any]:
        """Create the document, or set these fields of it, unless it holds a newer stream version."""
        return {"_op_type": "update", "_index": index, "_id": doc_id, "retry_on_conflict": 3,
                "scripted_upsert": True, "upsert": {}, "script": newer_only(doc)}


def begun(events: Sequence[Envelope]) -> dict[str, list[Envelope]]:
    """The streams these appended events begin (their first event is the stream's first), each whole."""
    streams: dict[str, list[Envelope]] = {}
    for event in events:
        streams.setdefault(event.stream_id, []).append(event)
    return {s: history for s, history in streams.items()
            if [e.version for e in history] == list(range(1, len(history) + 1))}


def _version(history: list[Envelope]) -> int:
    return history[-1].version if history else 0
