"""The push stream's fold and the rules of a subscription (which endpoints and addresses the brain may POST to),
the due window, recipients and payloads."""

import ipaddress
import socket

import pytest

from second_brain.domain import push
from second_brain.domain.errors import AlreadyExists, InvalidInput

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


def subscribe(state: push.PushState, actor: str, endpoint: str, content_free: object = None) -> list[object]:
    return push.subscribe(state, actor, push.subscription(endpoint, P256DH, AUTH, content_free))


def test_subscribing_again_unchanged_appends_nothing_and_a_changed_registration_replaces_it():
    state = fold((subscribed("https://push.example/a"), "owner"))
    assert subscribe(state, "owner", "https://push.example/a") == []
    assert subscribe(state, "owner", " https://push.example/a ", True) == [
        subscribed("https://push.example/a", content_free=True)]


def test_another_person_s_device_is_not_moved_to_the_caller():
    """Issue 62: re-subscribing an endpoint another member registered is refused; it stays theirs."""
    state = fold((subscribed("https://push.example/a"), "m-1"))
    with pytest.raises(AlreadyExists, match="another person"):
        subscribe(state, "m-2", "https://push.example/a")
    assert subscribe(state, "m-1", "https://push.example/a", True) == [
        subscribed("https://push.example/a", content_free=True)]  # its own person may change it


def test_a_person_past_the_device_cap_loses_their_oldest_device_not_anyone_elses():
    steps = [(subscribed(f"https://push.example/{n}"), "owner") for n in range(push.MAX_DEVICES)]
    state = fold((subscribed("https://push.example/other"), "m-1"), *steps)
    events = subscribe(state, "owner", "https://push.example/new", False)
    assert events == [push.PushUnsubscribed("https://push.example/0", "replaced"), subscribed("https://push.example/new")]


@pytest.mark.parametrize("endpoint", [
    "https://fcm.googleapis.com/fcm/send/abc", "https://web.push.apple.com/QGuQ",
    "https://updates.push.services.mozilla.com/wpush/v2/gAAAA", "https://8.8.8.8/x", "https://push.example.:8443/x"])
def test_endpoints_are_https_urls_of_push_services_on_the_internet(endpoint):
    assert push.check_endpoint(endpoint) == endpoint


# The brain POSTs to a device's endpoint every hour, so an endpoint is a request any member can make the brain
# send (SSRF): never to this machine, its network or the cloud's metadata service, in whatever form the address is
# written (inet_aton, which getaddrinfo and so httpx use, reads 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 as
# 127.0.0.1).
HOSTILE = [
    "http://127.0.0.1:8123/internal-admin", "http://localhost/push", "http://127.3.4.5/x", "http://[::1]:9001/x",
    "https://127.0.0.1/a", "https://2130706433/", "https://0x7f000001/", "https://0177.0.0.1/", "https://127.1/",
    "https://0x7f.1/", "https://127.0.0.1./a", "https://localhost/a", "https://LOCALHOST./a", "https://app.localhost/a",
    "https://169.254.169.254/latest/meta-data", "https://2852039166/latest/meta-data", "https://169.254.170.2/v2",
    "https://metadata.google.internal/computeMetadata/v1/", "https://metadata/computeMetadata/v1/",
    "https://instance-data/latest/meta-data", "https://metadata.goog/x", "https://printer.local/a",
    "https://10.0.0.1/a", "https://192.168.1.20/a", "https://172.16.0.1/a", "https://100.64.0.1/a",
    "https://100.100.100.200/latest/meta-data", "https://192.0.0.192/opc/v1", "https://224.0.0.1/a",
    "https://0.0.0.0/a", "https://0/a", "https://240.0.0.1/a", "https://255.255.255.255/a",
    "https://[::ffff:127.0.0.1]/a", "https://[fd00:ec2::254]/latest", "https://1.2.3.4.5/a", "https://256.0.0.1/a",
    "https://\uff11\uff12\uff17.0.0.1/a",  # fullwidth digits: IDNA maps them to 127.0.0.1
]


@pytest.mark.parametrize("endpoint", HOSTILE)
def test_endpoints_on_this_machine_its_network_or_a_metadata_service_are_refused(endpoint):
    with pytest.raises(InvalidInput, match="^subscription.endpoint "):
        push.check_endpoint(endpoint)


@pytest.mark.parametrize("endpoint", [
    None, "", 42, "http://push.example/a", "ftp://push.example/a", "https://", "push.example/a",
    "https://user:pw@push.example/a", "https://push.example:99999/a", "https://push.example/a b",
    "https://push.example/" + "x" * push.MAX_ENDPOINT_CHARS, "https://push%2Eexample/a", "https://push_example/a"])
def test_other_endpoints_are_refused(endpoint):
    with pytest.raises(InvalidInput, match="endpoint"):
        push.check_endpoint(endpoint)


@pytest.mark.parametrize("endpoint", [
    "http://127.0.0.1:8123/push", "http://localhost/push", "http://127.3.4.5/x", "https://127.0.0.1:8443/push"])
def test_the_test_only_setting_lets_a_push_service_on_this_machines_loopback_in(endpoint):
    with pytest.raises(InvalidInput):
        push.check_endpoint(endpoint)
    assert push.check_endpoint(endpoint, allow_loopback=True) == endpoint


@pytest.mark.parametrize("endpoint", [
    "http://push.example/a", "http://10.0.0.1/a", "https://10.0.0.1/a", "https://169.254.169.254/latest",
    "https://metadata.google.internal/x", "https://2852039166/x"])
def test_the_test_only_setting_lets_nothing_else_in(endpoint):
    with pytest.raises(InvalidInput, match="^subscription.endpoint "):
        push.check_endpoint(endpoint, allow_loopback=True)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0x7f.1",
                                  "0X7F.0.0.01", "10.1", "1.2.3", "4294967295", "0", "8.8.8.8", "0xff.0xff.0xff.0xff"])
def test_every_form_of_an_ipv4_address_inet_aton_reads_is_read_as_that_address(host):
    assert push.ipv4(host) == ipaddress.IPv4Address(socket.inet_aton(host))


@pytest.mark.parametrize("host", ["push.example", "1.2.3.4.5", "256.0.0.1", "4294967296", "08.0.0.1", "0x", "1..2",
                                  "1.2.3.0x100", "", "1e3", "+1", "\u0661.0.0.1"])
def test_a_host_that_is_not_an_ipv4_number_is_not_read_as_one(host):
    assert push.ipv4(host) is None


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
    "169.254.170.2", "100.64.0.1", "100.100.100.200", "192.0.0.192", "224.0.0.251", "239.1.1.1", "0.0.0.0",
    "0.1.2.3", "240.0.0.1", "255.255.255.255", "198.18.0.1", "192.0.2.1", "::1", "::", "fc00::1", "fd00:ec2::254",
    "fe80::1", "fe80::1%eth0", "ff02::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1",
    "::127.0.0.1", "2002:7f00:1::1", "2002:a9fe:a9fe::", "64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "2001:db8::1",
    "2001::1", "not-an-address"])
def test_an_address_on_this_machine_its_network_or_a_metadata_service_is_not_reachable(address):
    assert not push.reachable(address)


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "142.250.74.42", "2606:4700:4700::1111",
                                     "2a00:1450:4001:82b::200a", "::ffff:8.8.8.8", "64:ff9b::808:808"])
def test_an_internet_address_is_reachable(address):
    assert push.reachable(address)


def test_loopback_is_reachable_with_the_test_only_setting_and_nothing_else_is():
    assert push.reachable("127.0.0.1", allow_loopback=True) and push.reachable("::1", allow_loopback=True)
    assert not any(push.reachable(a, allow_loopback=True) for a in ("10.0.0.1", "169.254.169.254", "fd00:ec2::254"))


def test_an_endpoint_may_be_pushed_to_only_when_its_host_resolved_and_every_address_is_reachable():
    endpoint = "https://push.example/send/abc"
    assert push.allowed(endpoint, ["93.184.215.14", "2606:4700:4700::1111"])
    assert not push.allowed(endpoint, [])  # it did not resolve
    assert not push.allowed(endpoint, ["93.184.215.14", "127.0.0.1"])  # one address inside is enough to refuse
    assert not push.allowed("https://127.0.0.1.nip.io/x", ["127.0.0.1"])  # a public name for a loopback address
    assert not push.allowed("http://127.0.0.1:9/x", ["127.0.0.1"])  # stored before the rule: refused now
    assert push.allowed("http://127.0.0.1:9/x", ["127.0.0.1"], allow_loopback=True)


def test_a_host_that_does_not_resolve_or_resolves_inside_is_refused_in_one_sentence():
    with pytest.raises(InvalidInput, match="^subscription.endpoint's host push.example does not resolve"):
        push.check_resolved("push.example", [])
    with pytest.raises(InvalidInput, match="^subscription.endpoint's host 127.0.0.1.nip.io resolves to an address"):
        push.check_resolved("127.0.0.1.nip.io", ["127.0.0.1"])
    push.check_resolved("push.example", ["93.184.215.14"])


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
        push.subscription("https://push.example/a", P256DH, AUTH, "yes")


def test_an_anchor_is_due_from_its_time_until_the_window_has_passed():
    now = 100 * 24 * HOUR
    assert push.due(now, False, now) and push.due(now - push.DUE_WINDOW_MS, False, now)
    assert not push.due(now + 1, False, now)  # not yet
    assert not push.due(now - push.DUE_WINDOW_MS - 1, False, now)  # the brain was off for longer than the window
    assert not push.due(now, True, now) and not push.due(None, False, now)  # deprecated, or no anchor


def test_what_was_pushed_is_read_per_anchor_time():
    events = [object(), push.ReminderPushed(5, ("a", "b")), push.ReminderPushed(7, ("a",)),
              push.ReminderPushed(5, ("c",))]
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
