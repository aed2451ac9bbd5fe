"""The Settings view in a real browser: an admin changes, is refused (with the API's sentence) and resets settings
through GET/PATCH/DELETE /config; a member sees the same values read-only; overrides that no longer apply are listed
with their reason."""

import httpx
from playwright.sync_api import expect

from second_brain.app.config import STREAM
from second_brain.app.handling import Context, envelopes
from second_brain.bootstrap import build
from second_brain.domain.events import ConfigChanged
from second_brain.settings import Settings

from .browser import TOKEN_KEY, Dashboard, new_context
from .conftest import Server


def config(server: Server) -> dict:
    with server.client() as api:
        return api.get("/config").json()


def test_an_admin_changes_is_refused_and_resets_a_setting(dashboard):
    page = dashboard.open("settings")
    expect(page.locator("#view-title")).to_have_text("Settings")
    expect(page.get_by_role("heading", name="Time zone and team", level=2)).to_be_visible()
    expect(page.get_by_role("combobox", name="Time zone TIMEZONE")).to_be_visible()  # in words, its key beside it
    # The ranking constants are folded away for whoever tunes recall (issue 45).
    expect(page.get_by_role("heading", name="Recall ranking", level=2)).to_be_hidden()
    page.get_by_text("Advanced: how recall ranks and shows memories").click()
    for group in ("Recall ranking", "Recall output", "Duplicates and contradictions"):
        expect(page.get_by_role("heading", name=group, level=2)).to_be_visible()
    mmr = page.locator("#setting-MMR_LAMBDA")
    expect(mmr).to_have_value("0.7")
    assert (mmr.get_attribute("type"), mmr.get_attribute("min"), mmr.get_attribute("max"),
            mmr.get_attribute("step")) == ("number", "0", "1", "0.01")
    assert page.locator("#setting-DEFAULT_HOPS").get_attribute("step") == "1"
    assert page.locator("#setting-RERANK_MODE").evaluate("e => e.tagName") == "SELECT"
    assert page.locator("#setting-TIMEZONE").get_attribute("type") == "text"
    expect(page.locator("#setting-MMR_LAMBDA-about")).to_contain_text("Relevance against diversity")
    expect(page.locator("#setting-MMR_LAMBDA-about")).to_contain_text("Allowed: 0 to 1. Default: 0.7.")

    # One setting saved on its own.
    mmr.fill("0.5")
    page.get_by_role("button", name="Save MMR_LAMBDA").click()
    expect(page.locator("#settings-status")).to_contain_text("Saved: MMR_LAMBDA")
    assert config(dashboard.server)["overrides"] == {"MMR_LAMBDA": 0.5}
    expect(page.locator(".setting[data-key=MMR_LAMBDA] .badge.changed")).to_be_visible()

    # Several at once with "Save all changes".
    page.select_option("#setting-RERANK_MODE", "off")
    page.fill("#setting-TIMEZONE", "Europe/Berlin")
    page.get_by_role("button", name="Save all changes").click()
    expect(page.locator("#settings-status")).to_contain_text("Saved: TIMEZONE, RERANK_MODE")  # in the order shown
    assert config(dashboard.server)["overrides"] == {"MMR_LAMBDA": 0.5, "RERANK_MODE": "off",
                                                      "TIMEZONE": "Europe/Berlin"}

    # Out of range, together with a valid change: the API's sentence next to the form, and nothing written.
    page.fill("#setting-MMR_LAMBDA", "2")
    page.fill("#setting-DEFAULT_HOPS", "2")
    page.get_by_role("button", name="Save all changes").click()
    expect(page.locator("#settings-status [role=alert]")).to_have_text("MMR_LAMBDA must be between 0.0 and 1.0")
    after = config(dashboard.server)
    assert after["overrides"] == {"MMR_LAMBDA": 0.5, "RERANK_MODE": "off", "TIMEZONE": "Europe/Berlin"}
    expect(page.locator("#setting-MMR_LAMBDA")).to_have_value("2")  # what was typed stays, to be corrected
    # ...and the refusal is said under the field too, which is marked invalid and takes the keyboard.
    expect(page.locator("#setting-MMR_LAMBDA-error")).to_have_text("MMR_LAMBDA must be between 0.0 and 1.0")
    expect(page.locator("#setting-MMR_LAMBDA")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#setting-MMR_LAMBDA")).to_be_focused()
    page.fill("#setting-TIMEZONE", "Mars/Olympus")
    page.get_by_role("button", name="Save TIMEZONE").click()
    expect(page.locator("#settings-status [role=alert]")).to_contain_text("TIMEZONE must be an IANA time zone")
    assert config(dashboard.server)["config"]["TIMEZONE"] == "Europe/Berlin"

    # Reset: back to the default, and the badge goes.
    page.get_by_role("button", name="Reset MMR_LAMBDA").click()
    expect(page.locator("#settings-status")).to_contain_text("MMR_LAMBDA is back to its default")
    expect(page.locator("#setting-MMR_LAMBDA")).to_have_value("0.7")
    expect(page.locator(".setting[data-key=MMR_LAMBDA] .badge.changed")).to_have_count(0)
    assert config(dashboard.server)["overrides"] == {"RERANK_MODE": "off", "TIMEZONE": "Europe/Berlin"}

    dashboard.accessible_light_and_dark()
    page.emulate_media(color_scheme="light")
    dashboard.screenshot("settings")
    dashboard.accessible_at_phone_width()


def test_saving_or_resetting_one_setting_keeps_the_other_unsaved_edits(dashboard):
    page = dashboard.open("settings")
    page.get_by_text("Advanced: how recall ranks and shows memories").click()
    expect(page.locator("#setting-MMR_LAMBDA")).to_have_value("0.7")
    defaults = config(dashboard.server)["config"]
    page.fill("#setting-MMR_LAMBDA", "0.4")
    page.fill("#setting-DEFAULT_HOPS", str(defaults["DEFAULT_HOPS"] + 1))
    page.select_option("#setting-RERANK_MODE", "off")

    # Saving one redraws the form: the other two edits are still there, not yet saved.
    page.get_by_role("button", name="Save MMR_LAMBDA").click()
    expect(page.locator("#settings-status")).to_have_text("Saved: MMR_LAMBDA.")
    expect(page.locator(".setting[data-key=MMR_LAMBDA] .badge.changed")).to_be_visible()
    assert config(dashboard.server)["overrides"] == {"MMR_LAMBDA": 0.4}
    expect(page.locator("#setting-DEFAULT_HOPS")).to_have_value(str(defaults["DEFAULT_HOPS"] + 1))
    expect(page.locator("#setting-RERANK_MODE")).to_have_value("off")

    # Resetting one keeps them too; "Save all changes" then saves exactly them.
    page.get_by_role("button", name="Reset MMR_LAMBDA").click()
    expect(page.locator("#settings-status")).to_contain_text("MMR_LAMBDA is back to its default")
    expect(page.locator("#setting-MMR_LAMBDA")).to_have_value("0.7")
    expect(page.locator("#setting-DEFAULT_HOPS")).to_have_value(str(defaults["DEFAULT_HOPS"] + 1))
    expect(page.locator("#setting-RERANK_MODE")).to_have_value("off")
    page.get_by_role("button", name="Save all changes").click()
    expect(page.locator("#settings-status")).to_have_text("Saved: RERANK_MODE, DEFAULT_HOPS.")
    assert config(dashboard.server)["overrides"] == {"DEFAULT_HOPS": defaults["DEFAULT_HOPS"] + 1,
                                                      "RERANK_MODE": "off"}


def test_a_member_sees_settings_read_only(dashboard):
    with dashboard.server.client() as api:
        api.patch("/config", json={"DEFAULT_HOPS": 2})
        token = api.post("/team/members", json={"name": "Bob", "email": "bob@example.com",
                                                "role": "member"}).json()["token"]
    page = dashboard.page
    page.goto(dashboard.server.url + "/#/settings")
    page.evaluate(f"localStorage.setItem('{TOKEN_KEY}', '{token}')")
    page.reload()  # signed in afresh, as the member
    expect(page.locator("#nav a[data-view=team]")).to_have_count(0)
    expect(page.locator("#setting-DEFAULT_HOPS")).to_have_text("2")
    expect(page.locator("#setting-TIMEZONE")).to_have_text("UTC")
    expect(page.locator(".setting[data-key=DEFAULT_HOPS] .badge.changed")).to_be_visible()
    expect(page.locator("#main")).to_contain_text("Only an admin can change settings")
    settings = page.locator("#main .settings-group")  # the settings themselves: read-only
    expect(settings.locator("input, select, button")).to_have_count(0)
    expect(settings.first).to_be_visible()
    # Their own access is theirs to manage: a token an admin made (and saw) can be replaced.
    expect(page.locator("#token-made")).to_contain_text("Owner made the token you use")
    expect(page.locator("#main .settings-access button")).to_have_count(1)
    expect(page.get_by_role("button", name="Replace my token")).to_be_visible()
    dashboard.accessible_light_and_dark()


def test_preferences_a_person_sets_for_themselves(dashboard):
    with dashboard.server.client() as api:
        token = api.post("/team/members", json={"name": "Bob", "role": "member"}).json()["token"]
    page = dashboard.page
    page.goto(dashboard.server.url + "/#/settings")
    page.evaluate(f"localStorage.setItem('{TOKEN_KEY}', '{token}')")
    page.reload()  # as the member
    prefs = page.locator("section", has=page.get_by_role("heading", name="Preferences"))
    # Their name: saved for everyone to see, refused in a sentence under the field when taken.
    prefs.get_by_label("Your name").fill("Bob Builder")
    prefs.get_by_role("button", name="Save name").click()
    expect(page.locator("#pref-name-status")).to_have_text("Saved: others see you as Bob Builder.")
    prefs.get_by_label("Your name").fill("Owner")
    prefs.get_by_role("button", name="Save name").click()
    expect(page.locator("#pref-name-status [role=alert]")).to_contain_text("Owner")
    member = httpx.get(dashboard.server.url + "/team/me", headers={"Authorization": f"Bearer {token}"}).json()["me"]
    assert member["name"] == "Bob Builder"
    # Where their captures land: a capture that names no workspace follows it.
    prefs.get_by_label("Where your captures land when they name no workspace").select_option("company")
    expect(page.locator("#pref-share-status")).to_contain_text("Saved")
    headers = {"Authorization": f"Bearer {token}"}
    landed = httpx.post(dashboard.server.url + "/capture", headers=headers, json={"content": "Bob's shared note"})
    assert httpx.get(dashboard.server.url + "/entry", headers=headers,
                     params={"id": landed.json()["id"]}).json()["entry"]["workspace"] == "company"
    # How long Undo waits, kept in this browser.
    prefs.get_by_label("How long Undo waits").select_option("10")
    assert page.evaluate("localStorage.getItem('secondBrain.undoSeconds')") == "10"
    # The models this brain runs on, in words: an embedder here, no reranker, no language model.
    models = page.locator("#pref-models")
    expect(models).to_contain_text("Search by meaning")
    expect(models.locator("dd code")).to_have_count(1)
    expect(models).to_contain_text("Rerankernone: results keep recall's own order")
    expect(models).to_contain_text("Language modelnone: Chat and written summaries are off")
    dashboard.accessible_light_and_dark()
    # The owner's name comes from the deployment: shown, not editable.
    page.evaluate(f"localStorage.setItem('{TOKEN_KEY}', '{dashboard.server.token}')")
    page.reload()
    expect(page.get_by_label("Your name")).to_be_disabled()
    expect(prefs).to_contain_text("The owner's name comes from the deployment (BRAIN_OWNER_NAME).")


def test_stored_settings_that_no_longer_apply_are_shown_with_their_reason(browser, tmp_path):
    brain = build(Settings(data_dir=tmp_path / "brain"))  # as an older build, which accepted it, left it
    brain.store.append(envelopes(Context(brain.owner, "old-build"), STREAM, 0,
                                 [ConfigChanged({"MMR_LAMBDA": 2.5, "TAG_BOOST_STEP": 0.2})], "", 1))
    brain.close()
    server = Server(tmp_path / "brain").start()
    context = new_context(browser)
    try:
        board = Dashboard(context.new_page(), server)
        page = board.page
        page.goto(server.url + "/#/settings")
        page.evaluate(f"localStorage.setItem('{TOKEN_KEY}', '{server.token}')")
        page.reload()
        ignored = page.locator(".settings-ignored")
        expect(ignored).to_contain_text("MMR_LAMBDA = 2.5")
        expect(ignored).to_contain_text("MMR_LAMBDA must be between 0.0 and 1.0")
        expect(page.locator("#setting-MMR_LAMBDA")).to_have_value("0.7")
        expect(page.locator("#setting-TAG_BOOST_STEP")).to_have_value("0.2")
        assert board.accessibility() == []
        assert not board.errors, board.errors
    finally:
        context.close()
        server.stop()


def test_the_browser_runs_elsewhere_and_a_missing_dashboard_file_fails_the_test(browser, server):
    """The fixtures themselves: the browser is in another time zone than the server, and a dashboard file (or the
    shell) answering an error fails the test, while an API's refusal (a sentence in the view) does not. Routes
    only see what the page fetches itself: the dashboard's worker (which serves its files once it controls the
    page) is kept out."""
    context = new_context(browser, service_workers="block")
    try:
        board = Dashboard(context.new_page(), server)
        page = board.page
        assert page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone") == "America/Los_Angeles"
        page.route("**/config", lambda route: route.fulfill(status=500, content_type="application/json",
                                                            body='{"ok": false, "error": "The settings broke"}'))
        page.goto(server.url + "/")
        page.evaluate(f"localStorage.setItem('{TOKEN_KEY}', '{server.token}')")
        page.goto(server.url + "/#/settings")
        page.reload()
        expect(page.get_by_role("alert")).to_have_text("The settings broke")
        assert board.errors == []  # the API's error is the view's sentence, not a fault

        page.route("**/dashboard/app.css", lambda route: route.fulfill(status=404, body="gone"))
        page.reload()
        expect(page.locator("#nav")).to_be_visible()
        assert board.errors == [f"HTTP 404 for {server.url}/dashboard/app.css"]
    finally:
        context.close()


def test_a_person_picks_the_colours_for_this_browser(dashboard):
    page = dashboard.open("settings")
    page.get_by_label("Colours").select_option("dark")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.reload()
    expect(page.get_by_label("Colours")).to_have_value("dark")
    page.get_by_label("Colours").select_option("")
    expect(page.locator("html")).not_to_have_attribute("data-theme", "dark")
    assert dashboard.accessibility() == []
