"""Forget means forget for what the brain wrote from a memory's words: forgetting a memory erases, in the same
append, the digest it was rolled into (its other sources are released: full weight, digestible again) and the
patterns drawn from it; forgetting a digest releases its sources."""


from dataclasses import replace

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app.handling import Context
from second_brain.bootstrap import build
from second_brain.domain.events import MemoryReleased, memory_stream
from second_brain.settings import Settings
from tests.service.test_digest import OWNER, owner_digest, state, write
from tests.service.test_patterns import FOREVER, TLS, job, proposed
from tests.service.test_patterns import write as write_note

DAY = 24 * 3600 * 1000


@pytest.fixture
def brain(tmp_path, clock):
    brain = build(Settings(data_dir=tmp_path / "brain", embedder="none"), clock=clock)
    yield brain
    brain.close()


def raw_log(brain) -> str:
    """Every byte of the database file, as text: what a forget must leave nothing of."""
    brain.db.purge_wal()
    return (brain.settings.data_dir / "brain.sqlite3").read_bytes().decode("latin-1")


def digest_of(brain, clock, n=12) -> tuple[str, list[str]]:
    ids = [write(brain, clock, f"Standup {i}: Priya shipped build SECRET-{4100 + i}.") for i in range(n)]
    outcome = owner_digest(brain)
    return outcome.entry_id, ids


def test_forgetting_a_source_erases_its_digest_and_releases_the_others(brain, clock):
    digest_id, ids = digest_of(brain, clock)
    assert "SECRET-4105" in state(brain, digest_id).content
    assert all("rolled-up" in state(brain, i).tags for i in ids)

    brain.memories.forget(OWNER, ids[5])

    assert not state(brain, digest_id).exists and not state(brain, ids[5]).exists
    others = [i for i in ids if i != ids[5]]
    assert all(state(brain, i).exists and "rolled-up" not in state(brain, i).tags for i in others)
    released = [e for e in brain.store.read_stream(memory_stream(others[0])) if isinstance(e.event, MemoryReleased)]
    assert [(e.event.digest_id, e.actor) for e in released] == [(digest_id, "system")]
    assert "SECRET-4105" not in raw_log(brain)  # neither in the source's stream nor in the digest's copy
    assert "SECRET-4104" in raw_log(brain)  # the others keep their own words
    again = owner_digest(brain)  # released: a new digest may roll them up again
    assert again.source_count == len(others) and again.entry_id


def test_forgetting_a_digest_releases_its_sources(brain, clock):
    digest_id, ids = digest_of(brain, clock)
    brain.memories.forget(OWNER, digest_id)
    assert all(state(brain, i).exists and "rolled-up" not in state(brain, i).tags for i in ids)
    assert brain.db.connection().execute("SELECT COUNT(*) FROM tag_counts WHERE tag = 'rolled-up' AND n > 0"
                                         ).fetchone()[0] == 0


def test_forgetting_a_member_of_a_pattern_erases_the_pattern(tmp_path, clock):
    brain = build(Settings(data_dir=tmp_path / "patterns"), clock=clock, embedder=FakeEmbedder())
    try:
        first = write_note(brain, clock, TLS[0])
        write_note(brain, clock, TLS[1], step=45 * DAY)
        assert job(brain, clock).run(FOREVER, "").counts["proposed"] == 1
        [record] = proposed(brain)
        assert "debugging the nginx" in state(brain, record.pattern_id).content
        brain.memories.forget(Context(brain.team.owner_identity(), "t"), first)
        assert not state(brain, record.pattern_id).exists
        brain.db.purge_wal()
        stored = (tmp_path / "patterns" / "brain.sqlite3").read_bytes()
        assert TLS[0].encode() not in stored
    finally:
        brain.close()


def test_an_unrelated_forget_touches_nothing_else(brain, clock):
    digest_id, _ = digest_of(brain, clock)
    lone = write(brain, clock, "A note on nothing in particular", tags=("misc",))
    head = brain.store.head()
    brain.memories.forget(OWNER, lone)
    assert brain.store.head() == head + 1 and state(brain, digest_id).exists


class ForgettingModel:
    """A model that, while the patterns job waits on it, has someone forget one of the members."""

    def __init__(self, forget) -> None:
        self.forget = forget

    def complete(self, messages, max_tokens=0):
        self.forget()
        return "A recurring certificate chore"


def test_a_member_forgotten_while_its_pattern_is_being_written_stops_the_pattern(tmp_path, clock):
    brain = build(Settings(data_dir=tmp_path / "race"), clock=clock, embedder=FakeEmbedder())
    try:
        first = write_note(brain, clock, TLS[0])
        write_note(brain, clock, TLS[1], step=45 * DAY)
        forgetting = ForgettingModel(lambda: brain.memories.forget(Context(brain.team.owner_identity(), "t"), first))
        patterns_job = job(brain, clock, model=forgetting)
        result = patterns_job.run(FOREVER, "")
        assert result.counts.get("raced", 0) >= 1 and "proposed" not in result.counts
        assert proposed(brain) == []
        brain.db.purge_wal()
        assert TLS[0].encode() not in (tmp_path / "race" / "brain.sqlite3").read_bytes()
    finally:
        brain.close()


def test_a_memory_is_drawn_into_at_most_three_patterns(tmp_path, clock):
    from second_brain.domain import patterns as p

    member = p.Member("m", "x" * 200, (), "api", "personal-owner", 0)
    assert p.may_seed(member) and not p.may_seed(replace(member, patterns=p.MAX_PATTERNS_PER_MEMORY))


def test_what_the_brain_wrote_is_never_rolled_into_a_digest():
    from second_brain.domain.memory import Memory, digest_candidate

    confirmed_pattern = Memory("p", exists=True, content="Recurring: …", tags=("kind:semantic", "status:canonical",
                                                                            "standup"), source="system", importance=3)
    assert not digest_candidate(confirmed_pattern)
    assert digest_candidate(replace(confirmed_pattern, source="api"))


def test_taking_a_memory_back_from_the_team_erases_the_team_digest_of_its_words(brain, clock):
    from second_brain.app.insights.digest import scopes_for
    from second_brain.domain.identity import Identity

    admin = Context(Identity("owner", "Ada", "admin", "personal-owner", ("company",), owner=True), "req")
    ids = [write(brain, clock, f"Standup {i}: Priya shipped build SECRET-{4100 + i}.", ("standup",), "company")
           for i in range(12)]
    outcome = brain.digests.for_caller(admin, scopes_for(admin.identity, ("standup",), "standup", False))
    assert outcome.entry_id and state(brain, outcome.entry_id).workspace == "company"
    assert brain.memories.share(admin, ids[3], "personal-owner", brain.team.note_share,
                                lambda actor: "personal-owner") == "unshared"
    assert not state(brain, outcome.entry_id).exists  # the team no longer reads SECRET-4103
    assert all("rolled-up" not in state(brain, i).tags for i in ids)
    assert state(brain, ids[3]).workspace == "personal-owner"


def test_the_timelines_say_what_was_rolled_up_released_and_drawn_into(brain, clock):
    digest_id, ids = digest_of(brain, clock)
    brain.memories.forget(OWNER, digest_id)
    owner_view = Context(brain.team.owner_identity(), "t")
    events = [(t["event"], t["payload"]) for t in brain.queries.entry(owner_view, ids[0])["timeline"]]
    # the digest is forgotten: its id shows as null, as any reference to a memory the caller cannot read
    assert events[-2:] == [("rolled_up", {"digest_id": None}), ("released", {"digest_id": None})]
