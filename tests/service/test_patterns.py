"""The patterns job over a real SQLite brain with the fake embedder, and answering its proposals."""

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app.handling import Context, envelopes
from second_brain.app.insights.patterns import PatternsJob
from second_brain.app.maintenance.runner import Budget
from second_brain.app.recall.pipeline import RecallRequest
from second_brain.bootstrap import build
from second_brain.domain import patterns as p
from second_brain.domain.errors import Forbidden, InvalidInput, NotFound
from second_brain.domain.events import MemoryCaptured, memory_stream
from second_brain.domain.identity import Identity, owner
from second_brain.domain.memory import Memory, fold
from second_brain.ports.read_model import Filters
from second_brain.settings import Settings

DAY = 24 * 3600 * 1000
OWNER = Context(owner("Ada"), "req-patterns")
TEAM_OWNER = Context(Identity("owner", "Ada", "admin", "personal-owner", ("company",), owner=True), "req")
FOREVER = Budget(float("inf"))
TLS = (("Renewed the TLS certificate for the edge proxy by hand again; it took two hours of debugging the nginx "
        "config."), ("The edge proxy TLS certificate expired again and I renewed it by hand: two hours debugging the "
                     "nginx config."))
SHOP = ("Bought oat milk, eggs and coffee beans at the corner shop for the weekend breakfast with the neighbours.",
        "Bought oat milk, eggs and coffee beans at the corner shop again for breakfast with the neighbours.")
_ids = iter(range(1, 1_000_000))


@pytest.fixture
def brain(tmp_path, clock):
    brain = build(Settings(data_dir=tmp_path / "brain"), clock=clock, embedder=FakeEmbedder())
    yield brain
    brain.close()


def write(brain, clock, content, tags=("infra",), workspace="personal-owner", step=DAY) -> str:
    clock.advance(step)
    memory_id = f"m{next(_ids):05d}"
    who = Context(Identity("owner", "Ada", "admin", workspace), "req")
    brain.store.append(envelopes(who, memory_stream(memory_id), 0, [MemoryCaptured(content, tuple(tags), "api",
                                                                                   workspace)], workspace,
                                 clock.now_ms()))
    return memory_id


def job(brain, clock, model=None) -> PatternsJob:
    brain.indexer.run_once(10_000)
    return PatternsJob(brain.store, brain.vectors, model, clock, brain.config.timezone)


def state(brain, memory_id) -> Memory:
    return fold(brain.store.read_stream(memory_stream(memory_id)), Memory(memory_id))


def proposed(brain, workspace="personal-owner") -> list[p.PatternProposed]:
    return [e.event for e in brain.store.read_stream(p.stream(workspace))]


def recall_ids(brain, ctx, query) -> list[str]:
    return [r["id"] for r in brain.recall.recall(ctx, RecallRequest(query, 10, Filters(ctx.identity.readable)))[
        "results"]]


def test_the_same_thing_a_month_apart_becomes_a_pattern_out_of_recall_until_confirmed(brain, clock):
    first = write(brain, clock, TLS[0])
    second = write(brain, clock, TLS[1], step=45 * DAY)
    write(brain, clock, SHOP[0])
    result = job(brain, clock).run(FOREVER, "")
    assert result.counts["proposed"] == 1 and result.cursor == "" and result.complete
    [record] = proposed(brain)
    assert set(record.members) == {first, second}
    pattern = state(brain, record.pattern_id)
    assert pattern.tags == ("auto-insight", "kind:semantic") and pattern.source == "system"
    assert pattern.actor == "system" and pattern.workspace == "personal-owner"
    assert pattern.content.splitlines() == [
        "Recurring in 2 memories over 45 days (2026-01-02 to 2026-02-16), tagged infra:",
        f"- 2026-01-02: {TLS[0]}", f"- 2026-02-16: {TLS[1]}"]
    links = brain.links.connections(OWNER, record.pattern_id, None)
    assert {(c["id"], c["type"], c["label"], c["provenance"]) for c in links} == {
        (first, "drawn_from", "Drawn from", "system"), (second, "drawn_from", "Drawn from", "system")}
    brain.indexer.run_once(10_000)
    assert record.pattern_id not in recall_ids(brain, OWNER, "TLS certificate edge proxy")

    confirmed = brain.patterns.resolve(OWNER, record.pattern_id, "confirm")
    assert confirmed.tags == ("kind:semantic", "status:canonical")
    assert record.pattern_id in recall_ids(brain, OWNER, "TLS certificate edge proxy")
    with pytest.raises(InvalidInput, match="not a pattern awaiting confirmation"):
        brain.patterns.resolve(OWNER, record.pattern_id, "dismiss")


def test_the_same_members_never_make_a_second_pattern_even_dismissed(brain, clock):
    write(brain, clock, TLS[0])
    write(brain, clock, TLS[1], step=45 * DAY)
    patterns = job(brain, clock)
    assert patterns.run(FOREVER, "").counts["proposed"] == 1
    [record] = proposed(brain)
    assert brain.patterns.resolve(OWNER, record.pattern_id, "dismiss").deprecated
    again = patterns.run(FOREVER, "")
    assert "proposed" not in again.counts and again.counts["not_novel"] >= 1
    assert len(proposed(brain)) == 1


def test_no_pattern_from_notes_too_close_in_time_too_short_or_unalike(brain, clock):
    write(brain, clock, TLS[0])
    write(brain, clock, TLS[1], step=10 * DAY)  # the same episode, not a recurrence
    write(brain, clock, "TLS cert again", step=60 * DAY)  # too short to say anything
    write(brain, clock, SHOP[0], step=60 * DAY)
    result = job(brain, clock).run(FOREVER, "")
    assert "proposed" not in result.counts and proposed(brain) == []


def test_at_most_three_a_run_the_rest_found_next_time_and_the_sweep_is_bounded(brain, clock):
    themes = [TLS[0], SHOP[0],
              "Quarterly billing review with the finance team: invoices reconciled, two refunds pending approval.",
              "Hiking the ridge trail above the lake with Marta; the snow line was much lower than last spring.",
              "Piano practice: Chopin nocturne in E flat, left hand arpeggios still uneven at the faster tempo."]
    for theme in themes:
        write(brain, clock, theme, ())
    clock.advance(60 * DAY)
    for theme in themes:
        write(brain, clock, theme.replace("the", "that", 1) + " Again.", ())
    patterns = job(brain, clock)
    assert patterns.run(FOREVER, "").counts["proposed"] == 3
    assert patterns.run(FOREVER, "").counts["proposed"] == 2
    short = PatternsJob(brain.store, brain.vectors, None, clock, brain.config.timezone, seeds_per_run=4)
    stopped = short.run(FOREVER, "")
    assert stopped.counts["seeds"] == 4 and not stopped.complete and stopped.cursor
    assert short.run(FOREVER, stopped.cursor).counts["seeds"] >= 4


class Model:
    model_id = "fake"

    def complete(self, messages, max_tokens=512):
        assert TLS[0] in messages[1]["content"] and "2026-01-02" in messages[1]["content"]
        return "The edge proxy's TLS certificate keeps being renewed by hand (Jan 2 and Feb 16)."

    def stream(self, messages, max_tokens=512):
        yield self.complete(messages)


def test_with_a_model_the_model_writes_it_from_the_members(brain, clock):
    write(brain, clock, TLS[0])
    write(brain, clock, TLS[1], step=45 * DAY)
    job(brain, clock, Model()).run(FOREVER, "")
    [record] = proposed(brain)
    assert state(brain, record.pattern_id).content.startswith("The edge proxy's TLS certificate keeps")


def test_only_someone_who_may_change_a_pattern_answers_it_and_the_team_feed_shows_it(brain, clock):
    write(brain, clock, TLS[0], workspace="company")
    write(brain, clock, TLS[1], workspace="company", step=45 * DAY)
    job(brain, clock).run(FOREVER, "")
    [record] = proposed(brain, "company")
    member = Context(Identity("bob", "Bob", "member", "personal-bob", ("company",)), "req")
    with pytest.raises(Forbidden):
        brain.patterns.resolve(member, record.pattern_id, "confirm")
    with pytest.raises(NotFound):
        brain.patterns.resolve(OWNER, record.pattern_id, "confirm")  # not readable from personal alone
    with pytest.raises(InvalidInput, match="action must be confirm or dismiss"):
        brain.patterns.resolve(TEAM_OWNER, record.pattern_id, "maybe")
    brain.patterns.resolve(TEAM_OWNER, record.pattern_id, "confirm")
    feed = brain.team.activity(TEAM_OWNER)["activity"]
    assert feed[0] | {"at": 0} == {"type": "pattern_confirmed", "at": 0, "actor_name": "Owner",
                                   "memory_id": record.pattern_id}


def test_without_vectors_the_job_does_nothing(brain, clock):
    write(brain, clock, TLS[0])
    result = PatternsJob(brain.store, None, None, clock, brain.config.timezone).run(FOREVER, "7")
    assert (result.counts, result.cursor) == ({}, "7")
