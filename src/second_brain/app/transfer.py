"""Export and import in the reference product's version 3 format, so a backup moves either way.

An import is paged and idempotent: each call restores a slice of the (oldest-first) entries and, once
they are done, in the same call a slice of the edges; ids and edges already present are skipped, and an
id that holds other content is reported as failed. A malformed payload is refused whole before anything
is written. Everything lands in the caller's personal workspace. An id held outside the caller's workspaces
(someone else's memory, even a forgotten one) is answered as an unknown id is: the memory is restored, under a
stand-in id derived from it, and the edges naming it follow it there.

Where a request has a deadline (28 s on Lambda, behind API Gateway's 29 s), a page is restored in slices and
stops between two of them once its time budget is spent: it answers with the offsets reached, which is what a
client resends, so a large `limit` never outlives the request.
"""

import hashlib
import json
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import reduce
from typing import Annotated, Any, Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..domain import commands as c
from ..domain import links, text
from ..domain.errors import BrainError, InvalidInput
from ..domain.events import Envelope, memory_stream
from ..domain.memory import Memory, decide, fold
from ..domain.projects import (
    Project,
    ProjectImported,
    check_fields,
    check_slug,
    evolve_project,
    project_stream,
)
from ..ports.clock import Clock
from ..ports.event_store import EventStore
from ..ports.read_model import EdgeRow, EntryReads, EntryRow, GraphReads, ProjectReads, ProjectRow
from .handling import Context, envelopes, retrying

FORMAT_VERSION: Final = 3
MAX_PAGE = 1000
MAX_APPEND = 45  # events per append: a DynamoDB transaction holds 100 items: the events, a version check per
                 # stream and the position claims
BUDGET_SLICE = 40  # entries or edges restored between two looks at the time budget
VECTORIZE_HINT = "POST /vectorize-pending until remaining is 0"
STAND_INS = uuid.UUID("5b0c5f8e-2f6a-4c7e-9a41-3d2f0e6b8c11")  # the namespace of stand-in ids (see Transfer._home)

# The log and SQLite hold signed 64-bit integers: a larger number is a malformed payload, not a 500.
Int64 = Annotated[int, Field(ge=text.INT64[0], le=text.INT64[1])]
Count = Annotated[int, Field(ge=0, le=text.INT64[1])]  # counters and millisecond times


class BackupReads(EntryReads, GraphReads, ProjectReads, Protocol):
    """What an export reads."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class ExportedEntry(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")  # no spaces: ids are stripped on the way in
    content: str = Field(min_length=1)
    tags: list[str] = []
    source: str = "api"
    created_at: Count
    updated_at: Count | None = None
    recall_count: Count = 0
    use_count: Count = 0
    importance_score: int = Field(0, ge=0, le=5)
    contradiction_wins: Count = 0
    contradiction_losses: Count = 0
    when_at: Int64 | None = None
    when_kind: str | None = None


class ExportedEdge(_Strict):
    source_id: str = Field(min_length=1)
    target_id: str = Field(min_length=1)
    type: str = "relates_to"
    weight: float = Field(0.5, ge=0, le=1)
    provenance: str = "explicit"
    created_at: Count | None = None


class ExportedProject(_Strict):
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    description: str = ""
    aliases: list[str] = []
    status: str = "active"
    created_at: Count | None = None
    updated_at: Count | None = None


class ImportPayload(_Strict):
    version: Literal[3] = FORMAT_VERSION  # optional, as in the reference's own examples, but never another
    entries: list[ExportedEntry]
    edges: list[ExportedEdge] = []
    projects: list[ExportedProject] = []


def parse_payload(data: Any) -> ImportPayload:
    """The payload, or a 400 naming the first thing wrong with it (nothing is written for a bad payload)."""
    if not isinstance(data, dict):
        raise InvalidInput("Malformed import payload: expected an object with entries")
    try:
        return ImportPayload.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
        raise InvalidInput(f"Malformed import payload: {where}: {said(first)}") from exc


# What a payload's field got wrong, in words (pydantic's own messages quote regular expressions and type names).
SAID = {
    "missing": "Field required",
    "string_pattern_mismatch": "an id is 1-128 letters, digits or _ . : - starting with a letter or digit, with no "
                               "spaces",
    "string_too_short": "must not be empty",
    "list_type": "Input should be a valid list",
    "literal_error": "this brain reads backups of format version 3",
}


def said(error: Any) -> str:
    """One validation error as a person reads it; numbers' limits and types keep pydantic's words, which are
    plain ("Input should be less than or equal to 5")."""
    return SAID.get(error["type"], str(error["msg"]))


class Transfer:
    def __init__(self, store: EventStore, read_model: BackupReads, clock: Clock, budget_s: float | None = None,
                 timer: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.read_model = read_model
        self.clock = clock
        self.budget_s = budget_s  # None: a page is restored whole, however long it takes
        self.timer = timer

    def export(self, ctx: Context) -> dict[str, Any]:
        workspaces = ctx.identity.readable
        return {
            "ok": True,
            "exported_at": self.clock.now_ms(),
            "version": FORMAT_VERSION,
            "entries": [entry_export(r) for r in self.read_model.all_entries(workspaces)],
            "edges": [edge_export(e) for e in self.read_model.all_edges(workspaces)],
            "projects": [project_export(p) for p in self.read_model.projects(workspaces)],
        }

    def import_page(self, ctx: Context, payload: "ImportPayload | Window", limit: int = 40, offset: int = 0,
                    edge_offset: int = 0) -> dict[str, Any]:
        """One page: a whole payload, or the window of a staged one (`stage`) that holds the page."""
        window = payload if isinstance(payload, Window) else Window.of(payload)
        limit = max(1, min(MAX_PAGE, limit))
        offset, edge_offset = max(0, offset), max(0, edge_offset)
        report: dict[str, Any] = {"imported": 0, "skipped": 0, "failed": 0, "edges_imported": 0, "edges_skipped": 0,
                                  "edges_failed": 0, "projects_imported": 0, "projects_skipped": 0}
        results: list[dict[str, Any]] = []
        if offset == 0 and edge_offset == 0:  # the first page restores the (few) projects
            self._projects(ctx, window.projects, report, results)
        # Without a budget a page goes in as one slice; with one, every slice after the first checks the clock.
        slice_size = limit if self.budget_s is None else BUDGET_SLICE
        deadline = None if self.budget_s is None else self.timer() + self.budget_s
        started = (offset, edge_offset)

        def time_left() -> bool:
            return deadline is None or (offset, edge_offset) == started or self.timer() < deadline

        end = min(window.total_entries, offset + limit)
        while offset < end and time_left():
            page = window.entries_at(offset, min(end, offset + slice_size))
            self._entries(ctx, page, window.firsts, report, results)
            offset += len(page)
        edge_end = min(window.total_edges, edge_offset + limit)
        while offset >= window.total_entries and edge_offset < edge_end and time_left():
            page_edges = window.edges_at(edge_offset, min(edge_end, edge_offset + slice_size))
            self._edges(ctx, page_edges, report, results)
            edge_offset += len(page_edges)
        return {
            "ok": True, **report,
            "remaining_entries": max(0, window.total_entries - offset),
            "remaining_edges": max(0, window.total_edges - edge_offset),
            "next_offset": min(offset, window.total_entries), "next_edge_offset": edge_offset,
            "results": results, "vectorize_hint": VECTORIZE_HINT,
        }

    def _append(self, batch: list[Envelope]) -> None:
        """The page in as few appends as the store allows (one on SQLite; slices on DynamoDB).
        Each memory's events stay together, so an interrupted import resumes cleanly at any slice."""
        for chunk in _chunks(batch, MAX_APPEND):
            self.store.append(chunk)

    def _entries(self, ctx: Context, page: list[ExportedEntry], firsts: dict[str, ExportedEntry],
                 report: dict[str, Any], results: list[dict[str, Any]]) -> None:
        workspace = ctx.identity.personal_workspace

        def plan(entry: ExportedEntry) -> list[Envelope] | None:
            if firsts[entry.id] is not entry:  # the payload lists this id again: only the oldest is restored
                if firsts[entry.id].content == entry.content:
                    return None
                raise InvalidInput("The ID is listed twice with different content; the first was restored")
            memory_id, history = self._home(ctx, entry.id)
            stream = memory_stream(memory_id)
            if not history:
                return envelopes(ctx, stream, 0, _restore(entry, workspace), workspace, self.clock.now_ms())
            here = fold(history, Memory(memory_id))
            if here.forgotten:
                raise InvalidInput("The ID belongs to a memory that was forgotten")
            if here.content != entry.content:
                raise InvalidInput("The ID already holds a different memory")
            return None  # restored before: a re-run changes nothing

        self._restore_all(page, plan, lambda e: {"id": e.id}, "", report, results)

    def _edges(self, ctx: Context, page: list[ExportedEdge], report: dict[str, Any],
               results: list[dict[str, Any]]) -> None:
        workspace = ctx.identity.personal_workspace

        def plan(edge: ExportedEdge) -> list[Envelope] | None:
            source_id, target_id = links.endpoints(self._home(ctx, edge.source_id.strip())[0],
                                                   self._home(ctx, edge.target_id.strip())[0], edge.type,
                                                   internal=True)
            if edge.provenance not in links.PROVENANCES:
                raise InvalidInput(f"Unknown provenance: {edge.provenance}")
            if None in (self.read_model.get(x, (workspace,)) for x in (source_id, target_id)):
                raise InvalidInput("Both memories must have been imported first")
            stream = links.edge_stream(source_id, target_id, edge.type)
            history = (e.event for e in self.store.read_stream(stream))
            state = reduce(links.evolve_edge, history, links.Edge(source_id, target_id, edge.type))
            if state.exists:
                return None
            event = links.LinkCreated(source_id, target_id, edge.type, edge.weight, edge.provenance, edge.created_at)
            return envelopes(ctx, stream, state.version, [event], workspace, self.clock.now_ms())

        describe = lambda e: {"source_id": e.source_id, "target_id": e.target_id}  # noqa: E731
        self._restore_all(page, plan, describe, "edges_", report, results)

    def _projects(self, ctx: Context, projects: list[ExportedProject], report: dict[str, Any],
                  results: list[dict[str, Any]]) -> None:
        workspace = ctx.identity.personal_workspace
        now = self.clock.now_ms()

        def plan(project: ExportedProject) -> list[Envelope] | None:
            slug = check_slug(project.id.strip().lower())
            aliases = check_fields(project.name, project.description, project.aliases, project.status)
            stream = project_stream(workspace, slug)
            history = (e.event for e in self.store.read_stream(stream))
            state = reduce(evolve_project, history, Project(slug, workspace))
            if state.exists:
                return None
            event = ProjectImported(slug, project.name.strip(), project.description, aliases, project.status,
                                    workspace, project.created_at or now, project.updated_at)
            return envelopes(ctx, stream, state.version, [event], workspace, now)

        self._restore_all(projects, plan, lambda p: {"project": p.id}, "projects_", report, results)

    def _home(self, ctx: Context, memory_id: str) -> tuple[str, list[Envelope]]:
        """The id a backup's memory is restored under, and that id's stream: its own id when the caller already
        holds it, or (the owner restoring a brain) when nobody does; else a stand-in derived from it for the caller
        (the same on every run, so a re-run and the edges find it). A member's new ids always go to stand-ins:
        an id someone else holds and an id nobody holds then behave alike for every later read, so no import can
        tell the caller that someone else holds an id."""
        standing_in = False
        while True:
            history = self.store.read_stream(memory_stream(memory_id))
            # A forgotten memory's fold keeps no workspace; its tombstone says where it was forgotten from.
            if history and (fold(history, Memory(memory_id)).workspace or history[-1].workspace
                            ) in ctx.identity.readable:
                return memory_id, history
            if not history and (standing_in or ctx.identity.owner):
                return memory_id, history
            memory_id = str(uuid.uuid5(STAND_INS, f"{ctx.identity.personal_workspace}/{memory_id}"))
            standing_in = True

    def _restore_all(self, items: list[Any], plan: Callable[[Any], list[Envelope] | None],
                     describe: Callable[[Any], dict[str, Any]], prefix: str, report: dict[str, Any],
                     results: list[dict[str, Any]]) -> None:
        """Plan each item (None: already there; a BrainError: refused, with its reason in `results`), append
        what is new, and count it under `prefix`; a lost race is planned again against the new state."""

        def attempt() -> tuple[int, int, list[dict[str, Any]]]:
            batch: list[Envelope] = []
            skipped, failed, seen = 0, [], set()
            for item in items:
                try:
                    planned = plan(item)
                except BrainError as exc:
                    failed.append({**describe(item), "error": exc.message})
                    continue
                if planned is None or planned[0].stream_id in seen:  # there, or twice in this payload
                    skipped += 1
                    continue
                seen.add(planned[0].stream_id)
                batch += planned
            self._append(batch)
            return len(items) - skipped - len(failed), skipped, failed

        imported, skipped, failed = retrying(attempt)
        report[f"{prefix}imported"] += imported
        report[f"{prefix}skipped"] += skipped
        if f"{prefix}failed" in report:  # the documented counters have none for projects
            report[f"{prefix}failed"] += len(failed)
        results += failed


def entry_export(r: EntryRow) -> dict[str, Any]:
    """An entry in the export format (the live export and a past one, `app/past/as_of.py`, write the same)."""
    return {"id": r.id, "content": r.content, "tags": list(r.tags), "source": r.source,
            "created_at": r.created_at, "updated_at": r.updated_at, "recall_count": r.recall_count,
            "use_count": r.use_count,
            "importance_score": r.importance_score, "contradiction_wins": r.contradiction_wins,
            "contradiction_losses": r.contradiction_losses,
            **({"when_at": r.when_at, "when_kind": r.when_kind} if r.when_at is not None else {})}


def edge_export(e: EdgeRow) -> dict[str, Any]:
    return {"source_id": e.source_id, "target_id": e.target_id, "type": e.type, "weight": e.weight,
            "provenance": e.provenance, "created_at": e.created_at}


def project_export(p: ProjectRow | Project) -> dict[str, Any]:
    return {"id": p.slug, "name": p.name, "description": p.description, "aliases": list(p.aliases),
            "status": p.status, "created_at": p.created_at, "updated_at": p.updated_at}


def _firsts(entries: list[ExportedEntry]) -> dict[str, ExportedEntry]:
    """The first (oldest) entry listed under each id."""
    firsts: dict[str, ExportedEntry] = {}
    for entry in entries:
        firsts.setdefault(entry.id, entry)
    return firsts


class Window:
    """The part of a backup a page reads: its entries (sorted as an import takes them, oldest first) from
    `entry_base`, its edges from `edge_base`, how many there are in all, and the oldest entry listed under each id
    (a later one with the same id is skipped, or refused if its content differs)."""

    def __init__(self, entries: list[ExportedEntry], entry_base: int, total_entries: int,
                 firsts: dict[str, ExportedEntry], edges: list[ExportedEdge], edge_base: int, total_edges: int,
                 projects: list[ExportedProject]) -> None:
        self.entries, self.entry_base, self.total_entries, self.firsts = entries, entry_base, total_entries, firsts
        self.edges, self.edge_base, self.total_edges, self.projects = edges, edge_base, total_edges, projects

    @classmethod
    def of(cls, payload: "ImportPayload") -> "Window":
        entries = sorted(payload.entries, key=lambda e: (e.created_at, e.id))  # oldest first, as if typed in order
        return cls(entries, 0, len(entries), _firsts(entries), payload.edges, 0, len(payload.edges),
                   payload.projects)

    def entries_at(self, start: int, end: int) -> list[ExportedEntry]:
        if start < self.entry_base or end > self.entry_base + len(self.entries):
            raise ValueError(f"entries {start}-{end} are outside this window")
        return self.entries[start - self.entry_base : end - self.entry_base]

    def edges_at(self, start: int, end: int) -> list[ExportedEdge]:
        if start < self.edge_base or end > self.edge_base + len(self.edges):
            raise ValueError(f"edges {start}-{end} are outside this window")
        return self.edges[start - self.edge_base : end - self.edge_base]


STAGE_CHUNK = 500  # entries (or edges) per staged part: a page of up to 1,000 reads three parts at most
STAGE_WRITERS = 8


class Parts(Protocol):
    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> bytes: ...


class Staging(Parts, Protocol):
    """Where a whole backup resent with every page is laid out between its pages (a folder on one machine)."""

    def remove(self, prefix: str) -> None: ...

    def sweep(self, under: str, older_than_s: float) -> None: ...


def body_digest(body: bytes | bytearray) -> str:
    """What names a request's body among the backups being staged: its SHA-256."""
    return hashlib.sha256(body).hexdigest()


def staged(parts: Parts, key: str, read: Callable[[], "ImportPayload"]) -> dict[str, Any]:
    """The staged layout of an uploaded backup under the prefix `key` (made from `read()` at its first page, read
    back after; the API names the prefix by the upload's key and version, so another upload is staged afresh):
    its entries sorted and cut in parts of STAGE_CHUNK, each entry that repeats an id carrying the content of the
    first one, its edges likewise, so that every later page reads the parts it needs instead of the whole file."""
    manifest = laid_out(parts, key)
    if manifest is not None:
        return manifest
    window = Window.of(read())
    firsts = window.firsts
    laid: list[tuple[str, bytes]] = []
    for start in range(0, window.total_entries, STAGE_CHUNK):
        chunk = window.entries[start : start + STAGE_CHUNK]
        laid.append((f"{key}/entries-{start // STAGE_CHUNK}.json", json.dumps({
            "entries": [e.model_dump() for e in chunk],
            "first_content": {str(i): firsts[e.id].content for i, e in enumerate(chunk) if firsts[e.id] is not e},
        }).encode()))
    for start in range(0, window.total_edges, STAGE_CHUNK):
        chunk_edges = window.edges[start : start + STAGE_CHUNK]
        laid.append((f"{key}/edges-{start // STAGE_CHUNK}.json",
                     json.dumps([e.model_dump() for e in chunk_edges]).encode()))
    with ThreadPoolExecutor(STAGE_WRITERS) as pool:  # each put is a round trip: 200 parts for 100,000 entries
        list(pool.map(lambda named: parts.put(*named), laid))
    manifest = {"entries": window.total_entries, "edges": window.total_edges,
                "projects": [p.model_dump() for p in window.projects]}
    parts.put(f"{key}/manifest.json", json.dumps(manifest).encode())  # last: the layout is whole
    return manifest


def laid_out(parts: Parts, key: str) -> dict[str, Any] | None:
    """The layout of the backup staged under `key`, or None if none is (yet, or any longer)."""
    try:
        manifest: dict[str, Any] = json.loads(parts.get(f"{key}/manifest.json"))
    except KeyError:
        return None
    return manifest


def staged_window(parts: Parts, key: str, manifest: dict[str, Any], limit: int, offset: int,
                  edge_offset: int) -> Window:
    """The parts of a staged backup that a page from these offsets can read (at most `limit` of each)."""
    limit = max(1, min(MAX_PAGE, limit))
    entries: list[ExportedEntry] = []
    firsts: dict[str, ExportedEntry] = {}
    entry_base = min(offset, manifest["entries"]) // STAGE_CHUNK * STAGE_CHUNK
    for n in range(entry_base // STAGE_CHUNK, -(-min(offset + limit, manifest["entries"]) // STAGE_CHUNK)):
        part = json.loads(parts.get(f"{key}/entries-{n}.json"))
        for i, raw in enumerate(part["entries"]):
            entry = ExportedEntry.model_validate(raw)
            entries.append(entry)
            if str(i) in part["first_content"]:  # its id was listed before: stands for that first entry
                firsts.setdefault(entry.id, entry.model_copy(update={"content": part["first_content"][str(i)]}))
            else:
                firsts[entry.id] = entry
    edges: list[ExportedEdge] = []
    edge_base = min(edge_offset, manifest["edges"]) // STAGE_CHUNK * STAGE_CHUNK
    if offset + limit >= manifest["entries"]:  # the page reaches the edges
        for n in range(edge_base // STAGE_CHUNK, -(-min(edge_offset + limit, manifest["edges"]) // STAGE_CHUNK)):
            edges += [ExportedEdge.model_validate(e) for e in json.loads(parts.get(f"{key}/edges-{n}.json"))]
    projects = [ExportedProject.model_validate(p) for p in manifest["projects"]]
    return Window(entries, entry_base, manifest["entries"], firsts, edges, edge_base, manifest["edges"], projects)


def _chunks(batch: list[Envelope], size: int) -> list[list[Envelope]]:
    """Consecutive slices of at most `size` events that never split one stream's events."""
    chunks: list[list[Envelope]] = []
    for envelope in batch:
        same_stream = chunks and chunks[-1][-1].stream_id == envelope.stream_id
        if chunks and (same_stream or len(chunks[-1]) < size):
            chunks[-1].append(envelope)
        else:
            chunks.append([envelope])
    return chunks


def _restore(entry: ExportedEntry, workspace: str) -> list[object]:
    """The events that restore one exported entry (the aggregate decides them); a BrainError if it breaks a rule of
    this brain."""
    return decide(c.Import(
        entry.content, tuple(entry.tags), entry.source, workspace, entry.created_at,
        entry.updated_at if entry.updated_at is not None else entry.created_at, entry.recall_count,
        entry.importance_score, entry.contradiction_wins, entry.contradiction_losses, entry.use_count,
        entry.when_at, entry.when_kind,
    ), Memory(""))
