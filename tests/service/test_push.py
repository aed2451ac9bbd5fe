"""The push sender and subscriptions over an in-memory log, with a fake push gateway: what is sent to whom, once
per anchor time, and what the log keeps of it."""

import json

import pytest

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.maintenance import MaintenanceRunner
from second_brain.app.memories.service import Context
from second_brain.app.reminders.jobs import PushReminders, run_now
from second_brain.app.reminders.push import RESULTS_SHOWN, PushReport, PushService
from second_brain.app.team.service import TeamService
from second_brain.domain import push
from second_brain.domain.errors import Forbidden, InvalidInput
from second_brain.domain.events import memory_stream
from second_brain.domain.identity import Identity, owner
from second_brain.domain.memory import Memory, fold
from second_brain.domain.team import MemberAdded, MemberSuspended
from second_brain.ports.read_model import EntryRow
from tests.support.memories import memory_service
from tests.support.push import PUBLIC_ADDRESS, FakeGateway, FakeResolver, p256dh

HOUR = 3600 * 1000
AUTH = "BTBZMqHH6r4Tts7J_aSIgg"


class LogReads:
    """The one read the sender makes, `anchored`, answered from the log itself."""

    def __init__(self, store: InMemoryEventStore) -> None:
        self.store = store

    def anchored(self, workspaces, before, after=None):
        streams = {e.stream_id for e in self.store.read_all(0, 100_000) if e.stream_id.startswith("memory-")}
        rows = [EntryRow.of(m) for m in (fold(self.store.read_stream(s), Memory(s.removeprefix("memory-")))
                                         for s in streams) if m.exists and not m.deprecated]
        return sorted((r for r in rows if r.workspace in workspaces and r.when_at is not None and r.when_at < before
                       and (after is None or r.when_at >= after)), key=lambda r: r.when_at)


@pytest.fixture
def world(clock):
    store = InMemoryEventStore()
    memories = memory_service(clock, store)
    team = TeamService(store, clock, owner("Ada"))
    gateway = FakeGateway()
    service = PushService(store, LogReads(store), clock, gateway, team, FakeResolver())
    return store, memories, team, gateway, service


def subscribe(service, ctx, endpoint, content_free=None):
    return service.subscribe(ctx, endpoint, p256dh(), AUTH, content_free)


def send(service) -> PushReport:
    report = PushReport()
    service.send_due(report)
    return report


def pushed(store, memory_id):
    return [e.event for e in store.read_stream(memory_stream(memory_id)) if isinstance(e.event, push.ReminderPushed)]


def test_a_due_anchor_reaches_each_device_once_and_again_after_a_snooze(world, clock, ctx):
    store, memories, _, gateway, service = world
    subscribe(service, ctx, "https://push.example/phone")
    subscribe(service, ctx, "https://push.example/laptop", content_free=True)
    memory = memories.capture(ctx, "Call the dentist about the crown", [], "api", anchor=(clock.now + HOUR, "due"))
    assert send(service).counts["sent"] == 0  # not due yet
    clock.advance(HOUR)

    first = send(service)
    assert (first.counts["due"], first.counts["reminders"], first.counts["sent"]) == (1, 1, 2)
    bodies = {endpoint: payload for endpoint, payload, _ in gateway.sent}
    assert bodies["https://push.example/phone"]["body"] == "Call the dentist about the crown"
    assert "dentist" not in json.dumps(bodies["https://push.example/laptop"])
    assert bodies["https://push.example/laptop"]["id"] == memory.id and gateway.sent[0][2] == 24 * 3600
    [note] = pushed(store, memory.id)
    assert note.when_at == clock.now and set(note.devices) == {push.device_id("https://push.example/phone"),
                                                               push.device_id("https://push.example/laptop")}

    again = send(service)
    assert (again.counts["sent"], again.counts["already_sent"], len(gateway.sent)) == (0, 1, 2)

    memories.snooze(ctx, memory.id, clock.now + HOUR)
    clock.advance(HOUR)
    assert send(service).counts["sent"] == 2 and len(pushed(store, memory.id)) == 2
    assert send(service).counts["sent"] == 0


def test_a_gone_device_is_unsubscribed_and_a_failing_one_is_tried_again_next_run(world, clock, ctx):
    store, memories, _, gateway, service = world
    for name in ("ok", "gone", "down"):
        subscribe(service, ctx, f"https://push.example/{name}")
    gateway.status = {"https://push.example/gone": 410, "https://push.example/down": 503}
    memory = memories.capture(ctx, "Renew the passport", [], "api", anchor=(clock.now + 1, "due"))
    clock.advance(1)

    report = send(service)
    assert {k: report.counts[k] for k in ("sent", "gone", "failed")} == {"sent": 1, "gone": 1, "failed": 1}
    assert report.errors == ["push.example: HTTP 503"]
    assert list(service.state().devices) == ["https://push.example/ok", "https://push.example/down"]
    assert [e.event.reason for e in store.read_stream(push.STREAM) if isinstance(e.event, push.PushUnsubscribed)] == [
        "gone"]
    assert pushed(store, memory.id)[0].devices == (push.device_id("https://push.example/ok"),)

    gateway.status = {}
    retry = send(service)
    assert retry.counts["sent"] == 1 and gateway.sent[-1][0] == "https://push.example/down"


def test_nothing_is_pushed_before_its_time_past_the_window_once_deprecated_cleared_or_forgotten(world, clock, ctx):
    store, memories, _, gateway, service = world
    subscribe(service, ctx, "https://push.example/phone")
    old = memories.capture(ctx, "Long overdue", [], "api", anchor=(clock.now + 1, "due"))
    clock.advance(push.DUE_WINDOW_MS + 2)
    later = memories.capture(ctx, "Next week", [], "api", anchor=(clock.now + 24 * HOUR, "event"))
    for text in ("deprecated", "cleared", "forgotten"):
        memory = memories.capture(ctx, f"Due but {text}", [], "api", anchor=(clock.now - 1, "due"))
        if text == "deprecated":
            memories.set_status(ctx, memory.id, "deprecated")
        elif text == "cleared":
            memories.clear_anchor(ctx, memory.id)
        else:
            memories.forget(ctx, memory.id)
    assert send(service).counts == dict.fromkeys(
        ("due", "reminders", "sent", "failed", "gone", "refused", "already_sent"), 0)
    assert gateway.sent == [] and not pushed(store, old.id) and not pushed(store, later.id)


def test_reminders_go_to_the_person_they_belong_to(world, clock, ctx):
    _, memories, team, gateway, service = world
    team._append(ctx, lambda t: [MemberAdded("m-1", "Bo", "", "member", "hash-1", ("company",)),
                                 MemberAdded("m-2", "Cy", "", "member", "hash-2", ("company",))])
    bo = Context(team.member_identity("hash-1"), "bo")
    cy = Context(team.member_identity("hash-2"), "cy")
    for who, endpoint in ((ctx, "https://push.example/ada"), (bo, "https://push.example/bo"),
                          (cy, "https://push.example/cy")):
        subscribe(service, who, endpoint)
    due = (clock.now + 1, "due")
    mine = memories.capture(bo, "Bo's own errand", [], "api", anchor=due)
    shared = memories.capture(bo, "Bo's team deadline", [], "api", anchor=due, workspace="company")
    adas = memories.capture(ctx, "Ada's company deadline", [], "api", anchor=due, workspace="company")
    clock.advance(1)
    send(service)
    assert sorted((endpoint, payload["id"]) for endpoint, payload, _ in gateway.sent) == sorted([
        ("https://push.example/bo", mine.id), ("https://push.example/bo", shared.id),
        ("https://push.example/ada", adas.id)])  # Cy reads both company memories but set neither

    team._append(ctx, lambda t: [MemberSuspended("m-1", True)])
    memories.snooze(bo, mine.id, clock.now + 1)
    clock.advance(1)
    assert send(service).counts["sent"] == 0  # a suspended member's devices wait


def test_the_key_pair_is_made_once_and_a_process_that_loses_the_race_takes_the_winners(clock, ctx):
    class RacingStore(InMemoryEventStore):
        """The rival process makes its key between this one's read and its append."""

        rival: PushService | None = None

        def append(self, events):
            if events[0].stream_id == push.STREAM and self.rival:
                rival, self.rival = self.rival, None
                rival.key_pair()
            return super().append(events)

    store = RacingStore()
    team = TeamService(store, clock, owner("Ada"))
    here, there = FakeGateway("here"), FakeGateway("there")
    mine = PushService(store, LogReads(store), clock, here, team, FakeResolver())
    store.rival = PushService(store, LogReads(store), clock, there, team, FakeResolver())
    assert mine.key_pair() == ("there-public-1", "there-private-1")  # its own lost: it read the winner's
    assert (here.keys_made, there.keys_made) == (1, 1)
    assert mine.public_key(ctx) == {"ok": True, "publicKey": "there-public-1"}
    assert [type(e.event) for e in store.read_stream(push.STREAM)] == [push.VapidKeyGenerated]
    fresh = PushService(store, LogReads(store), clock, FakeGateway("fresh"), team, FakeResolver())
    assert fresh.key_pair() == ("there-public-1", "there-private-1") and fresh.gateway.keys_made == 0


def test_unsubscribe_removes_only_the_callers_own_device(world, ctx):
    _, _, _, _, service = world
    member = Context(Identity("m-1", "Bo", "member", "personal-m-1"), "bo")
    assert subscribe(service, ctx, "https://push.example/phone")["changed"]
    assert service.unsubscribe(member, "https://push.example/phone") == {"ok": True, "removed": False}
    assert service.unsubscribe(ctx, "https://push.example/phone") == {"ok": True, "removed": True}
    assert service.unsubscribe(ctx, "https://push.example/phone") == {"ok": True, "removed": False}
    assert service.state().devices == {}


def test_run_now_and_test_are_for_admins_and_report_capped_per_device_results(world, clock, ctx):
    store, memories, _, gateway, service = world
    runner = MaintenanceRunner(store, clock, [PushReminders(service)])
    member = Context(Identity("m-1", "Bo", "member", "personal-m-1"), "bo")
    with pytest.raises(Forbidden):
        run_now(runner, member)
    with pytest.raises(Forbidden):
        service.test(member)
    for n in range(3):
        subscribe(service, ctx, f"https://push.example/{n}")
    for n in range(20):
        memories.capture(ctx, f"Errand number {n}", [], "api", anchor=(clock.now + 1, "due"))
    clock.advance(1)

    answer = run_now(runner, ctx)
    assert answer["counts"]["sent"] == 60 and answer["complete"] and len(answer["results"]) == RESULTS_SHOWN
    assert set(answer["results"][0]) == {"device", "host", "status", "result", "id"}
    assert runner.state("push").last["counts"]["sent"] == 60  # the run is summarised like any job's
    assert run_now(runner, ctx)["counts"]["sent"] == 0

    tested = service.test(ctx)
    assert tested["devices"] == 3 and tested["counts"]["sent"] == 3
    assert gateway.sent[-1][1]["type"] == "test"


def test_a_run_out_of_time_stops_cleanly_and_the_next_one_finishes(world, clock, ctx):
    _, memories, _, _, service = world
    subscribe(service, ctx, "https://push.example/phone")
    for n in range(3):
        memories.capture(ctx, f"Errand {n}", [], "api", anchor=(clock.now + 1, "due"))
    clock.advance(1)
    calls = iter([False, False, True])  # checked before each reminder and before each send: one send fits
    report = PushReport()
    service.send_due(report, lambda: next(calls, True))
    assert not report.complete and report.counts["sent"] == 1
    assert send(service).counts["sent"] == 2


@pytest.mark.parametrize(("endpoint", "addresses", "message"), [
    ("http://127.0.0.1:9001/2018-06-01/runtime/invocation/next", None, "https://"),  # Lambda's runtime API
    ("https://2130706433/internal-admin", None, "not an address on this machine"),
    ("https://0x7f000001/internal-admin", None, "not an address on this machine"),
    ("https://metadata.google.internal/computeMetadata/v1/", None, "not a name on this network"),
    ("https://127.0.0.1.nip.io/internal-admin", ["127.0.0.1"], "resolves to an address on this machine"),
    ("https://rebind.example/x", [PUBLIC_ADDRESS, "10.0.0.7"], "resolves to an address on this machine"),
    ("https://metadata.example/latest", ["169.254.169.254"], "resolves to an address on this machine"),
    ("https://v6.example/latest", ["fd00:ec2::254"], "resolves to an address on this machine"),
    ("https://nowhere.example/x", [], "does not resolve"),
])
def test_an_endpoint_inside_this_network_or_unresolvable_is_refused_and_nothing_is_stored(
        world, ctx, endpoint, addresses, message):
    store, _, _, _, service = world
    host = endpoint.split("/")[2]
    if addresses is not None:
        service.resolve.table[host] = addresses
    with pytest.raises(InvalidInput, match=message):
        subscribe(service, ctx, endpoint)
    assert store.read_stream(push.STREAM) == []


def test_the_host_is_resolved_again_at_send_time_and_a_device_now_inside_is_not_contacted(world, clock, ctx):
    """DNS rebinding: the host resolved to an internet address when it subscribed, to this machine an hour later."""
    store, memories, _, gateway, service = world
    subscribe(service, ctx, "https://push.example/phone")
    subscribe(service, ctx, "https://other.example/laptop")
    memory = memories.capture(ctx, "Renew the passport", [], "api", anchor=(clock.now + 1, "due"))
    clock.advance(1)
    service.resolve.table["push.example"] = ["127.0.0.1"]
    service.resolve.asked.clear()

    report = send(service)
    assert [endpoint for endpoint, _, _ in gateway.sent] == ["https://other.example/laptop"]
    assert {k: report.counts[k] for k in ("sent", "refused", "failed")} == {"sent": 1, "refused": 1, "failed": 0}
    assert "push.example" in service.resolve.asked  # at send time, not from what subscribe saw
    assert report.errors == ["push.example: refused, not a push service on the internet"]
    assert [r["result"] for r in report.results] == ["refused", "sent"]
    assert "https://push.example/phone" in service.state().devices  # kept: tried again, and checked again, next hour
    assert pushed(store, memory.id)[0].devices == (push.device_id("https://other.example/laptop"),)

    tested = service.test(ctx)  # the admin's test send checks the same way
    assert (tested["counts"]["refused"], tested["counts"]["sent"]) == (1, 1) and len(gateway.sent) == 2

    service.resolve.table["push.example"] = [PUBLIC_ADDRESS]
    assert send(service).counts["sent"] == 1 and gateway.sent[-1][0] == "https://push.example/phone"


def test_a_host_that_no_longer_resolves_is_not_contacted_and_tried_again_next_run(world, clock, ctx):
    _, memories, _, gateway, service = world
    subscribe(service, ctx, "https://push.example/phone")
    memories.capture(ctx, "Renew the passport", [], "api", anchor=(clock.now + 1, "due"))
    clock.advance(1)
    service.resolve.table["push.example"] = []
    report = send(service)
    assert (report.counts["failed"], report.counts["refused"], gateway.sent) == (1, 0, [])
    assert report.errors == ["push.example: unreachable"]
    service.resolve.table.pop("push.example")
    assert send(service).counts["sent"] == 1


def test_a_device_stored_before_the_rule_is_not_contacted(world, clock, ctx):
    """A loopback endpoint subscribed while plain http to loopback was accepted stays in the log: never POSTed to."""
    store, memories, _, gateway, service = world
    service._append(ctx, 0, [push.PushSubscribed("http://127.0.0.1:9001/internal-admin", p256dh(), AUTH)])
    memories.capture(ctx, "Renew the passport", [], "api", anchor=(clock.now + 1, "due"))
    clock.advance(1)
    service.resolve.table["127.0.0.1"] = ["127.0.0.1"]
    assert send(service).counts["refused"] == 1 and gateway.sent == []


def test_loopback_push_services_are_accepted_only_with_the_test_only_setting(clock, ctx):
    store = InMemoryEventStore()
    memories = memory_service(clock, store)
    team = TeamService(store, clock, owner("Ada"))
    resolver = FakeResolver({"127.0.0.1": ["127.0.0.1"], "10.0.0.1": ["10.0.0.1"]})
    strict = PushService(store, LogReads(store), clock, FakeGateway(), team, resolver)
    with pytest.raises(InvalidInput):
        subscribe(strict, ctx, "http://127.0.0.1:8123/push")
    loose = PushService(store, LogReads(store), clock, FakeGateway(), team, resolver, allow_loopback=True)
    assert subscribe(loose, ctx, "http://127.0.0.1:8123/push")["changed"]
    with pytest.raises(InvalidInput):  # loopback only: the rest of this network stays out
        subscribe(loose, ctx, "https://10.0.0.1/push")
    memories.capture(ctx, "Renew the passport", [], "api", anchor=(clock.now + 1, "due"))
    clock.advance(1)
    assert send(strict).counts["refused"] == 1 and strict.gateway.sent == []
    assert send(loose).counts["sent"] == 1 and loose.gateway.sent[0][0] == "http://127.0.0.1:8123/push"
