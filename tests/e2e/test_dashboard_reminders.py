"""The Reminders view in a real browser: due and overdue items snoozed to a chosen time and cleared, open loops paged
and resolved, and push: the service worker served for the whole app, subscribing this device (the browser's push
service stubbed, the brain's sender real, against a push service on this machine), content-free, a test send, and
every refusal (no push support, notifications blocked, no keys on the server) said in a sentence."""

import json
import re
from datetime import UTC, date, datetime, timedelta
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import expect

from .browser import TOKEN_KEY, Dashboard
from .conftest import Server
from .test_dashboard import StagePrefix
from .test_push import Browser as Device
from .test_push import PushService, push_service, server  # noqa: F401  (fixtures: its server may push to loopback)


def capture(api: httpx.Client, content: str, **fields) -> str:
    answer = api.post("/capture", json={"content": content, **fields}).json()
    assert answer["ok"], answer
    return answer["id"]


def just_now() -> str:
    """A moment a minute ago, with its offset: due now, so the push sender sends it."""
    return (datetime.now(UTC) - timedelta(minutes=1)).isoformat(timespec="seconds")


UNDO_WAIT = 10_000  # ms: past any hold these tests set (app.js undoSeconds: 6 s unless the browser chose another)


def due_ids(api: httpx.Client) -> tuple[list[str], list[str]]:
    due = api.get("/due").json()
    return [i["id"] for i in due["overdue"]], [i["id"] for i in due["upcoming"]]


def test_the_service_worker_is_served_as_javascript_for_the_whole_app(server: Server):  # noqa: F811  (the fixture)
    worker = httpx.get(server.url + "/dashboard/sw.js")
    assert worker.status_code == 200
    assert worker.headers["content-type"].startswith("text/javascript")
    assert worker.headers["service-worker-allowed"] == "/"
    assert "showNotification" in worker.text and "notificationclick" in worker.text
    assert "service-worker-allowed" not in httpx.get(server.url + "/dashboard/app.js").headers


def test_snooze_moves_an_overdue_item_and_clear_removes_one(dashboard: Dashboard, api):
    rent = capture(api, "Pay the rent for the flat", when="2020-01-01", when_kind="due")
    call = capture(api, "Call Bob about the boat", when=(date.today() + timedelta(days=1)).isoformat() + "T10:00",
                   when_kind="event")
    assert due_ids(api) == ([rent], [call])
    page = dashboard.open("reminders")
    dashboard.undo_after(1)  # nothing here is undone: the holds are only waited out
    due = page.locator("#due")
    expect(page.locator("#agenda-counts")).to_have_text("Overdue: 1 · Today: 0 · This week: 1 · Later: 0")
    rent_card = due.locator(f"[data-id='{rent}']")
    expect(rent_card).to_contain_text("Pay the rent for the flat")
    expect(rent_card.locator(".error")).to_contain_text(re.compile(r"Due · \d+ days overdue"))

    # Snooze the rent to a chosen date and time, three days out: it moves from Overdue to This week.
    target = (date.today() + timedelta(days=3)).isoformat()
    rent_card.get_by_text("Other time…").click()
    rent_card.get_by_label("Snooze until").fill(target)
    rent_card.get_by_label("Time (optional)").fill("10:30")
    rent_card.get_by_role("button", name="Snooze", exact=True).click()
    expect(page.locator(".toast")).to_contain_text(re.compile(r"Snoozed until .*10:30"))  # the person's clock
    expect(rent_card).to_be_hidden()  # at once; the request waits out the Undo time
    expect(page.locator("#agenda-counts")).to_have_text("Overdue: 0 · Today: 0 · This week: 2 · Later: 0",
                                                        timeout=UNDO_WAIT)
    expect(due.locator(f"[data-id='{rent}'] .warn")).to_contain_text("10:30")
    expected = page.evaluate(f"new Date('{target}T10:30').getTime()")  # the browser's local time
    # ...which is not the server's (UTC): the browser runs in Los Angeles.
    assert expected - datetime.fromisoformat(f"{target}T10:30").replace(tzinfo=UTC).timestamp() * 1000 in (
        7 * 3600_000, 8 * 3600_000)
    entry = api.get("/entry", params={"id": rent}).json()["entry"]
    assert entry["when_at"] == expected
    assert due_ids(api) == ([], [call])

    # A time in the past is refused, and the refusal is said.
    call_card = due.locator(f"[data-id='{call}']")
    call_card.get_by_text("Other time…").click()
    call_card.get_by_label("Snooze until").fill("2020-01-01")
    call_card.get_by_role("button", name="Snooze", exact=True).click()
    expect(page.locator(".toast.error")).to_contain_text("until must be in the future")

    call_card.get_by_role("button", name="Clear").click()
    expect(call_card).to_be_hidden()
    expect(page.locator("#agenda-counts")).to_have_text("Overdue: 0 · Today: 0 · This week: 1 · Later: 0",
                                                        timeout=UNDO_WAIT)
    assert api.get("/entry", params={"id": call}).json()["entry"]["when_at"] is None


def test_the_agenda_shows_every_reminder_of_the_year_in_words_with_presets(dashboard: Dashboard, api):
    """Issue 45 saw next Friday's reminder, an SSL renewal in 3 days, the tax and passport dates nowhere: /due reads
    48 hours. The agenda reads a year ahead (GET /due?days=, ours) and says when in words."""
    now = datetime.now(UTC)
    later_today = capture(api, "Standup notes to send", when=(now + timedelta(hours=1)).isoformat(timespec="seconds"))
    ssl = capture(api, "Renew the SSL certificate", when=(now + timedelta(days=3)).isoformat(timespec="seconds"),
                  when_kind="due")
    passport = capture(api, "Passport expires", when=(now + timedelta(days=200)).isoformat(timespec="seconds"),
                       when_kind="due")
    page = dashboard.open("reminders")
    dashboard.undo_after(1)
    counts = page.locator("#agenda-counts")
    # "Today" by the browser's calendar (Los Angeles): an hour from now may already be tomorrow there.
    local_day = page.evaluate("(ms) => new Date(ms).toDateString() === new Date().toDateString()",
                              int((now + timedelta(hours=1)).timestamp() * 1000))
    expect(counts).to_have_text(f"Overdue: 0 · Today: {int(local_day)} · This week: {2 - int(local_day)} · Later: 1")
    expect(page.locator("#agenda-later")).to_be_visible()
    expect(page.locator(f"[data-id='{passport}'] .warn")).to_contain_text("Due · ")
    expect(page.locator(f"[data-id='{later_today}'] .warn")).to_contain_text(
        re.compile("today at" if local_day else "tomorrow at"))
    expect(page.locator(f"[data-id='{ssl}'] .warn time")).to_have_text(re.compile(r"^[A-Z][a-z]+day( at .*)?$"))
    dashboard.screenshot("reminders-agenda")

    page.locator(f"[data-id='{ssl}']").get_by_role("button", name="Tomorrow 9:00").click()
    expect(page.locator(".toast")).to_contain_text("Snoozed until")
    expect(page.locator(".toast.held")).to_have_count(0, timeout=UNDO_WAIT)
    tomorrow_nine = page.evaluate("(() => { const d = new Date(); d.setDate(d.getDate() + 1); d.setHours(9, 0, 0, 0);"
                                  " return d.getTime(); })()")
    assert api.get("/entry", params={"id": ssl}).json()["entry"]["when_at"] == tomorrow_nine
    expect(page.locator(f"[data-id='{ssl}'] .warn time")).to_have_text(re.compile(r"^tomorrow at 09:00"))
    assert dashboard.accessibility() == []
    assert not dashboard.errors, dashboard.errors


def test_open_loops_are_paged_and_resolved(dashboard: Dashboard, api):
    ids = [capture(api, f"I need to renew permit number {n} with the council", tags=["task"]) for n in range(27)]
    page = dashboard.open("reminders")
    loops = page.locator("#loops")
    expect(loops.get_by_role("heading", level=2)).to_have_text("Open loops (27)")
    expect(loops.locator(".loop-item")).to_have_count(25)
    expect(loops.locator(".pager")).to_contain_text("1–25 of 27")
    loops.get_by_role("button", name="Next →").click()
    expect(loops.locator(".loop-item")).to_have_count(2)
    expect(loops.locator(".pager")).to_contain_text("26–27 of 27")
    on_second = loops.locator(".loop-item").evaluate_all("cards => cards.map(c => c.dataset.id)")

    # Resolving both on the last page steps back to the first; the API agrees.
    loops.locator(f"[data-id='{on_second[0]}']").get_by_role("button", name="Done").click()
    expect(loops.get_by_role("heading", level=2)).to_have_text("Open loops (26)")
    loops.locator(f"[data-id='{on_second[1]}']").get_by_role("button", name="Not a task").click()
    expect(loops.get_by_role("heading", level=2)).to_have_text("Open loops (25)")
    expect(loops.locator(".loop-item")).to_have_count(25)
    expect(loops.locator(".pager")).to_have_count(0)
    open_now = {loop["id"] for loop in api.get("/loops", params={"limit": 100}).json()["loops"]}
    assert open_now == set(ids) - set(on_second)
    assert "task" not in api.get("/entry", params={"id": on_second[1]}).json()["entry"]["tags"]


def test_notify_this_device_says_what_happened_in_a_sentence(dashboard: Dashboard):
    page = dashboard.page
    posted: list[str] = []
    page.on("request", lambda request: request.method == "POST" and posted.append(urlsplit(request.url).path))
    dashboard.open("reminders")
    status = page.locator("#push-status")
    expect(status).to_have_text("This device is not subscribed.")
    page.get_by_role("button", name="Notify this device").click()
    # Headless chromium denies notifications to a page that was not granted them: that refusal, said as such.
    expect(status).to_have_text("Notifications are blocked for this site, so this device cannot be notified. Allow "
                                "them in the browser's site settings and try again.")
    expect(status).to_have_class("warn")
    expect(page.get_by_role("button", name="Notify this device")).to_be_enabled()
    assert "/push/subscribe" not in posted


def test_no_push_support_and_no_keys_are_said(dashboard: Dashboard):
    page = dashboard.page
    page.route("**/push/vapid-public-key", lambda route: route.fulfill(
        status=503, content_type="application/json",
        body=json.dumps({"ok": False, "error": "Push keys are not configured on this deployment"})))
    dashboard.open("reminders")
    page.get_by_role("button", name="Notify this device").click()
    expect(page.locator("#push-status")).to_have_text(
        "Push notifications are not available on this server: Push keys are not configured on this deployment")
    expect(page.locator("#push-status")).to_have_class("error")

    page.add_init_script("delete window.PushManager")
    page.reload()
    dashboard.open("reminders")
    expect(page.locator("#push-status")).to_have_text(
        "This browser has no push support, so it cannot get notifications.")
    expect(page.get_by_role("button", name="Notify this device")).to_be_disabled()


STUB = """
  // The browser's push service, stubbed: a subscription to the push service this test runs on this machine, kept
  // across reloads (as the browser keeps a real one) in sessionStorage.
  const KEPT = "__stubSubscription";
  const fake = { endpoint: %(endpoint)s, toJSON() { return { endpoint: this.endpoint, keys: %(keys)s }; },
    async unsubscribe() { sessionStorage.removeItem(KEPT); return true; } };
  PushManager.prototype.subscribe = async function (options) {
    window.__subscribeOptions = { userVisibleOnly: options.userVisibleOnly,
      key: Array.from(new Uint8Array(options.applicationServerKey)).length };
    sessionStorage.setItem(KEPT, "1");
    return fake;
  };
  PushManager.prototype.getSubscription = async function () { return sessionStorage.getItem(KEPT) ? fake : null; };
"""


@pytest.mark.parametrize("prefixed", [False, True], ids=["root", "under-a-path-prefix"])
def test_subscribe_content_free_test_send_and_unsubscribe(dashboard: Dashboard, api, prefixed: bool,
                                                          push_service: PushService):  # noqa: F811  (the fixture)
    """The whole push path, at the server's root and under API Gateway's stage (/Prod/), where the worker's scope is
    /Prod/ and every lookup of its registration must be relative to the page too."""
    device = Device(push_service.url + "/device-1")
    subscription = device.subscription()
    page = dashboard.page
    proxy = StagePrefix(dashboard.server.url) if prefixed else None
    try:
        origin = f"http://127.0.0.1:{proxy.server_address[1]}" if proxy else dashboard.server.url
        base = origin + ("/Prod/" if proxy else "/")
        page.context.grant_permissions(["notifications"], origin=origin)
        page.add_init_script(STUB % {"endpoint": json.dumps(subscription["endpoint"]),
                                     "keys": json.dumps(subscription["keys"])})
        posted: list[str] = []
        page.on("request", lambda request: request.method == "POST" and posted.append(urlsplit(request.url).path))
        page.goto(base)
        page.evaluate(f"localStorage.setItem('{TOKEN_KEY}', '{dashboard.server.token}')")  # this origin's own
        page.goto(base + "#/reminders")
        page.reload()
        expect(page.locator("#view-title")).to_have_text("Reminders")
        status = page.locator("#push-status")
        expect(status).to_have_text("This device is not subscribed.")
        page.get_by_label(re.compile("Content-free")).check()
        page.get_by_role("button", name="Notify this device").click()
        expect(status).to_have_text("This device will be notified when something is due, without the memory's "
                                    "text.")
        # The real service worker was registered for the page's folder (Service-Worker-Allowed: /).
        scope = page.evaluate("navigator.serviceWorker.getRegistration('./').then(r => r && r.scope)")
        assert scope == base
        assert page.evaluate("window.__subscribeOptions") == {"userVisibleOnly": True, "key": 65}
        expect(page.get_by_role("button", name="Stop notifying this device")).to_be_visible()

        # Coming back later, the view finds this device's subscription through the worker's registration.
        page.reload()
        expect(status).to_have_text("This device is subscribed.")
        expect(page.get_by_role("button", name="Stop notifying this device")).to_be_visible()

        # An admin's test send reaches the device, and the view lists what its push service answered.
        page.get_by_role("button", name="Send a test").click()
        results = page.locator("#push-results")
        expect(results).to_contain_text("Sent to 1 device: 1 delivered, 0 failed")
        expect(results.locator("li")).to_contain_text("127.0.0.1")
        expect(results.locator("li .ok")).to_have_text("sent")
        received = push_service.take()
        assert [path for path, _, _ in received] == ["/device-1"]
        assert device.read(received[0][2])["type"] == "test"

        # Content-free: a reminder reaches the device without the memory's text.
        capture(api, "Water the tomato plants on the balcony", when=just_now(), when_kind="due")
        assert api.post("/push/run").json()["counts"]["sent"] == 1
        (_, _, body), = push_service.take()
        assert device.read(body)["body"] == "Something in your Second Brain is due"

        # Content-free off: the subscription is replaced; the next reminder carries the memory's words.
        page.get_by_label(re.compile("Content-free")).uncheck()
        expect(status).to_have_text("Notifications on this device show the memory's opening words.")
        capture(api, "Feed the neighbour's cat tonight", when=just_now(), when_kind="due")
        assert api.post("/push/run").json()["counts"]["sent"] == 1
        (_, _, body), = push_service.take()
        assert "Feed the neighbour's cat" in device.read(body)["body"]

        page.get_by_role("button", name="Stop notifying this device").click()
        expect(status).to_have_text("This device will no longer be notified.")
        assert [path for path in posted if path.endswith("/push/unsubscribe")] == [
            ("/Prod" if proxy else "") + "/push/unsubscribe"]
        page.get_by_role("button", name="Send a test").click()
        expect(results).to_have_text("No device of yours is subscribed, so nothing was sent.")
        assert push_service.take() == []
    finally:
        if proxy:
            proxy.shutdown()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_reminders_is_accessible_in_light_and_dark(dashboard: Dashboard, api, scheme: str):
    capture(api, "Renew the passport", when="2020-01-01", when_kind="due")
    capture(api, "I should email the landlord", tags=["task"])
    page = dashboard.page
    page.emulate_media(color_scheme=scheme)
    dashboard.open("reminders")
    expect(page.locator(".due-item")).to_have_count(1)
    expect(page.locator(".loop-item")).to_have_count(1)
    expect(page.locator("#push-status")).to_have_text("This device is not subscribed.")
    assert dashboard.accessibility() == []
    if scheme == "light":
        dashboard.screenshot("reminders")
    else:
        page.set_viewport_size({"width": 390, "height": 800})
        dashboard.open("reminders")
        expect(page.locator(".due-item")).to_have_count(1)
        assert dashboard.accessibility() == []


def test_clear_and_snooze_can_be_undone_and_nothing_asks_through_a_browser_dialog(dashboard: Dashboard, api):
    bill = capture(api, "Pay the electricity bill", when="2020-01-01", when_kind="due")
    page = dashboard.open("reminders")
    dashboard.undo_after(3)
    page.on("dialog", lambda dialog: (_ for _ in ()).throw(AssertionError(f"a browser dialog: {dialog.message}")))
    card = page.locator(f"[data-id='{bill}']")
    card.get_by_role("button", name="Clear").click()
    expect(card).to_be_hidden()
    page.locator(".toast.held").get_by_role("button", name="Undo").click()
    expect(card).to_be_visible()
    expect(page.locator(".toast")).to_contain_text("Undone.")
    page.wait_for_timeout(3500)  # past the time it would have been sent
    assert due_ids(api) == ([bill], [])
    card.get_by_text("Other time…").click()
    card.get_by_role("button", name="In 3 hours").click()
    page.locator(".toast.held").get_by_role("button", name="Undo").click()
    page.wait_for_timeout(3500)
    assert due_ids(api) == ([bill], [])  # still overdue: the snooze was never sent

    # Left before the time is up, the held request is still sent (as the page goes).
    card.get_by_role("button", name="Clear").click()
    expect(card).to_be_hidden()
    page.goto("about:blank")
    deadline = datetime.now(UTC) + timedelta(seconds=5)
    while due_ids(api) != ([], []) and datetime.now(UTC) < deadline:
        page.wait_for_timeout(100)
    assert due_ids(api) == ([], [])


def test_a_push_service_that_never_answers_ends_in_a_sentence_within_seconds(dashboard: Dashboard):
    """Issue 64 item 3: "Subscribing this device…" stayed for 30 s and more when the browser's push service never
    answered; the button now ends with a sentence within 10 s."""
    page = dashboard.page
    origin = dashboard.server.url
    page.context.grant_permissions(["notifications"], origin=origin)
    page.add_init_script("PushManager.prototype.subscribe = () => new Promise(() => {});"
                         "PushManager.prototype.getSubscription = async () => null;")
    page.reload()  # the init script runs on the next load
    dashboard.open("reminders")
    started = page.evaluate("performance.now()")
    page.get_by_role("button", name="Notify this device").click()
    status = page.locator("#push-status")
    expect(status).to_have_text(re.compile(r"^This browser could not subscribe this device \(the browser's push "
                                           r"service did not answer"), timeout=12_000)
    assert page.evaluate("performance.now()") - started < 10_000
    expect(status).to_have_class("error")
    expect(page.get_by_role("button", name="Notify this device")).to_be_enabled()


def test_a_reminder_card_says_its_time_once_with_two_buttons(dashboard: Dashboard, api):
    """Issue 64 item 8: the card said its time twice and offered four buttons; now the label says it, and the card
    offers the likeliest snooze and Clear, the other snoozes under "Other time…"."""
    capture(api, "Pay the electricity bill", when="2020-01-01", when_kind="due")
    page = dashboard.open("reminders")
    card = page.locator(".due-item")
    expect(card).to_have_count(1)
    said = card.locator(".meta").inner_text()
    assert len(re.findall(r"\bDue\b", said)) == 1, said
    assert card.locator(".due-actions button").all_inner_texts() == ["Tomorrow 9:00", "Clear"]
    expect(card.get_by_role("button", name="In 3 hours")).to_be_hidden()
    card.get_by_text("Other time…").click()
    expect(card.get_by_role("button", name="In 3 hours")).to_be_visible()
