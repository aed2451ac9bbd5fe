"""`entry_revisions` on a real SQLite brain: capture, append, update, a merge, each with its text, its diff from the
revision before and the tags and status it left; bookkeeping events are no revision; an id the caller cannot read
(another member's, a forgotten one) is not found, like one that never existed."""

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.app.handling import Context, envelopes
from second_brain.bootstrap import build
from second_brain.domain.errors import NotFound
from second_brain.domain.events import MemoryRevised, TagsChanged, memory_stream
from second_brain.domain.team import token_hash
from second_brain.settings import Settings

STEP_MS = 60_000


@pytest.fixture
def brain(tmp_path, clock):
    brain = build(Settings(data_dir=tmp_path / "brain"), clock=clock, embedder=FakeEmbedder())
    yield brain
    brain.close()


@pytest.fixture
def owner(brain) -> Context:
    return Context(brain.team.owner_identity(), "revisions")


def merge(brain, ctx: Context, memory_id: str, content: str, tags: tuple[str, ...], at: int) -> None:
    """What a capture's merge verdict appends to the matched memory: the folded text and its tags, one batch."""
    version = len(brain.store.read_stream(memory_stream(memory_id)))
    brain.store.append(envelopes(Context(ctx.identity, "merge-request"), memory_stream(memory_id), version,
                                 [MemoryRevised(content, "merged"), TagsChanged(tags)], "personal-owner", at))


def test_each_content_change_is_a_revision_with_its_diff_tags_and_status(brain, owner, clock):
    memory_id = ops.capture(brain, owner, "Kettle is in the left cupboard.", tags=["home"])["id"]
    clock.advance(STEP_MS)
    ops.append(brain, owner, memory_id, "Moved to the right cupboard.")
    clock.advance(STEP_MS)
    ops.set_status(brain, owner, memory_id, "draft")  # no revision: the text did not change
    ops.get(brain, owner, memory_id)  # an open: no revision either
    clock.advance(STEP_MS)
    ops.update(brain, owner, memory_id, "Kettle is in the right cupboard.\nMugs are above it.", tags=["home"])
    clock.advance(STEP_MS)
    merge(brain, owner, memory_id, "Kettle is in the right cupboard.\nMugs are above it, teabags beside.",
          ("home", "kitchen"), clock.now_ms())

    revisions = ops.entry_revisions(brain, owner, memory_id)

    assert [r["version"] for r in revisions] == [1, 2, 3, 4]
    assert [r["reason"] for r in revisions] == ["captured", "appended", "updated", "merged"]
    assert [r["at"] for r in revisions] == [clock.now_ms() - 4 * STEP_MS + d * STEP_MS for d in (0, 1, 3, 4)]
    assert {r["actor_name"] for r in revisions} == {owner.identity.name}
    first, appended, updated, merged = revisions
    assert first["content"] == "Kettle is in the left cupboard." and first["diff"] is None
    assert "home" in first["tags"] and first["status"] is None
    assert appended["content"].startswith("Kettle is in the left cupboard.")
    assert "Moved to the right cupboard." in appended["content"]
    assert appended["diff"].splitlines()[-1] == "+[Update Jan 1, 2026]: Moved to the right cupboard."
    assert appended["diff"].startswith("--- v1\n+++ v2\n")
    assert updated["status"] == "draft"  # set between the append and the update: the update kept it
    assert "-Kettle is in the left cupboard." in updated["diff"].splitlines()
    assert "+Mugs are above it." in updated["diff"].splitlines()
    assert merged["diff"].splitlines()[-2:] == ["-Mugs are above it.", "+Mugs are above it, teabags beside."]
    assert "kitchen" in merged["tags"]  # the merge's tag change came in the same batch: it belongs to it
    assert merged["content"] == brain.queries.entry(owner, memory_id)["content"]


def test_an_id_the_caller_cannot_read_has_no_revisions(brain, owner, clock):
    bob = Context(brain.team.member_identity(token_hash(brain.team.add_member(owner, "Bob")["token"])), "bob")
    private = ops.capture(brain, bob, "Bob's private plan SECRET-5521", workspace="personal")["id"]
    forgotten = ops.capture(brain, owner, "Gone soon SECRET-5522")["id"]
    ops.append(brain, owner, forgotten, "more")
    ops.forget(brain, owner, forgotten)
    for memory_id in (private, forgotten, "no-such-id"):
        with pytest.raises(NotFound, match="No entry found with ID"):
            ops.entry_revisions(brain, owner, memory_id)
    assert [r["reason"] for r in ops.entry_revisions(brain, bob, private)] == ["captured"]
    ops.share(brain, bob, private, "company")
    assert ops.entry_revisions(brain, owner, private)[0]["content"] == "Bob's private plan SECRET-5521"


def test_a_members_drafts_before_they_shared_stay_theirs(brain, owner, clock):
    bob = Context(brain.team.member_identity(token_hash(brain.team.add_member(owner, "Bob")["token"])), "bob")
    memory_id = ops.capture(brain, bob, "Plan: undercut Acme, SECRET-7710", workspace="personal")["id"]
    clock.advance(1000)
    ops.update(brain, bob, memory_id, "Plan: compete with Acme on service")
    clock.advance(1000)
    ops.share(brain, bob, memory_id, "company")
    clock.advance(1000)
    ops.append(brain, bob, memory_id, "Agreed with the team.")
    seen = ops.entry_revisions(brain, owner, memory_id)
    assert [(r["version"], r["reason"]) for r in seen] == [(1, "shared"), (2, "appended")]
    assert seen[0]["content"] == "Plan: compete with Acme on service" and seen[0]["diff"] is None
    assert "SECRET-7710" not in str(seen)
    assert [r["reason"] for r in ops.entry_revisions(brain, bob, memory_id)] == [
        "captured", "updated", "appended"]  # the author sees their whole history
