"""One fold, every projection: the same event sequences appended to each backend, and each entry the read
model shows compared field by field with the domain's fold of the memory's stream."""

import dataclasses

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.domain import events as ev
from second_brain.domain import links, projects
from second_brain.domain.memory import Memory, digest_eligible, fold
from second_brain.ports.read_model import EdgeRow, EntryRow, Filters, ProjectRow
from tests.conftest import envelope
from tests.support.brains import make_brain

WS = "personal-owner"
DAY = 86_400_000


@pytest.fixture(params=["sqlite", "opensearch"])
def brain(request, tmp_path, clock):
    brain = make_brain(request.param, request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


def append(brain, memory_id: str, *events: object, at: int) -> None:
    """Events appended to a memory's stream in one batch, after what it already holds."""
    stream = ev.memory_stream(memory_id)
    version = len(brain.store.read_stream(stream))
    brain.store.append([envelope(stream, version + n, event, at=at) for n, event in enumerate(events, start=1)])


def assert_shown_as_folded(brain, memory_id: str) -> EntryRow | None:
    """The read model's row is exactly the domain fold of the stream (or absent when the fold is gone)."""
    folded = fold(brain.store.read_stream(ev.memory_stream(memory_id)), Memory(memory_id))
    shown = brain.queries.read_model.get(memory_id, (WS,))
    if not folded.exists:
        assert shown is None
        return None
    assert shown is not None
    assert dataclasses.asdict(shown) == dataclasses.asdict(EntryRow.of(folded))
    return shown


def test_a_whole_lifecycle_in_separate_appends(brain):
    steps = [
        [ev.MemoryCaptured("Pricing floor is $6k", ("pricing",), "api", WS),
         ev.MemoryClassified(3, "semantic", "state", False, "rules")],
        [ev.MemoryAppended("Raised to $7k", "Jan 2, 2026")],
        [ev.TagsChanged(("pricing", "kind:semantic", "volatility:state", "work"))],
        [ev.StatusChanged("deprecated")],
        [ev.StatusChanged("canonical")],  # back from deprecation
        [ev.MemoryRecalled("2026-01-03")],
        [ev.MemoryRecalled("2026-01-04")],
        [ev.ContradictionWon("other", "newer")],
        [ev.ContradictionLost("another", "older")],
        [ev.TimeAnchorSet(1_800_000_000_000, "due")],
        [ev.TimeAnchorCleared()],
        [ev.MemoryRevised("Pricing floor is $8k", "replaced")],
        [ev.MemoryClassified(5, "semantic", "", True, "model")],
    ]
    for day, events in enumerate(steps, start=1):
        append(brain, "m1", *events, at=day * DAY)
        shown = assert_shown_as_folded(brain, "m1")
    assert shown.content == "Pricing floor is $8k"
    assert (shown.recall_count, shown.contradiction_wins, shown.contradiction_losses) == (2, 1, 1)
    assert shown.created_at == DAY and shown.updated_at == 12 * DAY  # classification is no edit
    assert "status:canonical" in shown.tags and shown.importance_score == 5


def test_a_capture_decided_in_one_batch(brain):
    append(brain, "m2", ev.MemoryCaptured("Dentist on Friday", ("health",), "claude", WS),
           ev.MemoryClassified(2, "episodic", "volatile", False, "rules"),
           ev.DuplicateSuspected("m0", 0.93), ev.TimeAnchorSet(1_800_000_000_000, "event"), at=5 * DAY)
    shown = assert_shown_as_folded(brain, "m2")
    assert shown.when_kind == "event" and "kind:episodic" in shown.tags


def test_an_import_keeps_its_history_and_counts_on(brain):
    append(brain, "m3", ev.MemoryImported("Restored note", ("old",), "import", WS, 1_000, 2_000, 7, 4, 2, 1, 0),
           at=9 * DAY)
    append(brain, "m3", ev.MemoryRecalled("2026-02-01"), at=10 * DAY)
    shown = assert_shown_as_folded(brain, "m3")
    assert (shown.created_at, shown.recall_count, shown.importance_score) == (1_000, 8, 4)


def test_a_forgotten_memory_is_shown_nowhere(brain):
    append(brain, "m4", ev.MemoryCaptured("Secret", (), "api", WS), at=DAY)
    append(brain, "m4", ev.MemoryForgotten(), at=2 * DAY)
    assert assert_shown_as_folded(brain, "m4") is None
    assert brain.queries.read_model.count((WS,)) == 0


def test_a_replayed_log_shows_what_live_projection_showed(brain):
    """The SQLite projection folds into the row it wrote; a rebuild folds from nothing: both must agree."""
    append(brain, "m5", ev.MemoryCaptured("One", ("a",), "api", WS), at=DAY)
    append(brain, "m5", ev.MemoryAppended("Two", "Jan 2, 2026"), ev.StatusChanged("deprecated"), at=2 * DAY)
    append(brain, "m5", ev.TagsChanged(("a", "b")), ev.MemoryRecalled("2026-01-03"), at=3 * DAY)
    live = assert_shown_as_folded(brain, "m5")
    if brain.backend == "sqlite":
        brain.store.rebuild_projections()
    assert assert_shown_as_folded(brain, "m5") == live


def test_edges_are_shown_as_folded(brain):
    for memory_id in ("a", "b"):
        append(brain, memory_id, ev.MemoryCaptured(f"Note {memory_id}", (), "api", WS), at=DAY)
    stream = links.edge_stream("a", "b", "caused_by")
    steps = [links.LinkCreated("a", "b", "caused_by", 0.4, "inferred"),
             links.LinkCreated("a", "b", "caused_by", 0.9, "explicit"),  # stronger: kept, first time kept
             links.LinkRemoved("a", "b", "caused_by"),
             links.LinkCreated("a", "b", "caused_by", 0.7, "explicit", created_at=123)]  # an import's time
    for n, event in enumerate(steps, start=1):
        brain.store.append([envelope(stream, n, event, at=(n + 1) * DAY)])
        edge = links.fold_edge(brain.store.read_stream(stream), links.Edge("", "", ""))
        shown = brain.queries.read_model.all_edges((WS,))
        assert shown == ([EdgeRow.of(edge)] if edge.exists else [])
    assert shown[0].created_at == 123 and shown[0].weight == 0.7


def test_projects_are_shown_as_folded(brain):
    stream = projects.project_stream(WS, "atlas")
    steps = [projects.ProjectCreated("atlas", "Atlas", "", (), WS),
             projects.ProjectUpdated("Atlas 2", "the sequel", ("a2",), "archived"),
             projects.ProjectDeleted(),
             projects.ProjectImported("atlas", "Atlas", "restored", (), "active", WS, 50, 60)]
    for n, event in enumerate(steps, start=1):
        brain.store.append([envelope(stream, n, event, at=n * DAY)])
        project = projects.fold_project(brain.store.read_stream(stream), projects.Project("", WS))
        shown = brain.queries.read_model.projects((WS,))
        assert shown == ([ProjectRow.of(project)] if project.exists else [])
        if n == 2:
            assert (shown[0].created_at, shown[0].updated_at, shown[0].status) == (DAY, 2 * DAY, "archived")
    assert (shown[0].created_at, shown[0].updated_at) == (50, 60)


def test_digest_candidates_are_the_memories_the_domain_calls_eligible(brain, clock, ctx):
    """Each backend counts digest candidates in its own query language; both must agree with digest_eligible."""
    now, old = clock.now_ms(), clock.now_ms() - 90 * DAY
    kinds = ([(2, 0, 0, old, ())] * 10  # plain: eligible
             + [(4, 0, 0, old, ()), (2, 0, 1, old, ()), (2, 3, 0, old, ()), (2, 0, 0, old, ("rolled-up",)),
                (2, 1, 0, now - DAY, ()),  # recalled once and recent: kept out
                (2, 1, 0, old, ())])  # recalled once, long ago: eligible again
    ids = []
    for n, (importance, recalls, wins, created, extra) in enumerate(kinds):
        ids.append(f"d{n}")
        append(brain, f"d{n}", ev.MemoryImported(f"Ops note {n}", ("ops", *extra), "api", WS, created, created,
                                                 recalls, importance, wins, 0, 0), at=created)
    folds = [fold(brain.store.read_stream(ev.memory_stream(i)), Memory(i)) for i in ids]
    eligible = sum(digest_eligible(m, now) for m in folds)
    assert eligible == 11  # the cases above, as the rule reads them
    assert brain.queries.stats(ctx)["digest_candidates"] == [{"tag": "ops", "count": eligible}]


def test_counts_follow_every_change_and_never_cross_workspaces(brain, ctx):
    """GET /count, /tags and /stats read counts a backend may keep instead of scanning: after every kind of change
    they equal what the folds of the memories say."""
    other = "company-elsewhere"
    steps = [
        ("a", [ev.MemoryCaptured("Pricing floor is $6k", ("pricing",), "api", WS)]),  # unclassified at first
        ("b", [ev.MemoryCaptured("Deploy on Fridays", ("ops", "pricing"), "api", WS),
               ev.MemoryClassified(2, "episodic", "volatile", False, "rules")]),
        ("x", [ev.MemoryCaptured("Elsewhere", ("pricing",), "api", other)]),
        ("a", [ev.MemoryClassified(3, "semantic", "state", False, "rules")]),
        ("a", [ev.TagsChanged(("pricing", "kind:semantic", "work"))]),
        ("b", [ev.StatusChanged("deprecated")]),
        ("b", [ev.MemoryRecalled("2026-01-03")]),
        ("a", [ev.ContradictionWon("b", "newer")]),
        ("a", [ev.MemoryClassified(5, "semantic", "", True, "model")]),
        ("b", [ev.MemoryForgotten()]),
    ]
    for day, (memory_id, events) in enumerate(steps, start=1):
        append(brain, memory_id, *events, at=day * DAY)
        folds = [m for m in (fold(brain.store.read_stream(ev.memory_stream(i)), Memory(i)) for i in "ab") if m.exists]
        tags = sorted({t for m in folds for t in m.tags})
        assert brain.queries.count(ctx) == len(folds)
        assert brain.queries.tags(ctx, counts=True) == [
            {"tag": t, "count": sum(t in m.tags for m in folds)} for t in tags]
        stats = brain.queries.stats(ctx)
        assert stats["count"] == len(folds)
        assert stats["avg_importance"] == (round(sum(m.importance for m in folds) / len(folds), 1) if folds else None)
        assert stats["unclassified"] == sum(not any(t.startswith(("status:", "kind:")) for t in m.tags) for m in folds)


def test_recall_reads_the_same_rows_as_entry_reads(brain):
    """Recall reads its candidates through its own queries (hydrate, keyword search): the rows must be the ones
    every other read shows, field for field."""
    append(brain, "m9", ev.MemoryImported("Quarterly pricing review with Ada", ("pricing", "kind:semantic"), "mcp", WS,
                                          DAY, 2 * DAY, 3, 4, 1, 2, 5),
           ev.TimeAnchorSet(1_800_000_000_000, "due"), at=3 * DAY)
    shown = brain.queries.read_model.get("m9", (WS,))
    assert shown.when_kind == "due" and shown.use_count == 5
    reads = brain.recall.read_model
    assert reads.hydrate(["m9"], Filters((WS,))) == {"m9": shown}
    assert [hit.entry for hit in reads.keyword_search(["pricing"], Filters((WS,)), 10)] == [shown]


def test_a_shared_memory_moves_with_its_vectors_and_counts(brain):
    """A share moves the one memory: its row, its counts and its vectors (which search filters on before the
    cut) leave the personal workspace for the company one, and come back when it is taken back."""
    company = "company"
    append(brain, "m", ev.MemoryCaptured("Invoices arrive late every month", ("billing",), "api", WS), at=DAY)
    brain.indexer.run_once(10)
    query = brain.indexer.embedder.embed_query("Invoices arrive late every month")

    def where() -> list[tuple[str, ...]]:
        return [scope for scope in ((WS,), (company,))
                if [h.entry_id for h in brain.vectors.search(query, Filters(scope), 5)] == ["m"]]

    assert where() == [(WS,)]
    for event, scope in ((ev.MemoryShared(company), company), (ev.MemoryUnshared(WS), WS)):
        append(brain, "m", event, at=2 * DAY)
        assert where() == [(scope,)]
        assert brain.queries.read_model.get("m", (scope,)) is not None
        assert brain.queries.read_model.count((scope,)) == 1
        assert brain.queries.read_model.count(tuple({WS, company} - {scope})) == 0
        assert_shown_as_folded_in(brain, "m", scope)


def assert_shown_as_folded_in(brain, memory_id: str, workspace: str) -> None:
    folded = fold(brain.store.read_stream(ev.memory_stream(memory_id)), Memory(memory_id))
    assert dataclasses.asdict(brain.queries.read_model.get(memory_id, (workspace,))) == dataclasses.asdict(
        EntryRow.of(folded))
