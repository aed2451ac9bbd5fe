"""Push reminders: the brain's VAPID key pair, each person's devices, and the sender that pushes due anchors.

Everything is an event. The key pair and the devices live on the one `push` stream (made and changed with the
stream's expected version, so two processes generating a key at once keep one); what was pushed is a
`ReminderPushed(when_at, devices)` on the memory's own stream, so the sender never sends one anchor to one device
twice, sends again once a snooze moves the anchor, and shows up in the memory's timeline. Delivery is at least
once: a run killed between a send and its record sends that one again next time.

An endpoint is a request any member can make the brain send, so its host is resolved when it subscribes and again
before every send, and the brain POSTs only to push services on the internet (domain/push.py says which addresses
those are; the gateway connects only to the addresses it checked itself).
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...domain import push
from ...domain import team as t
from ...domain.events import memory_stream
from ...domain.identity import Identity
from ...domain.memory import Memory, fold
from ...ports.clock import Clock
from ...ports.event_store import EventStore
from ...ports.push import UNREACHABLE, PushGateway
from ...ports.read_model import EntryReads
from ..handling import Context, envelopes, require_admin, retrying
from ..handling import system as system_context
from ..team.service import TeamService

TTL_SECONDS = 24 * 3600  # a push service keeps a reminder this long for a device that is offline
MAX_REMINDERS = 500  # memories one run pushes; the rest wait for the next run
RESULTS_SHOWN = 50  # per-device results a run reports (the counts cover all of them)
COUNTS = ("due", "reminders", "sent", "failed", "gone", "refused", "already_sent")
Resolve = Callable[[str], Sequence[str]]  # a host's addresses, every one getaddrinfo gives; OSError when it has none


@dataclass
class PushReport:
    """What one run of the sender did: counts, the first RESULTS_SHOWN per-device results, errors."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    results: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    complete: bool = True

    def add(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def record(self, device: push.Device, status: int, **extra: Any) -> str:
        result = push.outcome(status)
        error = (f"{device.host}: HTTP {status}" if status else f"{device.host}: unreachable") if (
            result == "failed") else ""
        return self._note(device, status, result, error, extra)

    def refuse(self, device: push.Device, **extra: Any) -> str:
        """Not contacted: its endpoint is not a push service on the internet (now)."""
        return self._note(device, UNREACHABLE, "refused", f"{device.host}: refused, not a push service on the "
                          "internet", extra)

    def _note(self, device: push.Device, status: int, result: str, error: str, extra: dict[str, Any]) -> str:
        self.add(result)
        if error and len(self.errors) < 5:
            self.errors.append(error)
        if len(self.results) < RESULTS_SHOWN:
            self.results.append({"device": device.id, "host": device.host, "status": status, "result": result,
                                 **extra})
        return result


class PushService:
    def __init__(self, store: EventStore, read_model: EntryReads, clock: Clock, gateway: PushGateway,
                 team: TeamService, resolve: Resolve, allow_loopback: bool = False,
                 window_ms: int = push.DUE_WINDOW_MS) -> None:
        self.store = store
        self.read_model = read_model
        self.clock = clock
        self.gateway = gateway
        self.team = team
        self.resolve = resolve
        self.allow_loopback = allow_loopback  # test-only: a push service on this machine's loopback
        self.window_ms = window_ms
        self._keys: tuple[str, str] | None = None  # the first key stays forever: kept once read

    def state(self) -> push.PushState:
        state = push.PushState()
        for envelope in self.store.read_stream(push.STREAM):
            state = push.evolve(state, envelope.event, envelope.actor, envelope.at)
        return state

    # -- keys and devices -------------------------------------------------------------------------------------------

    def key_pair(self) -> tuple[str, str]:
        """(public, private), made on first use; a process that loses the race to make it reads the winner's."""
        if self._keys is None:
            def attempt() -> tuple[str, str]:
                state = self.state()
                if state.public_key and state.private_key:
                    return state.public_key, state.private_key
                public, private = self.gateway.new_key_pair()
                self._append(_system("vapid"), state.version, [push.VapidKeyGenerated(public, private)])
                return public, private

            self._keys = retrying(attempt)
        return self._keys

    def public_key(self, ctx: Context) -> dict[str, Any]:
        return {"ok": True, "publicKey": self.key_pair()[0]}

    def subscribe(self, ctx: Context, endpoint: object, p256dh: object, auth: object,
                  content_free: object) -> dict[str, Any]:
        """Register (or replace) one device of the caller's."""
        actor = ctx.identity.actor_id
        registration = push.subscription(endpoint, p256dh, auth, content_free, self.allow_loopback)
        host = push.host_of(registration.endpoint)
        push.check_resolved(host, self._addresses(host), self.allow_loopback)

        def attempt() -> list[object]:
            state = self.state()
            events = push.subscribe(state, actor, registration)
            if events:
                self._append(ctx, state.version, events)
            return events

        events = retrying(attempt)
        return {"ok": True, "device": push.device_id(registration.endpoint),
                "content_free": registration.content_free, "changed": bool(events)}

    def unsubscribe(self, ctx: Context, endpoint: object) -> dict[str, Any]:
        """Remove one of the caller's devices; `removed` false when the caller had no such device."""
        target = push.check_unsubscribe(endpoint)

        def attempt() -> bool:
            state = self.state()
            device = state.devices.get(target)
            if device is None or device.actor != ctx.identity.actor_id:
                return False
            self._append(ctx, state.version, [push.PushUnsubscribed(target, "unsubscribed")])
            return True

        return {"ok": True, "removed": retrying(attempt)}

    # -- sending ----------------------------------------------------------------------------------------------------

    def test(self, ctx: Context) -> dict[str, Any]:
        """A fixed notification to each of the caller's devices (admin only), and what each push service said."""
        require_admin(ctx)
        report = PushReport(counts={"sent": 0, "failed": 0, "gone": 0, "refused": 0})
        private = self.key_pair()[1]
        devices = self.state().of(ctx.identity.actor_id)
        for device in devices:
            if self._deliver(device, _json(push.TEST_NOTIFICATION), 60, private, report) == "gone":
                self._gone(device)
        return {"ok": True, "devices": len(devices), "counts": report.counts, "results": report.results}

    def send_due(self, report: PushReport, expired: Callable[[], bool] = lambda: False) -> None:
        """Push every anchor that is due now to the devices of the person it belongs to, once per anchor time."""
        state = self.state()
        if not state.devices:
            return
        now = self.clock.now_ms()
        private = self.key_pair()[1]
        team = self.team.state()
        devices = dict(state.devices)  # a device found gone leaves this run at once
        pushed = 0
        for actor in dict.fromkeys(d.actor for d in state.devices.values()):
            identity = self._identity(actor, team)
            if identity is None:  # suspended or removed: their devices wait (or go with them)
                continue
            for row in self.read_model.anchored(identity.readable, now + 1, after=now - self.window_ms):
                if push.recipient(row.workspace, row.actor) != actor:
                    continue  # a teammate's company reminder
                if expired() or pushed >= MAX_REMINDERS:
                    report.complete = False
                    return
                pushed += self._push_one(row.id, actor, devices, private, now, report, expired)

    def _push_one(self, memory_id: str, actor: str, devices: dict[str, push.Device], private: str, now: int,
                  report: PushReport, expired: Callable[[], bool]) -> int:
        """Push one memory's anchor to the devices it has not reached; 1 if any was tried."""
        history = self.store.read_stream(memory_stream(memory_id))
        memory = fold(history, Memory(memory_id))  # the log, not the read model, decides
        if (not memory.exists or memory.when_at is None or push.recipient(memory.workspace, memory.actor) != actor
                or not push.due(memory.when_at, memory.deprecated, now, self.window_ms)):
            return 0
        done = push.pushed_to([e.event for e in history], memory.when_at)
        own = [d for d in devices.values() if d.actor == actor]
        targets = [d for d in own if d.id not in done]
        if not own:  # every device of theirs turned out gone earlier in this run
            return 0
        if not targets:
            report.add("already_sent")
            return 0
        report.add("due")
        delivered = []
        for device in targets:
            if expired():  # each send may wait seconds: the budget is checked before every one
                report.complete = False
                break
            payload = push.reminder(memory.id, memory.content, memory.when_at, memory.when_kind, device.content_free)
            result = self._deliver(device, _json(payload), TTL_SECONDS, private, report,
                                   topic=memory.id.replace("-", ""), id=memory.id, workspace=memory.workspace)
            if result == "sent":
                delivered.append(device.id)
            elif result == "gone":
                self._gone(device)
                devices.pop(device.endpoint, None)
        if delivered:
            self._record(memory, tuple(delivered), now)
            report.add("reminders")
        return 1

    def _deliver(self, device: push.Device, payload: bytes, ttl: int, private: str, report: PushReport,
                 topic: str = "", **extra: Any) -> str:
        """Send one message, unless the device's host no longer resolves (failed: tried next run) or now resolves
        inside this network (refused: not contacted; the device stays, and is checked again next run)."""
        addresses = self._addresses(device.host)
        if addresses and not push.allowed(device.endpoint, addresses, self.allow_loopback):
            return report.refuse(device, **extra)
        status = self.gateway.send(device, payload, ttl, private, topic=topic) if addresses else UNREACHABLE
        return report.record(device, status, **extra)

    def _addresses(self, host: str) -> Sequence[str]:
        try:
            return self.resolve(host)
        except (OSError, UnicodeError):  # UnicodeError: a label IDNA refuses (longer than 63 characters)
            return ()

    def _record(self, memory: Memory, delivered: tuple[str, ...], now: int) -> None:
        stream = memory_stream(memory.id)
        event = push.ReminderPushed(memory.when_at or 0, delivered)

        def attempt() -> None:
            current = fold(self.store.read_stream(stream), Memory(memory.id))
            if current.exists:  # forgotten meanwhile: nothing to note
                self.store.append(envelopes(_system(memory.id), stream, current.version, [event], current.workspace,
                                            now))

        retrying(attempt)

    def _gone(self, device: push.Device) -> None:
        """Its push service said the subscription no longer exists: unsubscribe it (unless it was replaced)."""
        def attempt() -> None:
            state = self.state()
            if state.devices.get(device.endpoint) == device:
                self._append(_system("gone"), state.version, [push.PushUnsubscribed(device.endpoint, "gone")])

        retrying(attempt)

    def _identity(self, actor: str, team: t.Team) -> Identity | None:
        if actor == self.team.owner.actor_id:
            return self.team.owner_identity(team)
        member = team.members.get(actor)
        if member is None or member.removed or member.suspended:
            return None
        return t.identity_of(member, team)

    def _append(self, ctx: Context, version: int, events: list[object]) -> None:
        self.store.append(envelopes(ctx, push.STREAM, version, events, "", self.clock.now_ms()))


def visible(results: list[dict[str, Any]], identity: Identity) -> list[dict[str, Any]]:
    """Per-device results as the caller may see them: a memory's id only when the caller can read it."""
    return [{k: v for k, v in r.items() if k != "workspace" and (k != "id" or r.get("workspace") in identity.readable)}
            for r in results]


def _system(purpose: str) -> Context:
    return system_context("", f"push-{purpose}")



def _json(payload: dict[str, Any]) -> bytes:
    """The payload as sent: one aes128gcm record holds 4,096 bytes, and the excerpt keeps it under 1,000."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
