"""The read model and keyword index, driven through the real SQLite brain (a file on disk)."""

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.app.memories.service import Context
from second_brain.app.recall.pipeline import RecallRequest
from second_brain.app.recall.query import parse
from second_brain.bootstrap import build
from second_brain.domain.identity import Identity
from second_brain.ports.read_model import Filters
from second_brain.settings import Settings
from tests.support.brains import make_brain, sqlite_only

WS = ("personal-owner",)


@pytest.fixture(params=["sqlite", "opensearch"])
def brain(request, tmp_path, clock):
    brain = make_brain(request.param, request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


def capture(brain, ctx, clock, content, tags=(), step=1000):
    clock.advance(step)
    return brain.memories.capture(ctx, content, list(tags), "api").id


def recall_ids(brain, ctx, query, top_k=5, **filters):
    brain.indexer.run_once(10_000)
    result = brain.recall.recall(ctx, RecallRequest(query, top_k, Filters(WS, **filters)))
    return [r["id"] for r in result["results"]]


def test_list_is_newest_first_and_filters_by_tag_and_inclusive_time(brain, ctx, clock):
    a = capture(brain, ctx, clock, "first", ["work"])
    b = capture(brain, ctx, clock, "second")
    c = capture(brain, ctx, clock, "third", ["work"])
    rows = brain.queries.recent(ctx, Filters(WS), 20)
    assert [r["id"] for r in rows] == [c, b, a]
    assert [r["id"] for r in brain.queries.recent(ctx, Filters(WS, tag="work"), 20)] == [c, a]
    created = {r["id"]: r["created_at"] for r in rows}
    window = Filters(WS, after=created[b], before=created[c])
    assert [r["id"] for r in brain.queries.recent(ctx, window, 20)] == [c, b]
    assert len(brain.queries.recent(ctx, Filters(WS), 2)) == 2


def test_list_sorts_oldest_updated_or_important_and_pages_by_offset(brain, ctx, clock):
    a = capture(brain, ctx, clock, "first")
    b = capture(brain, ctx, clock, "Decision: we always rotate the production database password every 90 days,"
                " critical for the audit", ["work"])
    c = capture(brain, ctx, clock, "third", ["work"])
    clock.advance(1000)
    brain.memories.append(ctx, a, "and a later addition")  # a changed last
    ids = lambda order, limit=20, offset=0, **f: [  # noqa: E731
        r["id"] for r in brain.queries.recent(ctx, Filters(WS, **f), limit, order, offset)]
    assert ids("newest") == [c, b, a]
    assert ids("oldest") == [a, b, c]
    assert ids("updated") == [a, c, b]
    important = sorted([a, b, c], key=lambda i: (-brain.queries.entry(ctx, i)["importance_score"],
                                                -brain.queries.entry(ctx, i)["created_at"]))
    assert ids("important") == important
    assert important[0] == b  # the rules rate a decision above a bare word: the order is not only the tie-break
    # Pages by offset in any order; filters still apply.
    assert ids("oldest", 1, 1) == [b] and ids("oldest", 2, 2) == [c] and ids("oldest", 5, 3) == []
    assert ids("newest", 1, 2) == [a]
    assert ids("oldest", tag="work") == [b, c]


def test_many_entries_are_read_at_once_within_the_workspaces_given(brain, ctx, clock):
    a = capture(brain, ctx, clock, "first note")
    b = capture(brain, ctx, clock, "second note")
    bob = Context(Identity("bob", "Bob", "member", "personal-bob"), "r")
    bobs = capture(brain, bob, clock, "bob's note")
    rows = brain.queries.read_model.many([b, "missing", a, bobs, a], WS)
    assert set(rows) == {a, b} and rows[a].content == "first note" and rows[b].id == b
    assert brain.queries.read_model.many([], WS) == {}
    assert set(brain.queries.read_model.many([a, bobs], ("personal-bob",))) == {bobs}


def test_reads_never_cross_workspaces(brain, ctx, clock):
    owners = capture(brain, ctx, clock, "owner's note")
    bob = Context(Identity("bob", "Bob", "member", "personal-bob"), "r")
    bobs = capture(brain, bob, clock, "bob's note")
    assert brain.queries.count(ctx) == 1 and brain.queries.count(bob) == 1
    assert recall_ids(brain, ctx, "note") == [owners]
    with pytest.raises(Exception, match="No entry found"):
        brain.queries.entry(ctx, bobs)


def test_tags_are_alphabetical_with_counts(brain, ctx, clock):
    capture(brain, ctx, clock, "x", ["work", "idea"])
    capture(brain, ctx, clock, "y", ["work"])
    assert brain.queries.tags(ctx, counts=False) == ["idea", "kind:semantic", "work"]
    assert brain.queries.tags(ctx, counts=True) == [
        {"tag": "idea", "count": 1}, {"tag": "kind:semantic", "count": 2}, {"tag": "work", "count": 2}]


@pytest.mark.parametrize(
    ("needle", "query"),
    [
        ("Set DATABASE_URL before boot", "DATABASE_URL"),
        ("Handshake failed with ERR_TLS_90412 on the proxy", "what is ERR_TLS_90412?"),
        ("Edit config.yaml to add the region", "config.yaml"),
        ("Released v1.9 yesterday", "v1.9"),
        ("SB-024の決定は延期になった", "SB-024の決定"),
        ("東京オフィスの会議室は三階です", "会議室"),
        ("Fixed in PR #149 by Ada", "#149"),
        ("The io scheduler was swapped", "io"),
    ],
)
def test_keyword_recall_finds_identifiers_cjk_and_short_words(brain, ctx, clock, needle, query):
    for n in range(20):
        capture(brain, ctx, clock, f"Unrelated filler note number {n} about gardening and tea")
    target = capture(brain, ctx, clock, needle)
    assert recall_ids(brain, ctx, query)[0] == target


def test_control_characters_in_any_query_part_words_and_never_fail(brain, ctx, clock):
    """Issue 62: a NUL in a query ended SQLite's FTS string (500); on every store it parts words as a space does,
    and the read model's own search takes a term holding one."""
    target = capture(brain, ctx, clock, "Kestrel nest box moved to the barn")
    for query in ("kestrel\x00barn", "\x00", "kestrel\x07", "\x00\x00 barn"):
        ids = recall_ids(brain, ctx, query)
        assert ids == ([] if query == "\x00" else [target]), repr(query)
    hits = brain.queries.read_model.keyword_search(["kestrel\x00barn"], Filters(WS), 10)
    assert isinstance(hits, list)


def test_recall_applies_filters_before_the_cut(brain, ctx, clock):
    for n in range(30):
        capture(brain, ctx, clock, f"pricing pricing pricing discussion {n}")
    tagged = [capture(brain, ctx, clock, f"pricing idea {n}", ["work"]) for n in range(3)]
    assert sorted(recall_ids(brain, ctx, "pricing", top_k=3, tag="work")) == sorted(tagged)


def test_a_named_date_lifts_what_was_written_then_without_hiding_the_rest(brain, ctx, clock):
    clock.now = 1_697_155_200_000 + 3_600_000  # 2023-10-13, 01:00 UTC
    first = capture(brain, ctx, clock, "Painted the lake at dawn with my brother Tom")
    clock.now = 1_697_760_000_000 + 3_600_000  # 2023-10-20
    second = capture(brain, ctx, clock, "Rain all day, so I painted the lake from the car")
    clock.now = 1_698_000_000_000
    base = recall_ids(brain, ctx, "painted lake")
    assert sorted(base) == sorted([first, second])
    behind = base[-1]
    day = "October 13, 2023" if behind == first else "October 20, 2023"
    assert recall_ids(brain, ctx, f"painted lake on {day}") == [behind, base[0]]
    assert recall_ids(brain, ctx, "painted lake in October") == base  # both written then: nothing changes


def test_recall_never_returns_deprecated_memories(brain, ctx, clock):
    old = capture(brain, ctx, clock, "The meeting is on Tuesday")
    new = capture(brain, ctx, clock, "The meeting moved to Wednesday")
    brain.memories.set_status(ctx, old, "deprecated")
    assert recall_ids(brain, ctx, "meeting") == [new]


def test_recall_scores_are_normalized_to_100_and_long_content_is_cut(brain, ctx, clock):
    long_note = ("Kubernetes rollout notes. " + "Padding sentence about nothing in particular. " * 200).strip()
    capture(brain, ctx, clock, long_note)
    capture(brain, ctx, clock, "kubernetes")
    result = brain.recall.recall(ctx, RecallRequest("kubernetes rollout", 5, Filters(WS)))
    assert result["results"][0]["score"] == 100.0
    by_length = {r["full_length"]: r for r in result["results"]}
    cut = by_length[len(long_note)]
    assert cut["truncated"] and len(cut["content"]) < 4200
    full = brain.recall.recall(ctx, RecallRequest("kubernetes rollout", 5, Filters(WS), full=True))
    assert {r["content"] for r in full["results"]} == {long_note, "kubernetes"}


def test_query_parsing_drops_framing_words_and_takes_out_tag_syntax():
    parsed = parse("what did I decide about pricing? tag:Work")
    assert (parsed.tokens, parsed.tags, parsed.text) == (["decide", "pricing"], ["work"],
                                                          "what did I decide about pricing?")


def test_stats_count_topics_and_ignore_bookkeeping(brain, ctx, clock):
    assert brain.queries.stats(ctx)["avg_importance"] is None
    for n in range(3):
        capture(brain, ctx, clock, f"note {n}", ["work"])
    memory = capture(brain, ctx, clock, "canonical fact", ["idea"])
    brain.memories.set_status(ctx, memory, "canonical")
    stats = brain.queries.stats(ctx)
    assert stats["count"] == 4 and stats["top_tags"] == ["work", "idea"]
    assert stats["unclassified"] == 0 and stats["vectorize_grace_ms"] == 300_000  # classified at capture


def test_replay_rebuilds_projections_that_answer_the_same(brain, ctx, clock):
    sqlite_only(brain, "about the SQLite projection's own transaction and schema")
    ids = [capture(brain, ctx, clock, f"Release note {n} for DATABASE_URL rotation", ["ops"]) for n in range(10)]
    brain.memories.append(ctx, ids[0], "rotated again")
    brain.memories.update(ctx, ids[1], "Rewritten release note #changed", None)
    brain.memories.set_status(ctx, ids[2], "deprecated")
    brain.memories.forget(ctx, ids[3])

    def answers():
        return (
            brain.queries.recent(ctx, Filters(WS), 100), brain.queries.tags(ctx, True), brain.queries.count(ctx),
            brain.recall.recall(ctx, RecallRequest("DATABASE_URL rotation", 20, Filters(WS))),
            brain.queries.entry(ctx, ids[0]),
        )

    brain.indexer.run_once(100)
    before = answers()
    assert brain.store.rebuild_projections(batch=3) == brain.store.head()
    brain.indexer.run_once(100)  # vectors are a projection too: rebuilt from the log, re-embedded from the cache
    assert answers() == before


def test_a_failing_projection_rolls_the_append_back(brain, ctx, clock):
    sqlite_only(brain, "about the SQLite projection's own transaction and schema")
    class Broken:
        name = "broken"

        def create(self, conn): ...

        def drop(self, conn): ...

        def apply(self, conn, events):
            raise RuntimeError("projection bug")

    brain.store.projections.append(Broken())
    with pytest.raises(RuntimeError):
        capture(brain, ctx, clock, "never half written")
    assert brain.store.head() == 0 and brain.queries.count(ctx) == 0


def test_a_projection_whose_schema_changed_is_rebuilt_from_the_log_at_start(tmp_path, clock, ctx):
    from second_brain.adapters.read_model.sqlite_projection import SQLiteEntryProjection

    first = build(Settings(data_dir=tmp_path / "b"), clock=clock, embedder=FakeEmbedder())
    memory = first.memories.capture(ctx, "survives a schema change", ["kept"], "api")
    first.db.connection().execute("DELETE FROM entries")  # stands in for a table the new code cannot read
    first.close()
    SQLiteEntryProjection.schema += 1
    try:
        second = build(Settings(data_dir=tmp_path / "b"), clock=clock, embedder=FakeEmbedder())
        assert second.queries.entry(ctx, memory.id)["tags"] == ["kept", "kind:semantic"]
        second.close()
    finally:
        SQLiteEntryProjection.schema -= 1


@pytest.mark.parametrize("require_all", [True, False])
def test_newest_first_search_answers_the_same_whatever_share_of_the_brain_the_caller_reads(brain, clock,
                                                                                              require_all):
    """A member of a big team reads a small share of the brain: SQLite then walks their own rows instead of the
    whole index's matches. Either way the answer is the newest matches within their scope."""
    written = []
    for n in range(60):
        workspace = f"personal-m{n % 10}"
        who = Context(Identity(f"m{n % 10}", f"M{n % 10}", "member", workspace), "r")
        content = ["The weekly MEETING notes", "a meeting about lunch", "notes on the garden", "nothing here"][n % 4]
        written.append((capture(brain, who, clock, f"{content} #{n}"), workspace, content.lower()))
    brain.indexer.run_once(10_000)

    def expected(scope: tuple[str, ...]) -> list[str]:
        hits = [(i, ws, c) for i, ws, c in written if ws in scope
                and (all if require_all else any)(t in c for t in ("meeting", "notes"))]
        return [i for i, _, _ in reversed(hits)][:5]

    for scope in (("personal-m1",), ("personal-m2", "personal-m3"), tuple(f"personal-m{k}" for k in range(7))):
        found = brain.queries.read_model.keyword_search(["meeting", "notes"], Filters(scope), 5,
                                                        require_all=require_all, newest_first=True)
        assert [h.entry.id for h in found] == expected(scope), scope
        newest = [i for i, ws, _ in reversed(written) if ws in scope][:5]
        assert [r.id for r in brain.queries.read_model.recent(Filters(scope), 5)] == newest, scope


def test_written_orders_memories_as_neighbours_counts_them_whatever_their_tags(brain, ctx, clock):
    first = capture(brain, ctx, clock, "The first note of the day")
    second = capture(brain, ctx, clock, "A second note, retired later")
    ops.set_status(brain, ctx, second, "deprecated")
    third = capture(brain, ctx, clock, "A third note", step=0)  # the same millisecond: the log position orders it
    written = brain.recall.read_model.written([third, second, first, "missing"])
    assert sorted(written, key=written.__getitem__) == [first, second, third]
    assert written[second][0] == written[third][0] and written[second][1] < written[third][1]
    near = brain.recall.read_model.neighbours([brain.recall.read_model.hydrate([first], Filters(
        ctx.identity.readable))[first]], 2, 600_000)[first]
    assert [key for key, _ in near] == [second, third]  # a deprecated memory counts as a step


def test_neighbours_counts_steps_each_way_for_every_seed_at_once(brain, ctx, clock):
    """Before (nearest first) then after, up to `reach` each way, within the window, same workspace and source."""
    notes = ("Budget review moved to Thursday", "The flaky login test is quarantined", "Priya joins as an intern",
             "Lunch order: tacos for twelve", "Outage postmortem drafted by Sam", "Release 4.2 ships on May 3",
             "Movers come for the office furniture")
    a, b, c, d, e, f, g = (capture(brain, ctx, clock, note, step=60_000) for note in notes)
    clock.advance(1)
    brain.memories.capture(ctx, "A note from another source, written later", [], "mcp")
    far = capture(brain, ctx, clock, "A note written an hour later", step=3_600_000)
    rows = brain.recall.read_model.hydrate([c, f, a, far], Filters(WS))
    near = brain.recall.read_model.neighbours([rows[c], rows[f], rows[a], rows[far]], 2, 600_000)
    assert near == {c: [(b, 1), (a, 2), (d, 1), (e, 2)], f: [(e, 1), (d, 2), (g, 1)], a: [(b, 1), (c, 2)],
                    far: []}


def test_hydrate_leaves_out_memories_never_recalled(brain, ctx, clock):
    kept = capture(brain, ctx, clock, "A note recall may show", ["work"])
    retired = capture(brain, ctx, clock, "A note retired later")
    ops.set_status(brain, ctx, retired, "deprecated")
    insight = capture(brain, ctx, clock, "A note the nightly job wrote", ["auto-insight"])
    pattern = capture(brain, ctx, clock, "Another note the nightly job wrote", ["auto-pattern", "work"])
    found = brain.recall.read_model.hydrate([kept, retired, insight, pattern, "missing"], Filters(WS))
    assert set(found) == {kept}
    assert "work" in found[kept].tags


def test_born_by_leaves_out_memories_begun_later_in_every_search(brain, ctx, clock):
    early = capture(brain, ctx, clock, "The zebra census in the northern park counted twelve animals")
    cut = brain.store.head()
    late = capture(brain, ctx, clock, "Our zebra sighting report from the river delta, with photos")
    brain.indexer.run_once(100)
    then, now = Filters(WS, born_by=cut), Filters(WS)
    read_model = brain.recall.read_model
    assert {h.entry.id for h in read_model.keyword_search(["zebra"], now, 10)} == {early, late}
    assert [h.entry.id for h in read_model.keyword_search(["zebra"], then, 10)] == [early]
    assert [h.entry.id for h in read_model.scan_search(["ze"], then, 10)] == [early]
    assert set(read_model.hydrate([early, late], then)) == {early}
    query = brain.recall.embedder.embed_query("zebra census")
    assert {h.entry_id for h in brain.recall.vectors.search(query, now, 10)} == {early, late}
    assert [h.entry_id for h in brain.recall.vectors.search(query, then, 10)] == [early]


@pytest.mark.parametrize("created_at", [2**63 - 1, 0])
def test_recall_finds_a_memory_restored_at_the_edge_of_time(brain, ctx, created_at):
    """The backup format allows any signed 64-bit time: the episodic window around such a memory stays inside it
    (it overflowed SQLite's integers, a 500 from /recall)."""
    from second_brain.app.transfer import parse_payload

    entries = [{"id": f"edge-{n}", "content": f"Zanzibar ferry timetable, page {n}", "created_at": created_at}
               for n in range(2)]
    brain.transfer.import_page(ctx, parse_payload({"entries": entries}))
    assert set(recall_ids(brain, ctx, "zanzibar ferry timetable")) == {"edge-0", "edge-1"}
    rows = brain.recall.read_model.hydrate(["edge-0"], Filters(WS))
    assert brain.recall.read_model.neighbours([rows["edge-0"]], 2, 600_000)["edge-0"] == [("edge-1", 1)]


def test_spellings_offer_the_readable_words_one_slip_away_with_their_counts(brain, ctx, clock):
    capture(brain, ctx, clock, "The pricing floor for the enterprise plan is 40 seats")
    capture(brain, ctx, clock, "Raised the pricing page on the site")
    capture(brain, ctx, clock, "Water leaked onto the floor; flow the pipe")
    capture(brain, ctx, clock, "We adopted the adoption checklist")
    bob = Context(Identity("bob", "Bob", "member", "personal-bob"), "r")
    capture(brain, bob, clock, "Bob's flour order for the bakery")
    near = brain.recall.read_model.spellings(["pricng", "flor", "adopt", "pricing", "zqxv"], WS)
    # Held words, and words beginning a held word, are left out; a word nothing is near gets no proposal. Which
    # proposal to take is recall's choice ("for" is a stopword it never takes).
    assert near == {"pricng": {"pricing": 2}, "flor": {"floor": 2, "flow": 1, "for": 1}, "zqxv": {}}
    # Bob's words are Bob's ("for" in his note is not counted above): never proposed to another reader, and
    # proposed to him.
    assert brain.recall.read_model.spellings(["flor"], ("personal-bob",)) == {"flor": {"flour": 1, "for": 1}}
    # Past 24 letters a word has too many neighbours to look up: left out.
    assert brain.recall.read_model.spellings(["pricingfloorxxxxxxxxxxxxx"], WS) == {}


def test_a_forgotten_memory_words_are_no_longer_proposed(brain, ctx, clock):
    gone = capture(brain, ctx, clock, "The quokka enclosure opens at noon")
    capture(brain, ctx, clock, "Something else entirely")
    assert brain.recall.read_model.spellings(["qokka"], WS) == {"qokka": {"quokka": 1}}
    brain.memories.forget(ctx, gone)
    assert brain.recall.read_model.spellings(["qokka"], WS) == {"qokka": {}}
    clock.advance(1000)
    brain.memories.update(ctx, brain.memories.capture(ctx, "A note about wombats", [], "api").id,
                          "A note about a quokka now", None)
    assert brain.recall.read_model.spellings(["qokka", "wombat"], WS) == {"qokka": {"quokka": 1}, "wombat": {}}


@pytest.mark.parametrize("hidden", [3, 30])  # fewer than the spare ranked beyond the limit, and more
def test_the_best_keyword_matches_leave_out_what_recall_never_shows_however_many_rank_first(brain, ctx, clock,
                                                                                            hidden):
    """Whole-brain readers are ranked on the index first and the rows read after: memories recall never shows
    (deprecated) among the best matches must not leave fewer than the limit, nor take a place."""
    for n in range(hidden):
        brain.memories.set_status(ctx, capture(brain, ctx, clock, f"zebra zebra zebra crossing {n}"), "deprecated")
    shown = {capture(brain, ctx, clock, f"one zebra seen at the zoo, visit {n}") for n in range(8)}
    hits = brain.recall.read_model.keyword_search(["zebra"], Filters(WS), 5)
    assert len(hits) == 5 and {h.entry.id for h in hits} <= shown
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_word_asked_for_before_any_memory_held_it_is_found_the_moment_one_does(brain, ctx, clock):
    for n in range(12):  # enough memories for word counts to weigh words
        capture(brain, ctx, clock, f"an ordinary note about the garden, day {n}")
    assert recall_ids(brain, ctx, "walrus") == []  # its count (none) was just read
    assert brain.recall.read_model.term_stats(["walrus", "garden"], WS).df == {"walrus": 0, "garden": 12}
    walrus = capture(brain, ctx, clock, "The walrus exhibit opens in June")
    # Counts may be kept a while for common words, never for one so rare that a stale count hides it.
    assert brain.recall.read_model.term_stats(["walrus"], WS).df == {"walrus": 1}
    assert recall_ids(brain, ctx, "walrus") == [walrus]


def test_connections_say_which_way_each_link_goes(brain, ctx, clock):
    """Issue 63: a directed link reads outgoing from its source and incoming at its target; relates_to both ways."""
    old = capture(brain, ctx, clock, "The Atlas launch is in February")
    new = capture(brain, ctx, clock, "Atlas launch moved to March")
    other = capture(brain, ctx, clock, "Priya runs the Atlas launch")
    ops.link(brain, ctx, new, old, "supersedes")
    ops.link(brain, ctx, other, new, "relates_to")
    linked = ops.connections(brain, ctx, new)["connections"]
    seen = {(c["id"], c["type"]): (c["direction"], c["relation"]) for c in linked}
    assert seen[(old, "supersedes")] == ("outgoing", "this memory supersedes it")
    assert seen[(other, "relates_to")] == ("both ways", "this memory is related to it")
    [back] = [c for c in ops.connections(brain, ctx, old)["connections"] if c["type"] == "supersedes"]
    assert (back["id"], back["direction"], back["relation"]) == (new, "incoming", "it supersedes this memory")


def test_a_projects_count_is_what_its_list_of_memories_lists(brain, ctx, clock):
    """Issue 64 item 6: "Lisbon trip · 0 memories" while its list showed fifteen through the #lisbon alias."""
    ops.create_project(brain, ctx, "Lisbon trip", "lisbon-trip", aliases=["lisbon", "porto"])
    capture(brain, ctx, clock, "Flights to Lisbon booked", tags=["lisbon"])
    capture(brain, ctx, clock, "Hotel in Alfama for three nights", tags=["lisbon", "porto"])  # two aliases: once
    capture(brain, ctx, clock, "Day trip to Porto on the Sunday", tags=["porto"])
    ops.capture(brain, ctx, "Pack the travel adapter", project="lisbon-trip")
    capture(brain, ctx, clock, "Dentist on Friday", tags=["health"])  # not the project's
    listed = ops.list_recent(brain, ctx, 100, project="lisbon-trip")
    [project] = ops.list_projects(brain, ctx, counts=True)["projects"]
    assert project["count"] == len(listed) == 4
