"""What a copy of the log keeps of a text after its memory is forgotten (issue 46, item 2): the claim stream that
makes an identical capture a repeat is named by a keyed hash of the text (the brain's secret, `content.key`
beside the database), and a forget erases which memory held the text."""

import hashlib
import stat

import pytest

from second_brain.app.handling import Context, envelopes
from second_brain.bootstrap import build
from second_brain.domain.capture import content_stream
from second_brain.domain.events import ContentClaimed, ContentReleased, Erased
from second_brain.settings import Settings

TEXT = "The vault combination is SECRET-LYNX-2290"


@pytest.fixture
def brain(tmp_path, clock):
    brain = build(Settings(data_dir=tmp_path / "brain", embedder="none"), clock=clock)
    yield brain
    brain.close()


def test_a_forget_erases_which_memory_held_a_text_and_frees_it(brain):
    owner = Context(brain.team.owner_identity(), "owner")
    first = brain.memories.capture(owner, TEXT, [], "api")
    assert brain.memories.capture(owner, TEXT, [], "api").verdict.action == "block"  # the claim holds

    secret = brain.settings.data_dir / "content.key"
    assert len(secret.read_bytes()) == 32 and stat.S_IMODE(secret.stat().st_mode) == 0o600
    stream = content_stream(owner.identity.personal_workspace, TEXT, secret.read_bytes())
    assert [e.event for e in brain.store.read_stream(stream)] == [ContentClaimed(first.id)]
    unkeyed = hashlib.sha256(TEXT.lower().encode()).hexdigest()[:40]
    brain.db.purge_wal()
    assert unkeyed not in (brain.settings.data_dir / "brain.sqlite3").read_bytes().decode("latin-1")

    brain.memories.forget(owner, first.id)
    claims = brain.store.read_stream(stream)
    assert isinstance(claims[0].event, Erased) and claims[-1].event == ContentReleased()

    again = brain.memories.capture(owner, TEXT, [], "api")
    assert again.verdict.action == "store" and again.id != first.id
    assert brain.store.read_stream(stream)[-1].event == ContentClaimed(again.id)


def test_the_secret_is_kept_across_starts(tmp_path, clock):
    for _ in range(2):
        brain = build(Settings(data_dir=tmp_path / "brain", embedder="none"), clock=clock)
        owner = Context(brain.team.owner_identity(), "owner")
        outcome = brain.memories.capture(owner, TEXT, [], "api")
        brain.close()
    assert outcome.verdict.action == "block"  # the second start found the first one's claim


def test_a_forget_erases_a_claim_another_memory_took_over_and_keeps_the_others(brain):
    """M held the text, was edited, and M2 stored the same text again: forgetting M erases M's claim, and M2's
    claim is made again after the tombstone, so M2 still blocks a third copy."""
    owner = Context(brain.team.owner_identity(), "owner")
    first = brain.memories.capture(owner, TEXT, [], "api").id
    brain.memories.update(owner, first, "The vault combination changed last week", None)
    second = brain.memories.capture(owner, TEXT, [], "api")
    assert second.verdict.action == "store" and second.id != first
    stream = content_stream(owner.identity.personal_workspace, TEXT,
                            (brain.settings.data_dir / "content.key").read_bytes())

    brain.memories.forget(owner, first)
    events = [e.event for e in brain.store.read_stream(stream)]
    assert all(isinstance(e, Erased) for e in events[:-2])
    assert events[-2:] == [ContentReleased(), ContentClaimed(second.id)]
    assert first not in str(brain.store.read_stream(stream))
    assert brain.memories.capture(owner, TEXT, [], "api").verdict.action == "block"


def test_a_brain_from_before_its_secret_still_finds_and_releases_its_plain_claims(brain):
    """Claims written before the brain had `content.key` are named by a plain hash: a repeat of such a text is
    still blocked, and a forget erases those claims too."""
    owner = Context(brain.team.owner_identity(), "owner")
    ws = owner.identity.personal_workspace
    held = brain.memories.capture(owner, TEXT, [], "api").id
    keyed = content_stream(ws, TEXT, (brain.settings.data_dir / "content.key").read_bytes())
    plain = content_stream(ws, TEXT)
    brain.store.append(envelopes(owner, keyed, 1, [ContentReleased()], ws, 1))  # as if the claim were made
    brain.store.append(envelopes(owner, plain, 0, [ContentClaimed(held)], ws, 1))  # before the secret existed
    assert brain.memories.capture(owner, TEXT, [], "api").verdict.action == "block"
    brain.memories.forget(owner, held)
    assert [e.event for e in brain.store.read_stream(plain)][-1] == ContentReleased()
