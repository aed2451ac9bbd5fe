"""Home's "Worth re-reading" (`/brief`'s resurface) never offers what a newer memory replaced, on both backends: not
a retired memory, not one a person's link superseded, not a near-copy of a replaced memory (issue 41, item 4)."""

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.domain.brief import DAY_MS, day_seed
from tests.support.brains import make_brain

START = 1_767_225_600_000
LATER = START + 40 * DAY_MS  # every memory below is old enough to resurface by then
WS = ("personal-owner",)


@pytest.fixture(params=["sqlite", "opensearch"])
def brain(request, tmp_path, clock):
    brain = make_brain(request.param, request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


def at(brain, ctx, clock, when, content, canonical=True):
    clock.now = when
    outcome = brain.memories.capture(ctx, content, [], "api")
    if canonical:
        brain.memories.set_status(ctx, outcome.id, "canonical")
    if brain.indexer is not None:
        brain.indexer.run_once(100)
    return outcome


def offered(brain, ctx, clock, days=30):
    """The memory the brief offers to re-read on each of `days` days."""
    picks = []
    for day in range(days):
        clock.now = LATER + day * DAY_MS
        pick = ops.brief(brain, ctx)["resurface"]
        picks.append(pick["id"] if pick else None)
    return picks


def test_a_near_copy_of_a_replaced_memory_is_never_worth_re_reading(brain, ctx, clock):
    at(brain, ctx, clock, START, "The minimum we charge for enterprise deals is $8k", canonical=False)
    copy = at(brain, ctx, clock, START + 60_000, "Minimum charge for enterprise deals: $8k per year").id
    new = at(brain, ctx, clock, START + 120_000, "The minimum we charge for enterprise deals is now $10k",
             canonical=False)
    assert new.verdict.action == "contradiction"
    assert reads_pick(brain, copy)  # the copy is in the pool: only the brief's own check keeps it out
    assert set(offered(brain, ctx, clock, days=5)) == {None}  # the only candidate is outdated
    other = at(brain, ctx, clock, START + 180_000, "Saxophone lessons are on Tuesday evenings").id
    assert set(offered(brain, ctx, clock)) == {other}


def test_a_memory_a_person_superseded_is_never_worth_re_reading(brain, ctx, clock):
    older = at(brain, ctx, clock, START, "Quarterly planning happens in the Lisbon office").id
    newer = at(brain, ctx, clock, START + 60_000, "Glacier hiking boots need new laces", canonical=False).id
    brain.links.link(ctx, newer, older, "supersedes")
    assert set(offered(brain, ctx, clock, days=5)) == {None}
    brain.links.unlink(ctx, newer, older, "supersedes")
    assert set(offered(brain, ctx, clock, days=5)) == {older}


def test_resurface_passes_over_the_memories_it_is_told_to(brain, ctx, clock):
    pool = {at(brain, ctx, clock, START + n, f"Pumpkin soup recipe number {n}").id for n in range(4)}
    reads = brain.brief.read_model
    first = reads.resurface(WS, LATER, day_seed(7))
    second = reads.resurface(WS, LATER, day_seed(7), [first.id])
    assert {first.id, second.id} <= pool and first.id != second.id
    assert reads.resurface(WS, LATER, day_seed(7), [first.id]) == second  # the same pick after the same skips
    assert reads.resurface(WS, LATER, day_seed(7), sorted(pool)) is None


def reads_pick(brain, memory_id):
    reads = brain.brief.read_model
    return any(getattr(reads.resurface(WS, LATER, day_seed(day)), "id", None) == memory_id for day in range(5))
