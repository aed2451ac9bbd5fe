"""What a copy of the log keeps of a text after its memory is forgotten (issue 46, item 2): the claim stream that
makes an identical capture a repeat is named by a keyed hash of the text (the brain's secret, `content.key`
beside the database), and a forget erases which memory held the text."""

import hashlib
import stat

import pytest

from second_brain.app.handling import Context
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
