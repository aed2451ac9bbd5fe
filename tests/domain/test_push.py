"""The push stream's fold and the rules of a subscription, the due window, recipients and payloads."""

import pytest

from second_brain.domain import push
from second_brain.domain.errors import InvalidInput

# RFC 8291 Appendix A's user agent key and auth secret: a real P-256 point and a 16-byte secret.
P256DH = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
AUTH = "BTBZMqHH6r4Tts7J_aSIgg"
HOUR = 3600 * 1000


def fold(*steps: tuple[object, str]) -> push.PushState:
    state = push.PushState()
    for at, (event, actor) in enumerate(steps):
        state = push.evolve(state, event, actor, at)
    return state


def subscribed(endpoint: str, content_free: bool = False) -> push.PushSubscribed:
    return push.PushSubscribed(endpoint, P256DH, AUTH, content_free)


def test_the_fold_keeps_the_first_key_and_each_endpoint_once_with_its_latest_registration():
    state = fold((push.VapidKeyGenerated("pub-1", "priv-1"), "system"),
                 (push.VapidKeyGenerated("pub-2", "priv-2"), "system"),  # a loser's key, appended anyway: ignored
                 (subscribed("https://push.example/a"), "owner"),
                 (subscribed("https://push.example/b"), "owner"),
                 (subscribed("https://push.example/a", content_free=True), "m-1"),  # the device changed hands
                 (push.PushUnsubscribed("https://push.example/b", "gone"), "system"))
    assert (state.public_key, state.private_key, state.version) == ("pub-1", "priv-1", 6)
    assert list(state.devices) == ["https://push.example/a"]
    device = state.devices["https://push.example/a"]
    assert (device.actor, device.content_free, device.subscribed_at) == ("m-1", True, 4)
    assert state.of("owner") == [] and state.of("m-1") == [device]


def test_subscribing_again_unchanged_appends_nothing_and_a_changed_registration_replaces_it():
    state = fold((subscribed("https://push.example/a"), "owner"))
    assert push.subscribe(state, "owner", "https://push.example/a", P256DH, AUTH, None) == []
    assert push.subscribe(state, "owner", " https://push.example/a ", P256DH, AUTH, True) == [
        subscribed("https://push.example/a", content_free=True)]


def test_a_person_past_the_device_cap_loses_their_oldest_device_not_anyone_elses():
    steps = [(subscribed(f"https://push.example/{n}"), "owner") for n in range(push.MAX_DEVICES)]
    state = fold((subscribed("https://push.example/other"), "m-1"), *steps)
    events = push.subscribe(state, "owner", "https://push.example/new", P256DH, AUTH, False)
    assert events == [push.PushUnsubscribed("https://push.example/0", "replaced"), subscribed("https://push.example/new")]


@pytest.mark.parametrize("endpoint", [
    "https://fcm.googleapis.com/fcm/send/abc", "https://web.push.apple.com/QGuQ", "http://127.0.0.1:8123/push",
    "http://localhost/push", "http://127.3.4.5/x"])
def test_endpoints_are_https_or_http_on_loopback(endpoint):
    assert push.check_endpoint(endpoint) == endpoint


@pytest.mark.parametrize("endpoint", [
    None, "", 42, "http://push.example/a", "http://10.0.0.1/a", "ftp://push.example/a", "https://", "push.example/a",
    "https://user:pw@push.example/a", "https://[::1]/a", "https://push.example:99999/a", "https://push.example/a b",
    "https://push.example/" + "x" * push.MAX_ENDPOINT_CHARS,
    # the brain POSTs there every hour: never to its own network (SSRF), e.g. the cloud metadata service
    "https://169.254.169.254/latest/meta-data", "https://10.0.0.1/a", "https://192.168.1.20/a", "https://127.0.0.1/a"])
def test_other_endpoints_are_refused(endpoint):
    with pytest.raises(InvalidInput, match="endpoint"):
        push.check_endpoint(endpoint)


def test_keys_must_be_base64url_of_the_right_size_and_p256dh_a_point_on_the_curve():
    assert push.check_key(P256DH + "=", "p256dh", 65) == P256DH  # padding and standard base64 are read too
    assert push.check_key(AUTH.replace("_", "/"), "auth", 16) == AUTH
    off_curve = push.encode(b"\x04" + bytes(range(64)))
    for value, size, message in [(None, 16, "Missing"), ("!!", 16, "base64url"), (AUTH, 65, "65 bytes"),
                                 (off_curve, 65, "P-256"), (push.encode(b"\x03" + bytes(64)), 65, "P-256"),
                                 ("A" * 500, 16, "base64url")]:
        with pytest.raises(InvalidInput, match=message):
            push.check_key(value, "subscription.keys.x", size)
    with pytest.raises(InvalidInput, match="content_free"):
        push.subscribe(push.PushState(), "owner", "https://push.example/a", P256DH, AUTH, "yes")


def test_an_anchor_is_due_from_its_time_until_the_window_has_passed():
    now = 100 * 24 * HOUR
    assert push.due(now, False, now) and push.due(now - push.DUE_WINDOW_MS, False, now)
    assert not push.due(now + 1, False, now)  # not yet
    assert not push.due(now - push.DUE_WINDOW_MS - 1, False, now)  # the brain was off for longer than the window
    assert not push.due(now, True, now) and not push.due(None, False, now)  # deprecated, or no anchor


def test_what_was_pushed_is_read_per_anchor_time():
    events = [object(), push.ReminderPushed(5, ("a", "b")), push.ReminderPushed(7, ("a",)), push.ReminderPushed(5, ("c",))]
    assert push.pushed_to(events, 5) == {"a", "b", "c"}
    assert push.pushed_to(events, 7) == {"a"} and push.pushed_to(events, 9) == set()


def test_a_personal_reminder_goes_to_the_workspace_owner_and_a_company_one_to_its_author():
    assert push.recipient("personal-owner", "system") == "owner"
    assert push.recipient("personal-m-1a2b", "m-1a2b") == "m-1a2b"
    assert push.recipient("company", "m-1a2b") == "m-1a2b"
    assert push.recipient("company-9f", "owner") == "owner"


def test_a_content_free_payload_carries_no_text_of_the_memory():
    text = "Call the dentist about the crown, ref 4471 " * 10
    full = push.reminder("id-1", text, 5, "due", content_free=False)
    bare = push.reminder("id-1", text, 5, None, content_free=True)
    assert full["body"].startswith("Call the dentist") and full["body"].endswith("…")
    assert len(full["body"]) <= push.EXCERPT_CHARS
    assert (full["title"], bare["title"], bare["when_kind"]) == ("Due now", "Reminder", "wake")
    assert "dentist" not in str(bare) and "4471" not in str(bare)
    assert bare["id"] == "id-1" and bare["when_at"] == 5


def test_statuses_become_outcomes():
    assert [push.outcome(s) for s in (201, 202, 404, 410, 0, 400, 413, 429, 500)] == [
        "sent", "sent", "gone", "gone", "failed", "failed", "failed", "failed", "failed"]
    assert push.device_id("https://push.example/a") == push.device_id("https://push.example/a") != push.device_id("b")
