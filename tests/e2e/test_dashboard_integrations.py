"""The Integrations view in a real browser: connect a notes folder, see what it brought in, sync after an edit
upstream, a folder that cannot be read said in words (on the card, and beside the form for a wrong path), and
disconnecting with the mirrors kept; a mailbox (GreenMail) connected from its form, a wrong password said beside it,
the password never shown again. Each kind's form is made from what its connector declares (GET /integrations/kinds),
one open at a time."""

import pytest
from playwright.sync_api import expect

from tests.support.greenmail import PASSWORD, message

# Not watching its folders: the view's Sync now is what brings an edit in (the counts it shows are its own).
pytestmark = pytest.mark.server_env(BRAIN_WATCH_FOLDERS="false")


def open_form(page, title):
    """Open one kind's connect form (its summary names it); any other open one closes."""
    page.locator("#main details > summary", has_text=title).click()
    form = page.locator("#main details[open]")
    expect(form).to_have_count(1)
    expect(form.locator("summary")).to_have_text(title)


def test_a_notes_folder_is_connected_synced_and_disconnected_from_the_dashboard(dashboard, tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Boiler.md").write_text("# Boiler\n\nServiced in March. #home\n")
    (vault / "Roof.md").write_text("The garage roof leaks when it rains from the west.\n")
    page = dashboard.open("integrations")
    expect(page.locator("#main")).to_contain_text("Nothing is connected yet")
    dashboard.accessible_light_and_dark()
    page.emulate_media(color_scheme="light")

    expect(page.locator("#main details > summary")).to_have_text([  # every kind, the owner's folder last
        "Connect a CalDAV calendar", "Connect a calendar feed", "Connect a mailbox", "Connect Notion",
        "Connect a notes folder"])
    open_form(page, "Connect a calendar feed")
    page.fill("#calendar-url", "ftp://calendar.example.com/me.ics")
    page.get_by_role("button", name="Connect calendar").click()
    expect(page.locator("#main form [role=alert]")).to_contain_text("https://")

    open_form(page, "Connect a notes folder")
    expect(page.locator("#calendar-url")).to_be_hidden()
    page.fill("#notes-path", "relative/folder")
    page.get_by_role("button", name="Connect", exact=True).click()
    expect(page.locator("#main form [role=alert]", has_text="absolute")).to_contain_text("absolute path")

    page.fill("#notes-path", str(vault))
    page.fill("#notes-name", "Home vault")
    page.get_by_role("button", name="Connect", exact=True).click()
    card = page.locator("article.integration", has_text="Home vault")
    expect(card).to_contain_text("2 memories mirrored")
    expect(card).to_contain_text("up to date")
    expect(page.locator(".toast")).to_contain_text("Connected Home vault: 2 new")

    (vault / "Boiler.md").write_text("# Boiler\n\nServiced in March and again in October. #home\n")
    card.get_by_role("button", name="Sync now").click()
    expect(page.locator(".toast", has_text="Synced")).to_contain_text("1 updated")
    expect(page.locator("article.integration")).to_contain_text("1 updated")

    moved = vault.rename(tmp_path / "elsewhere")
    page.locator("article.integration").get_by_role("button", name="Sync now").click()
    expect(page.locator("article.integration [role=alert]")).to_contain_text("cannot be read")
    expect(page.locator("article.integration")).to_contain_text("needs attention")
    assert dashboard.accessibility() == []
    dashboard.screenshot("integrations")
    moved.rename(vault)

    page.locator("article.integration").get_by_role("button", name="Disconnect…").click()
    page.get_by_role("button", name="Keep them").click()
    expect(page.locator(".toast", has_text="Disconnected")).to_contain_text("2 memories kept as your own")
    expect(page.locator("article.integration")).to_contain_text("disconnected")
    expect(page.locator("article.integration").get_by_role("button", name="Sync now")).to_have_count(0)
    dashboard.accessible_at_phone_width()
    assert not dashboard.errors, dashboard.errors


@pytest.mark.server_env(BRAIN_WATCH_FOLDERS="false", BRAIN_PUSH_ALLOW_LOOPBACK="true")
def test_a_mailbox_is_connected_from_the_dashboard_its_password_never_shown_again(dashboard, greenmail, mailbox):
    greenmail.append(message("Boiler service", "The boiler was serviced on Tuesday; next one in March."), mailbox)
    settings = greenmail.settings(mailbox)
    page = dashboard.open("integrations")
    open_form(page, "Connect a mailbox")
    form = page.locator("form[data-kind=imap]")
    expect(form.locator("label")).to_have_text(["IMAP server", "User name", "Password (an app password)",
                                                "Folder or label", "Connection", "Port (if not the usual one)", "Name"])
    form.locator("#imap-host").fill(settings["host"])
    form.locator("#imap-username").fill(settings["username"])
    form.locator("#imap-password").fill("not the password")
    form.locator("#imap-mailbox").fill(mailbox)
    form.locator("#imap-security").select_option("none")
    form.locator("#imap-port").fill(settings["port"])
    form.get_by_role("button", name="Connect mailbox").click()
    expect(form.locator("[role=alert]")).to_contain_text("refused the user name or password")
    expect(page.locator("article.integration")).to_have_count(0)  # nothing connected
    assert dashboard.accessibility() == []  # the open form, as made from its connector's declaration
    dashboard.screenshot("integrations-connect")

    form.locator("#imap-password").fill(PASSWORD)
    form.locator("#imap-name").fill("Brain label")
    form.get_by_role("button", name="Connect mailbox").click()
    card = page.locator("article.integration", has_text="Brain label")
    expect(card).to_contain_text("1 memory mirrored")
    expect(card).to_contain_text("Mailbox (IMAP)")
    expect(card).to_contain_text(f"{settings['username']}@127.0.0.1 · {mailbox}")
    expect(form.locator("#imap-password")).to_have_value("")  # not left in the page
    assert PASSWORD not in page.content()
    assert dashboard.accessibility() == []
    # its memory says where to change it, instead of offering edits the API would refuse
    with dashboard.server.client() as api:
        [row] = [r for r in api.get("/list").json() if r["source"] == "email-imap"]
    page = dashboard.open(f"entry?id={row['id']}")
    expect(page.locator("#main .managed")).to_contain_text("Synced from email-imap: change it there")
    expect(page.locator("#main .managed")).to_contain_text("imap://")
    expect(page.get_by_role("button", name="Forget")).to_have_count(0)
    expect(page.locator("#edit-content")).to_have_count(0)
    assert dashboard.accessibility() == []
    assert not dashboard.errors, dashboard.errors
