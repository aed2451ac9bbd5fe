"""What compression reads (`digest_pool`, `digest_volumes`), and what a digest's roll-ups do to the rows and the
/stats counts, the same on SQLite and OpenSearch."""

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app.handling import Context, envelopes
from second_brain.app.insights.digest import scopes_for
from second_brain.domain.events import (
    ContradictionWon,
    MemoryCaptured,
    MemoryClassified,
    MemoryRecalled,
    memory_stream,
)
from second_brain.domain.identity import Identity, owner
from second_brain.ports.read_model import Filters, WorkspaceTagCount
from tests.support.brains import make_brain

DAY = 24 * 3600 * 1000
OWNER = Context(owner("Ada"), "req")
_ids = iter(range(1, 1_000_000))


@pytest.fixture(params=["sqlite", "opensearch"])
def brain(request, tmp_path, clock):
    brain = make_brain(request.param, request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


def write(brain, clock, tags, workspace="personal-owner", *later, actor="owner") -> str:
    clock.advance(1000)
    memory_id = f"c{next(_ids):05d}"
    who = Context(Identity(actor, actor, "admin", workspace), "req")
    brain.store.append(envelopes(who, memory_stream(memory_id), 0, [
        MemoryCaptured(f"note {memory_id}", tuple(tags), "api", workspace),
        MemoryClassified(2, "episodic", "", False, "rules"), *later], workspace, clock.now_ms()))
    return memory_id


def topics(volumes):
    return [v for v in volumes if not v.tag.startswith("kind:")]  # every tag is counted; the caller picks topics


def test_the_pool_is_the_eligible_memories_in_scope_newest_first(brain, clock):
    eligible = [write(brain, clock, ("standup",)) for _ in range(4)]
    old_once = write(brain, clock, ("standup",), "personal-owner", MemoryRecalled("d"))
    write(brain, clock, ("standup",), "personal-owner", MemoryClassified(4, "episodic", "", False, "rules"))
    write(brain, clock, ("standup",), "personal-owner", ContradictionWon("x", "r"))
    write(brain, clock, ("standup",), "personal-owner", MemoryRecalled("a"), MemoryRecalled("b"))
    write(brain, clock, ("standup", "rolled-up"))
    retro = write(brain, clock, ("retro",))
    write(brain, clock, ("standup",), "company")
    theirs = write(brain, clock, ("standup",), "company", actor="bob")
    now = clock.now_ms()
    pool = brain.digests.read_model.digest_pool(Filters(("personal-owner",), any_tags=("standup",)), now, 10)
    assert [r.id for r in pool] == eligible[::-1]
    later = now + 61 * DAY  # recalled once is fair game after 60 days; any of several tags (a project's)
    assert [r.id for r in brain.digests.read_model.digest_pool(
        Filters(("personal-owner",), any_tags=("standup", "retro")), later, 3)] == [retro, old_once, eligible[-1]]
    assert [r.id for r in brain.digests.read_model.digest_pool(
        Filters(("company",), any_tags=("standup",), actor="bob"), now, 10)] == [theirs]


def test_volumes_per_workspace_and_tag_from_ten_and_what_a_digest_does_to_them(brain, clock):
    for _ in range(11):
        write(brain, clock, ("standup", "work"))
    for _ in range(10):
        write(brain, clock, ("standup",), "company")
    for _ in range(9):
        write(brain, clock, ("retro",))
    write(brain, clock, ("standup",), "personal-owner", MemoryRecalled("d"))  # recalled once lately: not yet
    reads = brain.digests.read_model
    workspaces = ("personal-owner", "company")
    assert topics(reads.digest_volumes(workspaces, clock.now_ms())) == [
        WorkspaceTagCount("personal-owner", "standup", 11), WorkspaceTagCount("personal-owner", "work", 11),
        WorkspaceTagCount("company", "standup", 10)]
    assert topics(reads.digest_volumes(("company",), clock.now_ms())) == [WorkspaceTagCount("company", "standup", 10)]

    outcome = brain.digests.for_caller(OWNER, scopes_for(OWNER.identity, ("standup",), "standup", False))
    assert outcome.source_count == 11
    rows = reads.recent(Filters(("personal-owner",), tag="standup"), 20)
    assert sum("rolled-up" in r.tags for r in rows) == 11 and rows[0].id == outcome.entry_id
    assert rows[0].tags[:2] == ("synthesized", "standup") and rows[0].source == "system"
    assert topics(reads.digest_volumes(workspaces, clock.now_ms())) == [WorkspaceTagCount("company", "standup", 10)]
    assert brain.queries.stats(OWNER)["digest_candidates"] == []  # the owner's stats read their personal layer
    team_owner = Context(Identity("owner", "Ada", "admin", "personal-owner", ("company",), owner=True), "req")
    assert brain.queries.stats(team_owner)["digest_candidates"] == [{"tag": "standup", "count": 10}]
