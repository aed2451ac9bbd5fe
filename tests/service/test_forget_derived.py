"""Forget means forget for what the brain wrote from a memory's words: forgetting a memory erases, in the same
append, the digest it was rolled into (its other sources are released: full weight, digestible again) and the
patterns drawn from it; forgetting a digest releases its sources."""


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
