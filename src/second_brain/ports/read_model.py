"""The read ports: entries as the API shows them, keyword search, the graph, projects and stats; each a small
Protocol a service asks for, and ReadModel, what one backend offers."""

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Protocol, runtime_checkable

from ..domain.links import Edge
from ..domain.memory import Memory
from ..domain.projects import Project


# The rows and hits a recall reads by the hundred are plain slotted dataclasses, treated as read-only: a frozen
# dataclass's __init__ sets each field through object.__setattr__, ten times the cost (about 1 ms a recall).
@dataclass(slots=True)
class EntryRow:
    id: str
    content: str
    tags: tuple[str, ...]
    source: str
    workspace: str
    actor: str
    created_at: int
    updated_at: int
    importance_score: int = 0
    recall_count: int = 0
    use_count: int = 0
    contradiction_wins: int = 0
    contradiction_losses: int = 0
    when_at: int | None = None
    when_kind: str | None = None
    indexed: bool = False  # whether its vectors are stored: asked of the vector index, not stored with the row

    @classmethod
    def of(cls, memory: Memory) -> "EntryRow":
        """The row a projection writes for a memory's folded state."""
        return cls(
            id=memory.id, content=memory.content, tags=memory.tags, source=memory.source,
            workspace=memory.workspace, actor=memory.actor, created_at=memory.created_at,
            updated_at=memory.updated_at, importance_score=memory.importance, recall_count=memory.recall_count,
            use_count=memory.use_count,
            contradiction_wins=memory.contradiction_wins, contradiction_losses=memory.contradiction_losses,
            when_at=memory.when_at, when_kind=memory.when_kind,
        )


# What a read model stores of a memory, in EntryRow's order: the SQLite columns and the OpenSearch documents are
# read and written by these names (tests/contract/test_entry_schema.py fails when a schema drifts from them).
ENTRY_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(EntryRow) if f.name != "indexed")


@dataclass(frozen=True)
class EdgeRow:
    source_id: str
    target_id: str
    type: str
    weight: float
    provenance: str
    created_at: int

    @classmethod
    def of(cls, edge: Edge) -> "EdgeRow":
        return cls(edge.source_id, edge.target_id, edge.type, edge.weight, edge.provenance, edge.created_at)


@dataclass(frozen=True)
class ProjectRow:
    slug: str
    workspace: str
    name: str
    description: str
    aliases: tuple[str, ...]
    status: str
    created_at: int
    updated_at: int | None

    @classmethod
    def of(cls, project: Project) -> "ProjectRow":
        return cls(project.slug, project.workspace, project.name, project.description, project.aliases,
                   project.status, project.created_at, project.updated_at)


@dataclass(frozen=True)
class Filters:
    """Which entries a read may see: always a workspace scope, optionally narrowed."""

    workspaces: tuple[str, ...]
    tag: str | None = None
    any_tags: tuple[str, ...] = ()  # a project: its project:<slug> tag or any of its aliases
    after: int | None = None  # unix ms, inclusive
    before: int | None = None  # unix ms, inclusive
    kind: str | None = None
    actor: str | None = None
    born_by: int | None = None  # only memories whose first event is at or before this log position (time travel)


# How a list can be sorted: newest or oldest first, most recently changed first, most important first (then newest).
LIST_ORDERS = ("newest", "oldest", "updated", "important")


@dataclass(slots=True)
class KeywordHit:
    entry: EntryRow
    score: float  # higher is better; comparable only within one search


@dataclass(frozen=True)
class TermStats:
    total: int  # memories in scope
    df: dict[str, int]  # memories containing each term (an upper bound where exact counting is too dear)


@dataclass(frozen=True)
class Connection:
    entry: EntryRow  # the neighbour
    type: str
    weight: float
    provenance: str
    linked_at: int
    outgoing: bool = True  # the edge goes from the memory asked about to the neighbour (else from the neighbour)


@dataclass(frozen=True)
class LinkedPair:
    """An edge with both its ends as they are now (deprecated or not)."""

    edge: EdgeRow
    source: EntryRow
    target: EntryRow


@dataclass(frozen=True)
class TagCount:
    tag: str
    count: int


@dataclass(frozen=True)
class BrainStats:
    count: int
    avg_importance: float | None
    tags: tuple[TagCount, ...]  # every tag in use
    digest_candidates: tuple[TagCount, ...]  # tags with enough memories a digest could roll up, most first
    unclassified: int  # memories with neither a status nor a kind yet


@dataclass(frozen=True)
class SourceCount:
    source: str
    count: int


@dataclass(frozen=True)
class Activity:
    """What was written lately, for the brief (read from counts kept per hour and per day, not from the memories)."""

    sources: tuple[SourceCount, ...]  # memories written since the window's start, per source, most first
    days: dict[int, int]  # UTC day since the epoch -> memories written that day (days without any left out)
    topics: tuple[TagCount, ...]  # tags of the memories written from the topics' first day on, most first


class EntryReads(Protocol):
    def get(self, entry_id: str, workspaces: Sequence[str]) -> EntryRow | None:
        """One entry by id, or None if it does not exist in those workspaces."""

    def many(self, entry_ids: Sequence[str], workspaces: Sequence[str]) -> dict[str, EntryRow]:
        """The entries of these ids that exist in those workspaces, by id, in one read."""

    def recent(self, filters: Filters, limit: int, order: str = "newest", offset: int = 0) -> list[EntryRow]:
        """In `order` (one of LIST_ORDERS; newest first by default), skipping the first `offset`."""

    def count(self, workspaces: Sequence[str]) -> int:
        """Entries in those workspaces."""

    def anchored(self, workspaces: Sequence[str], before: int, after: int | None = None) -> list[EntryRow]:
        """Entries with a time anchor earlier than `before` (and, given `after`, not earlier than it), soonest
        first, deprecated ones left out."""

    def loops(self, workspaces: Sequence[str], limit: int, offset: int) -> tuple[list[EntryRow], int]:
        """Open commitments (tagged task), newest first, and how many there are."""

    def all_entries(self, workspaces: Sequence[str]) -> list[EntryRow]:
        """Every memory in these workspaces, deprecated ones included, oldest first (for an export)."""


class KeywordSearch(Protocol):
    def term_stats(self, terms: Sequence[str], workspaces: Sequence[str]) -> TermStats:
        """How many memories hold each term, for telling rare words from common ones."""

    def keyword_search(self, terms: Sequence[str], filters: Filters, limit: int, require_all: bool = False,
                       newest_first: bool = False) -> list[KeywordHit]:
        """Entries holding any (or every) term, best bm25 first with its score, or newest first (score 0: none
        is computed); filters applied before the cut."""

    def scan_search(self, terms: Sequence[str], filters: Filters, limit: int) -> list[KeywordHit]:
        """Entries holding any term, found by scanning (for words a trigram cannot match), newest first."""

    def spellings(self, words: Sequence[str], workspaces: Sequence[str]) -> dict[str, dict[str, int]]:
        """For each of these lowercase words that no memory in the workspaces holds, nor a word beginning with it:
        the words one slip away (domain.text.one_edit) that some memory there does hold, with how many memories
        hold each (possibly none). Words a memory there holds, or begins a word with, are left out, and so are
        words longer than domain.text.SLIP_WORD_MAX (their neighbours are too many to look up)."""

    def hydrate(self, ids: Sequence[str], filters: Filters) -> dict[str, EntryRow]:
        """The entries with these ids that pass the filters and the recall exclusions."""

    def neighbours(self, entries: Sequence[EntryRow], reach: int, window_ms: int) -> dict[str, list[tuple[str, int]]]:
        """For each entry, the memories written just before and after it (same workspace and source,
        within the window), up to `reach` on each side, with their distance in steps."""

    def written(self, ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(created_at, the log position of its first event) of each of these memories, whatever its tags: the
        order `neighbours` counts in."""


class GraphReads(Protocol):
    def connections(self, entry_id: str, workspaces: Sequence[str], link_type: str | None, limit: int,
                    superseded: bool = False, deprecated: bool = False) -> list[Connection]:
        """Memories linked to an entry in either direction, strongest edges first, deprecated ones left out
        (unless `superseded` and reached by a supersedes edge, or `deprecated`: all of them)."""

    def all_edges(self, workspaces: Sequence[str]) -> list[EdgeRow]:
        """Every edge in these workspaces, oldest first (for an export)."""


@runtime_checkable
class HistoryReads(Protocol):
    def linked_pairs(self, ids: Sequence[str], workspaces: Sequence[str], types: Sequence[str]) -> list[LinkedPair]:
        """The edges of these types with an end among these entries and both ends in these workspaces, deprecated
        ends included (one batched read: what superseded a page of results, what they conflict with)."""


class ProjectReads(Protocol):
    def projects(self, workspaces: Sequence[str], include_archived: bool = True) -> list[ProjectRow]:
        """Projects in those workspaces, by name."""


class StatsReads(Protocol):
    def tag_counts(self, workspaces: Sequence[str]) -> list[TagCount]:
        """Every tag in use, alphabetically, with how many entries carry it."""

    def tag_count(self, tag: str, workspaces: Sequence[str]) -> int:
        """How many entries carry this exact tag."""

    def count_matching(self, filters: Filters) -> int:
        """How many entries `recent` with these filters would list, all pages together."""

    def stats(self, workspaces: Sequence[str], now: int) -> BrainStats:
        """Summary figures for GET /stats."""


class BriefReads(Protocol):
    def activity(self, workspaces: Sequence[str], since: int, first_day: int, topics_day: int,
                 now: int) -> Activity:
        """Memories written from `since` (unix ms) to `now` per source, per UTC day from `first_day`, and the tags
        of those written from UTC day `topics_day` on (every tag; the caller picks the topics)."""

    def newest_tagged(self, tags: Sequence[str], workspaces: Sequence[str], limit: int) -> list[EntryRow]:
        """The newest entries carrying any of these tags, deprecated ones left out."""

    def resurface(self, workspaces: Sequence[str], created_before: int, seed: int,
                  exclude: Sequence[str] = ()) -> EntryRow | None:
        """One `brief.resurfaceable` entry written before `created_before`, chosen by `seed`: the same seed over
        the same pool gives the same entry, another seed most likely another; never one of `exclude`, which
        gives the pick that would come after them."""


class GraphViewReads(Protocol):
    def hubs(self, filters: Filters, limit: int) -> list[EntryRow]:
        """Graph nodes in scope (none `brief.HIDDEN`), the most linked first, then the newest."""

    def linked(self, ids: Sequence[str], workspaces: Sequence[str], limit: int) -> list[tuple[EdgeRow, EntryRow]]:
        """Edges touching any of these entries, strongest first, each with its far end: only edges made in these
        workspaces whose far end is a graph node in them."""

    def edges_among(self, ids: Sequence[str], workspaces: Sequence[str]) -> list[EdgeRow]:
        """Every edge made in these workspaces between two of these entries."""


@dataclass(frozen=True)
class WorkspaceTagCount:
    workspace: str
    tag: str
    count: int


class DigestReads(Protocol):
    def digest_pool(self, filters: Filters, now: int, limit: int) -> list[EntryRow]:
        """Entries in scope that compression may roll up (`memory.digest_eligible`), newest first."""

    def digest_volumes(self, workspaces: Sequence[str], now: int) -> list[WorkspaceTagCount]:
        """Per workspace and tag, how many entries compression may roll up, where that is at least
        `memory.DIGEST_MIN_ENTRIES`; most first."""


class ReadModel(EntryReads, KeywordSearch, GraphReads, HistoryReads, ProjectReads, StatsReads, BriefReads,
                GraphViewReads, DigestReads, Protocol):
    """Every read port: what one backend offers. A service asks for the narrow ones it uses."""
