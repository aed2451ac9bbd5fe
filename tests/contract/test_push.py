"""Push reminders on the real read models (SQLite and OpenSearch): the due window `anchored` reads, and the hourly
job through the runner, with a fake push gateway."""

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app.memories.service import Context
from second_brain.bootstrap import build
from second_brain.domain import push
from second_brain.domain.errors import InvalidInput
from second_brain.settings import Settings
from tests.support.brains import make_brain
from tests.support.push import FakeGateway, FakeResolver, p256dh

HOUR = 3600 * 1000
WS = ("personal-owner",)


@pytest.fixture(params=["sqlite", "opensearch"])
def brain(request, tmp_path, clock):
    brain = make_brain(request.param, request, tmp_path, clock, FakeEmbedder())
    brain.push.gateway = FakeGateway()
    brain.push.resolve = FakeResolver()  # no DNS in tests: push.example is an internet address here
    yield brain
    brain.close()


def test_anchored_reads_a_window_of_anchor_times(brain, clock):
    ctx = Context(brain.owner, "test")
    start = clock.now
    ids = [brain.memories.capture(ctx, f"errand {n}", [], "api", anchor=(start + n * HOUR, "due")).id
           for n in range(4)]
    brain.memories.capture(ctx, "no anchor", [], "api")
    window = brain.push.read_model.anchored(WS, start + 3 * HOUR, after=start + HOUR)
    assert [r.id for r in window] == ids[1:3]  # after is inclusive, before exclusive, soonest first
    assert [r.id for r in brain.push.read_model.anchored(WS, start + 3 * HOUR)] == ids[:3]
    assert brain.push.read_model.anchored(("personal-other",), start + 9 * HOUR, after=start) == []


def test_the_hourly_job_pushes_each_due_anchor_once_and_again_after_a_snooze(brain, clock):
    ctx = Context(brain.owner, "test")
    brain.push.subscribe(ctx, "https://push.example/phone", p256dh(), "BTBZMqHH6r4Tts7J_aSIgg", None)
    memory = brain.memories.capture(ctx, "Pick up the keys from Dana", [], "api", anchor=(clock.now + HOUR, "due"))
    too_old = brain.memories.capture(ctx, "Ancient errand", [], "api", anchor=(clock.now + 1, "due"))
    clock.advance(push.DUE_WINDOW_MS + 2)
    brain.memories.snooze(ctx, memory.id, clock.now + HOUR)  # inside the window once due; too_old stays outside
    clock.advance(HOUR)

    [summary] = brain.maintenance.run(["push"])
    assert summary["counts"]["sent"] == 1 and summary["complete"] and summary["errors"] == []
    assert [(endpoint, payload["id"]) for endpoint, payload, _ in brain.push.gateway.sent] == [
        ("https://push.example/phone", memory.id)]
    assert brain.maintenance.run(["push"])[0]["counts"]["sent"] == 0
    timeline = brain.queries.entry(ctx, memory.id)["timeline"]
    assert timeline[-1]["event"] == "reminder_pushed" and timeline[-1]["payload"]["devices"] == 1

    brain.memories.snooze(ctx, memory.id, clock.now + HOUR)
    clock.advance(HOUR)
    assert brain.maintenance.run(["push"])[0]["counts"]["sent"] == 1
    assert too_old.id not in {payload["id"] for _, payload, _ in brain.push.gateway.sent}
    assert "push" in brain.maintenance.names("hourly")


@pytest.mark.parametrize("allow", [False, True])
def test_the_composition_root_lets_loopback_in_only_with_the_test_only_setting(tmp_path, clock, allow):
    brain = build(Settings(data_dir=tmp_path / "brain", push_allow_loopback=allow), clock=clock,
                  embedder=FakeEmbedder())
    try:
        ctx = Context(brain.owner, "test")
        endpoint = "http://127.0.0.1:9/push"  # resolved for real: an IP literal needs no DNS
        if allow:
            assert brain.push.subscribe(ctx, endpoint, p256dh(), "BTBZMqHH6r4Tts7J_aSIgg", None)["changed"]
        else:
            with pytest.raises(InvalidInput, match="https://"):
                brain.push.subscribe(ctx, endpoint, p256dh(), "BTBZMqHH6r4Tts7J_aSIgg", None)
        with pytest.raises(InvalidInput, match="not an address on this machine"):
            brain.push.subscribe(ctx, "https://169.254.169.254/latest", p256dh(), "BTBZMqHH6r4Tts7J_aSIgg", None)
    finally:
        brain.close()
