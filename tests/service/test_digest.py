"""Compression over a real SQLite brain (no embedder, so captures are not triaged): who is rolled up, the 24-hour
refusal, one workspace per digest, the model and its fallback, the nightly job's turns, and a run killed halfway."""

import pytest

from second_brain.app.handling import Context, envelopes
from second_brain.app.insights.digest import CompressionJob, DigestService, scopes_for
from second_brain.app.maintenance.runner import Budget
from second_brain.bootstrap import build
from second_brain.domain import digest as d
from second_brain.domain.errors import StoreUnavailable
from second_brain.domain.events import (
    ContradictionWon,
    MemoryCaptured,
    MemoryClassified,
    MemoryRecalled,
    MemoryRolledUp,
    memory_stream,
)
from second_brain.domain.identity import Identity, owner
from second_brain.domain.memory import Memory, fold
from second_brain.settings import Settings

DAY = 24 * 3600 * 1000
OWNER = Context(owner("Ada"), "req-digest")
PERSONAL = "personal-owner"
FOREVER = Budget(float("inf"))
_ids = iter(range(1, 1_000_000))


@pytest.fixture
def brain(tmp_path, clock):
    brain = build(Settings(data_dir=tmp_path / "brain", embedder="none"), clock=clock)
    yield brain
    brain.close()


def write(brain, clock, content, tags=("standup",), workspace=PERSONAL, actor="owner", *later) -> str:
    """A memory as a capture stores it (without triage), then `later` events on its stream."""
    clock.advance(1000)
    memory_id = f"m{next(_ids):05d}"
    who = Context(Identity(actor, actor, "admin", workspace), "req")
    brain.store.append(envelopes(who, memory_stream(memory_id), 0, [
        MemoryCaptured(content, tuple(tags), "api", workspace), MemoryClassified(2, "episodic", "", False, "rules"),
        *later], workspace, clock.now_ms()))
    return memory_id


def state(brain, memory_id) -> Memory:
    return fold(brain.store.read_stream(memory_stream(memory_id)), Memory(memory_id))


def owner_digest(brain, tag="standup"):
    return brain.digests.for_caller(OWNER, scopes_for(OWNER.identity, (tag,), tag, False))


def test_ten_eligible_memories_make_a_digest_and_are_rolled_up_by_event(brain, clock):
    ids = [write(brain, clock, f"Standup {i}: Priya shipped build {100 + i}.") for i in range(12)]
    outcome = owner_digest(brain)
    assert outcome.source_count == 12 and outcome.method == "extractive"
    digest = state(brain, outcome.entry_id)
    assert digest.tags[:2] == ("synthesized", "standup") and digest.source == "system"
    assert digest.workspace == PERSONAL and digest.actor == "system"
    assert digest.content.startswith('[Synthesized from 12 entries tagged "standup"]\n\n')
    for i in range(12):
        assert f"build {100 + i}" in digest.content
    for memory_id in ids:
        source = state(brain, memory_id)
        assert "rolled-up" in source.tags and "[Digest" not in source.content  # the text is left alone
        timeline = brain.queries.entry(OWNER, memory_id)["timeline"]
        assert timeline[-1]["event"] == "rolled_up" and timeline[-1]["payload"] == {"digest_id": outcome.entry_id}
    assert outcome.answer() == {"tag": "standup", "synthesis": digest.content, "entry_id": outcome.entry_id,
                                "source_count": 12}


def test_each_protection_keeps_a_memory_whole(brain, clock):
    protected = [
        write(brain, clock, "important", ("standup",), PERSONAL, "owner",
              MemoryClassified(4, "episodic", "", False, "rules")),
        write(brain, clock, "recalled twice", ("standup",), PERSONAL, "owner",
              MemoryRecalled("a"), MemoryRecalled("b")),
        write(brain, clock, "recalled once, lately", ("standup",), PERSONAL, "owner", MemoryRecalled("a")),
        write(brain, clock, "survived a contradiction", ("standup",), PERSONAL, "owner", ContradictionWon("x", "r")),
        write(brain, clock, "a digest itself", ("standup", "synthesized")),
        write(brain, clock, "already rolled up", ("standup", "rolled-up")),
        write(brain, clock, "a pattern", ("standup", "auto-insight")),
    ]
    for i in range(9):
        write(brain, clock, f"plain note {i}")
    refused = owner_digest(brain)
    assert (refused.entry_id, refused.source_count) == (None, 9)
    assert refused.answer() == {"tag": "standup", "error": "Could not create digest — tag may have fewer than 10 "
                                "eligible entries or was recently compressed", "source_count": 9}
    write(brain, clock, "the tenth")
    made = owner_digest(brain)
    assert made.source_count == 10
    assert all("rolled-up" not in state(brain, m).tags or m == protected[5] for m in protected)


def test_a_memory_recalled_once_is_eligible_again_after_60_days(brain, clock):
    write(brain, clock, "recalled once", ("standup",), PERSONAL, "owner", MemoryRecalled("a"))
    for i in range(9):
        write(brain, clock, f"plain note {i}")
    assert owner_digest(brain).entry_id is None
    clock.advance(61 * DAY)
    assert owner_digest(brain).source_count == 10


def test_a_tag_compressed_within_a_day_is_refused_then_allowed(brain, clock):
    for i in range(10):
        write(brain, clock, f"note {i}")
    assert owner_digest(brain).entry_id
    for i in range(10):
        write(brain, clock, f"later note {i}")
    again = owner_digest(brain)
    assert (again.entry_id, again.source_count) == (None, 10)
    clock.advance(DAY)
    assert owner_digest(brain).source_count == 10


def test_bookkeeping_tags_are_never_digested_and_no_model_is_asked(brain, clock):
    model = CountingModel("whatever")
    brain.digests.llm = model
    for i in range(12):
        write(brain, clock, f"note {i}", ("kind:episodic", "standup"))
    outcome = owner_digest(brain, "kind:episodic")
    assert (outcome.entry_id, outcome.source_count, model.calls) == (None, 0, 0)


def test_a_digest_rolls_up_one_workspace_and_lands_in_it(brain, clock):
    team_ctx = Context(Identity("owner", "Ada", "admin", PERSONAL, ("company",), owner=True), "req")
    mine = [write(brain, clock, f"mine {i}") for i in range(10)]
    theirs = [write(brain, clock, f"team {i}", ("standup",), "company", "bob") for i in range(11)]
    outcome = brain.digests.for_caller(team_ctx, scopes_for(team_ctx.identity, ("standup",), "standup", False))
    assert outcome.scope.workspace == "company" and outcome.source_count == 11  # the larger pool
    assert state(brain, outcome.entry_id).workspace == "company"
    assert all("rolled-up" in state(brain, m).tags for m in theirs)
    assert not any("rolled-up" in state(brain, m).tags for m in mine)
    # a member rolls up only what they may change: their own memories in the company workspace
    bob = Identity("bob", "Bob", "member", "personal-bob", ("company",))
    [_, company] = scopes_for(bob, ("standup",), "standup", False)
    assert company.actor == "bob"


class CountingModel:
    model_id = "counting"

    def __init__(self, answer: str | None) -> None:
        self.answer, self.calls = answer, 0

    def complete(self, messages, max_tokens=512) -> str:
        self.calls += 1
        if self.answer is None:
            raise RuntimeError("model down")
        return self.answer

    def stream(self, messages, max_tokens=512):
        yield self.complete(messages, max_tokens)


@pytest.mark.parametrize(("answer", "method"), [
    ("Priya shipped builds 100 to 109 (100, 101, 102, 103, 104, 105, 106, 107, 108, 109).", "model"),
    ("Priya shipped ten builds.", "extractive"),  # dropped the numbers
    (None, "extractive"),  # failed
])
def test_the_model_writes_one_paragraph_only_when_it_keeps_every_fact(brain, clock, answer, method):
    brain.digests.llm = model = CountingModel(answer)
    for i in range(10):
        write(brain, clock, f"Priya shipped {100 + i}")
    outcome = owner_digest(brain)
    assert (outcome.method, model.calls) == (method, 1)
    if method == "model":
        assert outcome.synthesis == '[Synthesized from 10 entries tagged "standup"]\n\n' + answer


class FailingStore:
    """The real store, except that an append carrying a roll-up dies: a run killed after deciding. Were the digest
    appended apart from its roll-ups, it would be in the log with its sources never rolled up."""

    def __init__(self, store) -> None:
        self.store = store

    def __getattr__(self, name):
        return getattr(self.store, name)

    def append(self, events):
        if any(isinstance(e.event, MemoryRolledUp) for e in events):
            raise StoreUnavailable("killed")
        return self.store.append(events)


def test_a_run_killed_at_the_append_leaves_nothing_half_written_and_the_next_run_completes(brain, clock):
    ids = [write(brain, clock, f"note {i}") for i in range(10)]
    versions = {m: state(brain, m).version for m in ids}
    position = brain.store.read_all(0, 100_000)[-1].position
    dying = DigestService(FailingStore(brain.store), brain.digests.read_model, None, clock, brain.config.timezone)
    with pytest.raises(StoreUnavailable):
        dying.compress(d.Scope(PERSONAL, ("standup",), "standup"), "req")
    assert brain.store.read_all(position, 100) == []  # no digest, no roll-up
    assert {m: state(brain, m).version for m in ids} == versions
    assert owner_digest(brain).source_count == 10
    assert owner_digest(brain).entry_id is None  # and it is not repeated


def test_the_nightly_job_takes_four_tags_a_night_in_turns_and_stats_stay_true(brain, clock):
    for tag, count in (("a", 16), ("b", 15), ("c", 14), ("d", 13), ("e", 12), ("f", 11), ("kind:x", 30)):
        for i in range(count):
            write(brain, clock, f"{tag} note {i}", (tag, "kind:x"))
    stats = brain.queries.stats(OWNER)["digest_candidates"]
    assert [c["tag"] for c in stats] == ["a", "b", "c", "d", "e", "f"]
    job = CompressionJob(brain.digests, brain.digests.read_model, brain.team.every_workspace, clock)
    first = job.run(FOREVER, "")
    assert first.counts == {"candidates": 6, "digests": 4, "rolled_up": 16 + 15 + 14 + 13, "extractive": 4}
    assert first.cursor == "4"
    assert brain.queries.stats(OWNER)["digest_candidates"] == [{"tag": "e", "count": 12}, {"tag": "f", "count": 11}]
    clock.advance(DAY)
    second = job.run(FOREVER, first.cursor)  # only e and f are left: each gets its turn
    assert second.counts["digests"] == 2 and brain.queries.stats(OWNER)["digest_candidates"] == []
    assert job.run(FOREVER, second.cursor).counts == {"candidates": 0}


def test_the_cursor_gives_every_tag_a_turn(brain, clock):
    for tag in "abcdef":
        for i in range(10):
            write(brain, clock, f"{tag} {i}", (tag,))
    brain.digests.compress = lambda scope, request_id: seen.append(scope.label) or d_outcome(scope)
    seen: list[str] = []
    job = CompressionJob(brain.digests, brain.digests.read_model, brain.team.every_workspace, clock)
    cursor = ""
    for _ in range(3):
        cursor = job.run(FOREVER, cursor).cursor
    assert seen == list("abcd") + list("efab") + list("cdef")


def d_outcome(scope):
    from second_brain.app.insights.digest import Outcome

    return Outcome(scope, 0)
