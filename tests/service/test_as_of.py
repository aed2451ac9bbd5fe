"""`as_of` reads, proven against the live answers: a scripted history on a real SQLite brain records the live
export (and /list, /entry, /connections) after every step; afterwards the same reads `as_of` each step's time,
folded from the log alone, give the recorded answers back, except for the forgotten memory, which is absent
everywhere (its text appears in no past answer)."""

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.app.handling import Context, envelopes
from second_brain.app.past import as_of
from second_brain.app.transfer import parse_payload
from second_brain.bootstrap import build
from second_brain.domain.errors import InvalidInput, NotFound
from second_brain.domain.events import MemoryRevised, TagsChanged, memory_stream
from second_brain.domain.team import token_hash
from second_brain.settings import Settings
from tests.conftest import FixedClock
from tests.support.brains import make_brain, sqlite_brain

SECRET = "SECRET-ORCHID-7731"
STEP_MS = 60_000


@pytest.fixture(params=["sqlite", "aws"])
def brain(request, tmp_path, clock):
    """The local brain, and the AWS one: the DynamoDB log (moto) projected into the OpenSearch node."""
    brain = make_brain(request.param, request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


@pytest.fixture
def owner(brain) -> Context:
    return Context(brain.team.owner_identity(), "as-of")


@dataclass
class Recorded:
    """What the live reads answered right after one step."""

    at: int
    export: dict[str, Any]
    listed: list[dict[str, Any]]
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    connections: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    recalls: dict[str, dict[str, Any]] = field(default_factory=dict)


QUERIES = ("Atlas budget", "launch plan customers", "vault combination", "demos on Tuesdays", "peanuts",
           "restored note", "what did Priya approve", "topic 3 item 4", "rewritten note", "addition")


def recalled(brain, ctx: Context, query: str, **args: Any) -> dict[str, Any]:
    """What GET /recall answered, through the service the route calls, without counting the recall (a count
    is a later event, which would move the past this test compares against)."""
    return brain.recall.recall(ctx, ops.recall_request(brain, ctx, query, args.pop("top_k", 10), args.pop("hops", None),
                                                       False, **args))


def live(brain, ctx: Context, clock: FixedClock, ids: list[str]) -> Recorded:
    brain.indexer.run_once(100)  # the step as it left the brain, not as far as the background embedder had got
    export = brain.transfer.export(ctx)
    export.pop("exported_at")
    recorded = Recorded(clock.now_ms(), export, ops.list_recent(brain, ctx, 100))
    recorded.recalls = {q: recalled(brain, ctx, q) for q in QUERIES}
    recorded.recalls["Atlas budget, 2 hops"] = recalled(brain, ctx, "Atlas budget", hops=2)
    for memory_id in ids:
        try:
            recorded.entries[memory_id] = brain.queries.entry(ctx, memory_id)  # not ops.get: no open is counted
            recorded.connections[memory_id] = brain.links.connections(ctx, memory_id, None)
        except NotFound:
            pass
    return recorded


def merge(brain, ctx: Context, memory_id: str, content: str) -> None:
    """What a capture judged a merge appends to the matched memory (the model's verdict, without a model)."""
    history = brain.store.read_stream(memory_stream(memory_id))
    tags = (*[t for t in history[0].event.tags], "merged")
    brain.store.append(envelopes(ctx, memory_stream(memory_id), len(history),
                                 [MemoryRevised(content, "merged"), TagsChanged(tags)], history[0].workspace,
                                 brain.queries.clock.now_ms()))


def script(brain, ctx: Context, clock: FixedClock) -> tuple[list[Recorded], str, list[str]]:
    """The scripted history; the recorded answers after each step, the forgotten id and every id."""
    ids: list[str] = []
    recorded: list[Recorded] = []

    def step(action) -> Any:
        clock.advance(STEP_MS)
        result = action()
        recorded.append(live(brain, ctx, clock, ids))
        return result

    def capture(text: str, **fields) -> str:
        memory_id = ops.capture(brain, ctx, text, **fields)["id"]
        ids.append(memory_id)
        return memory_id

    budget = step(lambda: capture("The Atlas budget for Q3 is 40k euros.", tags=["finance"], project="atlas"))
    secret = step(lambda: capture(f"The vault combination is {SECRET}, kept in the study."))
    plan = step(lambda: capture("Launch plan: ship the beta to ten customers in March."))
    step(lambda: ops.append(brain, ctx, budget, "Approved by Priya on Monday."))
    step(lambda: ops.update(brain, ctx, plan, "Launch plan: ship the beta to twenty customers in April.",
                            ["launch"]))
    step(lambda: ops.link(brain, ctx, secret, budget, "relates_to"))
    notes = step(lambda: capture("Meeting notes: the team prefers Tuesdays for demos."))
    step(lambda: merge(brain, ctx, notes, "Meeting notes: demos on Tuesdays, retros on Fridays."))
    allergy = step(lambda: capture("I am allergic to peanuts."))
    step(lambda: capture("I am not allergic to peanuts."))  # retires `allergy`, a supersedes edge
    step(lambda: ops.set_status(brain, ctx, plan, "deprecated"))
    step(lambda: ops.link(brain, ctx, budget, notes, "caused_by"))
    step(lambda: ops.link(brain, ctx, budget, plan, "relates_to"))
    step(lambda: ops.unlink(brain, ctx, budget, plan, "relates_to"))
    step(lambda: ops.share(brain, ctx, notes, "company"))
    step(lambda: ops.snooze(brain, ctx, budget, clock.now_ms() + 7 * 24 * 3600 * 1000))
    step(lambda: ops.get(brain, ctx, budget))  # opened: a counter moves
    step(lambda: brain.projects.update(ctx, "atlas", description="The Atlas launch, 2026"))
    step(lambda: ops.forget(brain, ctx, secret))
    payload = {"entries": [{"id": "restored-1", "content": "An old note restored from a backup.", "tags": ["old"],
                            "created_at": clock.now_ms() - 10 * 24 * 3600 * 1000, "recall_count": 3}],
               "edges": [{"source_id": "restored-1", "target_id": budget, "type": "relates_to"}],
               "projects": [{"id": "legacy", "name": "Legacy", "created_at": 1_700_000_000_000}]}
    step(lambda: brain.transfer.import_page(ctx, parse_payload(payload)))
    ids.append("restored-1")
    step(lambda: ops.share(brain, ctx, notes, "personal"))
    assert allergy in ids
    return recorded, secret, ids


def without(recorded: Recorded, gone: str) -> Recorded:
    """The recorded answers with a forgotten memory taken out (and the edges that touched it)."""
    export = dict(recorded.export)
    export["entries"] = [e for e in export["entries"] if e["id"] != gone]
    export["edges"] = [e for e in export["edges"] if gone not in (e["source_id"], e["target_id"])]
    return Recorded(recorded.at, export, [e for e in recorded.listed if e["id"] != gone],
                    {k: v for k, v in recorded.entries.items() if k != gone},
                    {k: [c for c in v if c["id"] != gone] for k, v in recorded.connections.items() if k != gone},
                    recorded.recalls)


def past_recall(brain, ctx: Context, query: str, at: int, **args: Any) -> dict[str, Any]:
    answer = as_of.recall(brain, ctx, query, args.pop("top_k", 10), as_of=at, **args)
    assert answer.pop("as_of") == at
    return answer


def same_recall(past: dict[str, Any], snapshot: Recorded, query: str, gone: set[str], ordered: bool = True) -> None:
    """The recall recorded live, again: the same memories as they read then, in the same order, and only
    memories the brain held then. Scores are not compared, and a result may come in below the recorded ones:
    term weights (idf) are today's, vectors of changed memories come from the cache (float32, where the live
    index keeps float16), and fusion scales each arm by its best candidate, which may have been a memory
    forgotten since; results the recorded answer scored within a point of each other may come in either order.
    Where a forgotten memory was still in the brain (`gone`), or with `ordered=False` (in a brain of a few notes,
    one more note moves every word's weight), the recorded memories come back in an order of their own."""
    recorded = snapshot.recalls[query]

    def shown(answer: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(r["id"], r["content"], tuple(r["tags"]), r["hop"], r["related_to"], r["updated"])
                for r in answer["results"]]

    expected = [(r, s["score"]) for r, s in zip(shown(recorded), recorded["results"], strict=True)
                if not gone.intersection((r[0], r[4]))]
    got = shown(past)
    assert {r[0] for r in got} <= {e["id"] for e in snapshot.export["entries"]} - gone  # nothing from later
    if gone or not ordered:
        assert {r for r, _ in expected} <= set(got)
    else:
        groups: list[set[tuple[Any, ...]]] = []  # runs of results scored within a point of each other
        for n, (result, score) in enumerate(expected):
            if n and abs(score - expected[n - 1][1]) < 1.0:
                groups[-1].add(result)
            else:
                groups.append({result})
        assert [set(got[sum(len(g) for g in groups[:n]):][: len(group)]) for n, group in enumerate(groups)] == groups
    assert not any(memory_id in json.dumps(past) for memory_id in gone) and SECRET not in json.dumps(past)
    assert past["semantic_unavailable"] == recorded["semantic_unavailable"]


def checked(brain, recorded: list[Recorded]) -> list[tuple[int, Recorded]]:
    """The steps whose moments a test reads back: every one on SQLite; on the AWS brain, where each past read pages
    the whole log through moto, every third and the last four (the forget, the import, the share taken back), each
    holding what every step before it did (a minute of the suite instead of two and a half)."""
    steps = list(enumerate(recorded))
    if brain.backend == "sqlite":
        return steps
    return [(n, snapshot) for n, snapshot in steps if n % 3 == 0 or n >= len(steps) - 4]


def past_export(brain, ctx: Context, at: int) -> dict[str, Any]:
    answer = as_of.export(brain, ctx, at)
    assert answer.pop("as_of") == min(at, brain.queries.clock.now_ms())  # a future moment is now
    answer.pop("exported_at")
    return answer


def test_every_past_answer_equals_what_was_recorded_live(brain, owner, clock):
    recorded, secret, _ids = script(brain, owner, clock)
    for _, snapshot in checked(brain, recorded):
        expected = without(snapshot, secret)
        for moment in (snapshot.at, snapshot.at + STEP_MS // 2):  # at the step, and until the next one
            assert past_export(brain, owner, moment) == expected.export
            assert as_of.list_recent(brain, owner, 100, moment) == expected.listed
        for memory_id, entry in expected.entries.items():
            past = as_of.entry(brain, owner, memory_id, snapshot.at)
            assert {**past, "indexed": None} == {**entry, "indexed": None}
            assert as_of.connections(brain, owner, memory_id, None, snapshot.at)["connections"] == \
                expected.connections[memory_id]


def test_every_past_recall_equals_what_was_recalled_live(brain, owner, clock):
    recorded, secret, _ids = script(brain, owner, clock)
    for step, snapshot in checked(brain, recorded):
        gone = {secret} if secret in json.dumps(snapshot.export) else set()  # still there when recorded
        for query, hops in [(q, None) for q in QUERIES] + [("Atlas budget", 2)]:
            label = query if hops is None else f"{query}, {hops} hops"
            try:
                same_recall(past_recall(brain, owner, query, snapshot.at, hops=hops), snapshot, label, gone)
            except AssertionError as failed:
                answers = (snapshot.recalls[label], past_recall(brain, owner, query, snapshot.at, hops=hops))
                scores = [[(r["content"][:20], r["score"]) for r in answer["results"]] for answer in answers]
                raise AssertionError(
                    f"after step {step}, recall {label!r}, scores then / as of: {scores}: {failed}") from None
    assert past_export(brain, owner, recorded[0].at - 1) == {"ok": True, "version": 3, "entries": [], "edges": [],
                                                              "projects": []}


def test_the_forgotten_memory_is_absent_from_every_past_answer(brain, owner, clock):
    recorded, secret, ids = script(brain, owner, clock)
    answers: list[Any] = []
    for _, snapshot in checked(brain, recorded):
        answers += [past_export(brain, owner, snapshot.at), as_of.list_recent(brain, owner, 100, snapshot.at)]
        for memory_id in ids:
            try:
                answers += [as_of.entry(brain, owner, memory_id, snapshot.at),
                            as_of.connections(brain, owner, memory_id, None, snapshot.at)]
            except NotFound:
                continue
        with pytest.raises(NotFound, match=f"No entry found with ID: {secret}$"):
            as_of.entry(brain, owner, secret, snapshot.at)
    text = json.dumps(answers)
    assert SECRET not in text and secret not in text
    assert "The Atlas budget" in text  # the others are there


def test_list_as_of_is_newest_first_with_n_and_tag(brain, owner, clock):
    recorded, _secret, ids = script(brain, owner, clock)
    moment = recorded[12].at
    full = as_of.list_recent(brain, owner, 100, moment)
    assert as_of.list_recent(brain, owner, 2, moment) == full[:2]
    assert [e["id"] for e in as_of.list_recent(brain, owner, 100, moment, tag="finance")] == [ids[0]]
    assert [e["created_at"] for e in full] == sorted((e["created_at"] for e in full), reverse=True)
    restored = as_of.list_recent(brain, owner, 100, recorded[-1].at)
    assert restored[-1]["id"] == "restored-1"  # imported last with an older creation time: listed by it
    for n in range(1, len(restored) + 1):  # the walk back through the log stops only once nothing can rank above
        assert as_of.list_recent(brain, owner, n, recorded[-1].at) == restored[:n]


def test_entry_timeline_and_revisions_stop_at_as_of(brain, owner, clock):
    recorded, _secret, ids = script(brain, owner, clock)
    budget = ids[0]
    events = [t["event"] for t in as_of.entry(brain, owner, budget, recorded[3].at)["timeline"]]
    assert events[-1] == "appended" and "opened" not in events and "time_anchor_set" not in events
    now = [t["event"] for t in ops.get(brain, owner, budget)["timeline"]]
    assert len(now) > len(events) and now[: len(events)] == events
    plan = ids[2]
    then = as_of.entry(brain, owner, plan, recorded[3].at, diff=True)["revisions"]
    assert [(r["reason"], r["content"]) for r in then] == [
        ("captured", "Launch plan: ship the beta to ten customers in March.")]
    later = as_of.entry(brain, owner, plan, recorded[4].at, diff=True)["revisions"]
    assert [r["reason"] for r in later] == ["captured", "updated"] and "+Launch plan" in later[1]["diff"]
    assert "revisions" not in as_of.entry(brain, owner, plan, recorded[4].at)


def test_as_of_values(brain, owner, clock):
    ops.capture(brain, owner, "A note for the clock.")
    now = clock.now_ms()
    assert as_of.moment(brain, "2099-01-01") == now  # the future is now
    assert as_of.moment(brain, str(now - 5)) == now - 5
    assert as_of.moment(brain, "2025-12-31T23:00:00Z") == now - 3_600_000
    assert as_of.moment(brain, "yesterday") == now - 24 * 3_600_000  # the clock stands at midnight UTC
    assert as_of.moment(brain, "7d") == now - 7 * 24 * 3_600_000  # back in time: as_of is a bound on the past
    for bad in ("someday", "1767225600", "12", "2026-13-01", ""):
        with pytest.raises(InvalidInput, match="as_of"):
            as_of.moment(brain, bad)


def test_scope_is_the_callers_now_applied_then_and_now(brain, owner, clock):
    """A member's memory shows to others only while it was shared AND is shared still; the member's own view
    of its private past stays theirs."""
    token = brain.team.add_member(owner, "Bob", role="member")["token"]
    bob = Context(brain.team.member_identity(token_hash(token)), "bob")
    clock.advance(STEP_MS)
    kept = ops.capture(brain, bob, f"Bob's private draft {SECRET}", workspace="personal")["id"]
    taken_back = ops.capture(brain, bob, "Bob's note, shared then taken back", workspace="personal")["id"]
    private_then = clock.now_ms()
    clock.advance(STEP_MS)
    ops.share(brain, bob, kept, "company")
    ops.share(brain, bob, taken_back, "company")
    shared_then = clock.now_ms()
    clock.advance(STEP_MS)
    ops.share(brain, bob, taken_back, "personal")
    clock.advance(STEP_MS)

    owner = Context(brain.team.owner_identity(), "owner")
    assert [e["id"] for e in past_export(brain, owner, shared_then)["entries"]] == [kept]
    assert past_export(brain, owner, private_then)["entries"] == []  # it was Bob's own then
    with pytest.raises(NotFound):
        as_of.entry(brain, owner, taken_back, shared_then)  # Bob's own now: it never existed, for others
    with pytest.raises(NotFound):
        as_of.entry(brain, owner, kept, private_then)
    assert {e["id"] for e in as_of.list_recent(brain, bob, 10, private_then)} == {kept, taken_back}
    assert as_of.entry(brain, bob, kept, private_then)["content"].startswith("Bob's private draft")


# -- property: random scripts --------------------------------------------------------------------------------------

ACTIONS = ("capture", "append", "update", "deprecate", "link", "unlink", "share", "forget", "open")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(0, 20), st.integers(0, 20)), min_size=3,
                max_size=14))
def test_random_scripts_answer_as_they_did(tmp_path_factory, plan):
    clock = FixedClock()
    brain = build(Settings(data_dir=tmp_path_factory.mktemp("prop") / "brain"), clock=clock, embedder=FakeEmbedder())
    try:
        ctx = Context(brain.team.owner_identity(), "prop")
        alive: list[str] = []
        gone: list[str] = []
        recorded: list[Recorded] = []
        for n, (action, a, b) in enumerate(plan):
            clock.advance(1_000)
            if action == "capture" or not alive:
                alive.append(ops.capture(brain, ctx, f"Note {n} about topic {a} and item {b}")["id"])
            else:
                first, second = alive[a % len(alive)], alive[b % len(alive)]
                try:
                    apply(brain, ctx, action, first, second, n)
                except (InvalidInput, NotFound):
                    pass
                if action == "forget":
                    alive.remove(first)
                    gone.append(first)
            recorded.append(live(brain, ctx, clock, []))
        for snapshot in recorded:
            expected = snapshot
            for memory_id in gone:
                expected = without(expected, memory_id)
            assert past_export(brain, ctx, snapshot.at) == expected.export
            assert as_of.list_recent(brain, ctx, 100, snapshot.at) == expected.listed
            there = {m for m in gone if m in json.dumps(snapshot.export)}
            for query in ("topic 3 item 4", "rewritten note", "addition"):
                same_recall(past_recall(brain, ctx, query, snapshot.at), snapshot, query, there, ordered=False)
    finally:
        brain.close()


def apply(brain, ctx: Context, action: str, first: str, second: str, n: int) -> None:
    if action == "append":
        ops.append(brain, ctx, first, f"addition {n}")
    elif action == "update":
        ops.update(brain, ctx, first, f"Rewritten note {n}")
    elif action == "deprecate":
        ops.set_status(brain, ctx, first, "deprecated")
    elif action == "link" and first != second:
        ops.link(brain, ctx, first, second, "relates_to")
    elif action == "unlink":
        ops.unlink(brain, ctx, first, second, None)
    elif action == "share":
        ops.share(brain, ctx, first, "company" if n % 2 else "personal")
    elif action == "forget":
        ops.forget(brain, ctx, first)
    elif action == "open":
        ops.get(brain, ctx, first)


def test_a_copy_as_of_a_past_moment_lets_in_no_token_but_the_owners(clock, tmp_path):
    """`brain replay` copies a local brain's SQLite log."""
    brain = sqlite_brain(tmp_path, clock, FakeEmbedder())
    owner = Context(brain.team.owner_identity(), "as-of")
    from second_brain.adapters.event_store.sqlite import SQLiteEventStore, copy_log
    from second_brain.adapters.sqlite_database import SQLiteDatabase

    token = brain.team.add_member(owner, "Bob")["token"]
    clock.advance(1000)
    target = SQLiteDatabase(tmp_path / "copy.sqlite3")
    copied = SQLiteEventStore(target, projections=[])
    for _ in copy_log(brain.settings.database_path, target, clock.now_ms()):
        pass
    team_events = copied.read_stream("team")
    assert team_events and all(getattr(e.event, "token_hash", "") == "" for e in team_events)
    assert token_hash(token) not in (tmp_path / "copy.sqlite3").read_bytes().decode("latin-1")
    target.close()
    brain.close()


def test_a_past_recall_ranks_by_the_opens_counted_by_then(brain, owner, clock):
    """Being opened lifts an old memory (frequency); as of a moment before the open, it had not been lifted."""
    # Near each other in meaning: the open's lift decides, as it would not against a clear lead in meaning.
    closer = ops.capture(brain, owner, "Dupont boiler service: due in October.")["id"]
    opened = ops.capture(brain, owner, "Dupont boiler service: done last year.")["id"]
    brain.indexer.run_once(10)
    clock.advance(400 * 24 * 3600 * 1000)  # old: both at the recency floor
    before_open = clock.now_ms()
    clock.advance(1_000)
    first = ops.recall(brain, owner, "boiler service Dupont")["results"][0]["id"]  # counted: a later event
    assert first == closer
    clock.advance(60_000)
    ops.get(brain, owner, opened)
    clock.advance(60_000)
    assert recalled(brain, owner, "boiler service Dupont")["results"][0]["id"] == opened  # the open lifted it
    assert past_recall(brain, owner, "boiler service Dupont", before_open)["results"][0]["id"] == closer
    recalled_before = {e["id"]: e["recall_count"] for e in as_of.list_recent(brain, owner, 10, before_open)}
    assert recalled_before == {closer: 0, opened: 0}  # the live recall since is taken back
    assert {e["id"]: e["recall_count"] for e in ops.list_recent(brain, owner, 10)} == {closer: 1, opened: 1}
    assert as_of.entry(brain, owner, opened, before_open)["recall_count"] == 0


def test_a_past_recall_embeds_the_query_and_nothing_else(brain, owner, clock, monkeypatch):
    memory_id = ops.capture(brain, owner, "Our CI runs on four shared runners.")["id"]
    brain.indexer.run_once(10)
    then = clock.now_ms()
    clock.advance(60_000)
    ops.update(brain, owner, memory_id, "Our CI runs on eight dedicated runners.")
    ops.capture(brain, owner, "The runners are in the Paris region.")
    brain.indexer.run_once(10)
    embedded: list[str] = []
    embed_batch = brain.recall.embedder.embed_batch
    monkeypatch.setattr(brain.recall.embedder, "embed_batch",
                        lambda texts: embedded.extend(texts) or embed_batch(texts))
    answer = past_recall(brain, owner, "how many CI runners", then)
    assert [r["content"] for r in answer["results"]] == ["Our CI runs on four shared runners."]
    assert answer["results"][0]["score"] == 100.0 and not answer["semantic_unavailable"]
    assert len(embedded) == 1 and "runners" in embedded[0]  # the query; the old text's vectors were cached
