"""The Team view in a real browser: members added with their token shown once (and working), tokens rotated,
suspended and restored, roles changed, members removed after a confirmation, company workspaces, the activity feed
paged; and for a member who is not an admin, no Team link and a sentence instead of the view."""

import re

import httpx
import pytest
from playwright.sync_api import expect

from .browser import Dashboard
from .conftest import Server


def whoami(server: Server, token: str) -> httpx.Response:
    return httpx.get(server.url + "/team/me", headers={"Authorization": f"Bearer {token}"})


def members(api: httpx.Client) -> dict[str, dict]:
    return {m["name"]: m for m in api.get("/team/members").json()["members"]}


def test_a_new_members_token_is_shown_once_works_and_stops_when_suspended(dashboard: Dashboard, api):
    server = dashboard.server
    page = dashboard.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    dashboard.open("team")
    expect(page.get_by_role("heading", name="Members (1)")).to_be_visible()
    page.get_by_label("Name").fill("Ann Example")
    page.get_by_label("Email (optional)").fill("ann@example.com")
    page.locator("#member-role").select_option("member")
    expect(page.locator("#add-member").get_by_role("checkbox", name="Company")).to_be_checked()
    page.get_by_role("button", name="Add member").click()

    secret = page.locator("pre.secret")
    expect(secret).to_have_text(re.compile(r"^sbm_\S{20,}$"))
    expect(page.locator(".token-once")).to_contain_text("It will not be shown again")
    token = secret.inner_text()
    page.get_by_role("button", name="Copy token").click()
    expect(page.locator(".toast")).to_contain_text("Token copied.")
    assert page.evaluate("navigator.clipboard.readText()") == token
    me = whoami(server, token)
    assert me.status_code == 200 and me.json()["me"]["name"] == "Ann Example"
    assert me.json()["me"]["role"] == "member" and me.json()["me"]["teams"][0]["id"] == "company"
    expect(page.get_by_role("heading", name="Members (2)")).to_be_visible()
    expect(page.get_by_label("Name")).to_have_value("")  # the form is ready for the next one
    expect(page.locator("#add-member").get_by_role("checkbox", name="Company")).to_be_checked()
    ann = page.locator(".member", has_text="Ann Example")
    expect(ann).to_contain_text("ann@example.com")
    expect(ann.locator(".badge.active")).to_have_text("active")

    # Shown once: gone when dismissed, and nowhere after the view is drawn again.
    page.get_by_role("button", name="I have stored it").click()
    expect(secret).to_have_count(0)
    page.reload()
    expect(page.get_by_role("heading", name="Members (2)")).to_be_visible()
    assert token not in page.content()

    # Suspended, the token is refused; restored, it works again.
    ann = page.locator(".member", has_text="Ann Example")
    ann.get_by_role("button", name="Suspend").click()
    expect(ann.locator(".badge.suspended")).to_have_text("suspended")
    assert whoami(server, token).status_code in (401, 403)
    assert members(api)["Ann Example"]["suspended"] is True
    ann.get_by_role("button", name="Restore access").click()
    expect(ann.locator(".badge.active")).to_have_text("active")
    assert whoami(server, token).status_code == 200

    # A new token, after a question asked in the page (never the browser's dialog): shown once, the old one refused.
    page.on("dialog", lambda dialog: (_ for _ in ()).throw(AssertionError(f"a browser dialog: {dialog.message}")))
    ann.get_by_role("button", name="New token").click()
    expect(ann.get_by_role("group", name=re.compile("^Replace Ann Example's token?"))).to_be_visible()
    ann.get_by_role("button", name="Replace the token").click()
    expect(page.locator(".token-once h2")).to_have_text("New token for Ann Example")
    rotated = secret.inner_text()
    assert rotated != token
    assert whoami(server, token).status_code == 401
    assert whoami(server, rotated).json()["me"]["name"] == "Ann Example"


def test_roles_removal_workspaces_and_the_activity_feed(dashboard: Dashboard, api):
    bob = api.post("/team/members", json={"name": "Bob Builder", "role": "member"}).json()["member"]
    page = dashboard.page
    dashboard.open("team")
    card = page.locator(f".member[data-id='{bob['id']}']")
    card.get_by_label("Role").select_option("admin")
    expect(page.locator(".toast")).to_contain_text("Bob Builder is now an admin.")
    assert members(api)["Bob Builder"]["role"] == "admin"

    # A company workspace with Bob in it.
    page.get_by_label("New company workspace").fill("Design")
    page.locator("#add-workspace").get_by_label("Bob Builder").check()
    page.get_by_role("button", name="Create workspace").click()
    expect(page.locator(".workspace-list")).to_contain_text("Design")
    design = [w for w in api.get("/team/workspaces").json()["workspaces"] if w["name"] == "Design"]
    assert len(design) == 1
    assert design[0]["id"] in members(api)["Bob Builder"]["teams"]
    expect(card).to_contain_text("Design")  # his workspaces, by name

    # Removal asks first, in the page: cancelled (or Escape), nothing happens; answered, he is gone.
    page.on("dialog", lambda dialog: (_ for _ in ()).throw(AssertionError(f"a browser dialog: {dialog.message}")))
    removals: list[str] = []
    page.on("request", lambda request: request.url.endswith("/team/members/remove") and removals.append(request.url))
    remove = card.get_by_role("button", name="Remove", exact=True)
    remove.click()
    question = card.get_by_role("group", name=re.compile("^Remove Bob Builder?"))
    expect(question).to_contain_text("This cannot be undone.")
    expect(card.get_by_role("button", name="Cancel")).to_be_focused()
    card.get_by_role("button", name="Cancel").click()
    expect(question).to_have_count(0)
    expect(remove).to_be_focused()  # the button is given back
    remove.click()
    page.keyboard.press("Escape")
    expect(remove).to_be_focused()
    assert removals == []
    assert "Bob Builder" in members(api)
    card.get_by_role("button", name="Remove", exact=True).click()
    card.get_by_role("button", name="Remove Bob Builder").click()
    expect(card).to_have_count(0)
    assert len(removals) == 1
    assert "Bob Builder" not in members(api)

    activity = page.locator("#activity")
    expect(activity).to_contain_text("Owner removed Bob Builder")
    expect(activity).to_contain_text("Owner created the company workspace Design.")
    expect(activity).to_contain_text("Owner added Bob Builder as member.")


def test_a_workspace_typed_while_the_view_refreshes_is_not_lost(dashboard: Dashboard, api):
    """A role change redraws the members; the workspace form half filled in meanwhile keeps what was typed."""
    cora = api.post("/team/members", json={"name": "Cora Lane", "role": "member"}).json()["member"]
    page = dashboard.page
    dashboard.open("team")
    expect(page.get_by_role("heading", name="Members (2)")).to_be_visible()
    held, spaces = [], re.compile(r"/team/workspaces$")
    page.route(spaces, lambda route: held.append(route))  # the refresh after the role change waits for the test
    page.locator(f".member[data-id='{cora['id']}']").get_by_label("Role").select_option("admin")
    expect(page.locator(".toast")).to_contain_text("Cora Lane is now an admin.")
    for _ in range(250):  # route handlers run while the test talks to the browser
        if held:
            break
        page.wait_for_timeout(20)
    page.get_by_label("New company workspace").fill("Research")
    page.locator("#add-workspace").get_by_label("Cora Lane").check()
    held.pop().continue_()  # the view redraws now, after the typing
    page.unroute(spaces)
    expect(page.locator(f".member[data-id='{cora['id']}']").get_by_label("Role")).to_have_value("admin")
    expect(page.get_by_label("New company workspace")).to_have_value("Research")
    page.get_by_role("button", name="Create workspace").click()
    expect(page.locator(".workspace-list")).to_contain_text("Research")
    expect(page.get_by_label("New company workspace")).to_have_value("")  # ready for the next one
    research = [w for w in api.get("/team/workspaces").json()["workspaces"] if w["name"] == "Research"]
    assert len(research) == 1 and research[0]["id"] in members(api)["Cora Lane"]["teams"]
    assert not dashboard.errors, dashboard.errors


def test_j_and_k_do_not_stop_on_member_cards_that_open_nothing(dashboard: Dashboard, api):
    api.post("/team/members", json={"name": "Gil Moss", "role": "member"})
    page = dashboard.open("team")
    expect(page.locator(".member")).to_have_count(2)
    page.locator("#view-title").click()
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.closest('.member') === null")
    assert page.url.endswith("#/team")
    expect(page.locator("#main .item")).to_have_count(0)


def test_the_activity_feed_is_paged(dashboard: Dashboard, api):
    for n in range(27):
        assert api.post("/team/members", json={"name": f"Member {n:02d}"}).json()["ok"]
    total = api.get("/team/activity", params={"limit": 1}).json()["total"]
    assert total >= 27
    page = dashboard.open("team")
    activity = page.locator("#activity")
    expect(activity.locator("li")).to_have_count(25)
    expect(activity.locator(".pager")).to_contain_text(f"1–25 of {total}")
    expect(activity.locator("li").first).to_contain_text("Member 26")  # newest first
    activity.get_by_role("button", name="Older →").click()
    expect(activity.locator("li")).to_have_count(total - 25)
    expect(activity.locator("li").last).to_contain_text("Member 00")
    activity.get_by_role("button", name="← Newer").click()
    expect(activity.locator("li")).to_have_count(25)


def test_a_member_signs_in_without_the_team_view(dashboard: Dashboard, api):
    token = api.post("/team/members", json={"name": "Cleo", "role": "member"}).json()["token"]
    page = dashboard.page
    page.get_by_role("button", name="Sign out").click()
    dashboard.sign_in(token)
    nav = page.locator("#nav")
    expect(nav.get_by_role("link", name="Reminders")).to_be_visible()
    expect(nav.get_by_role("link", name="Team")).to_have_count(0)
    dashboard.open("team")
    expect(page.locator("#admins-only")).to_have_text(re.compile(r"^This view is for admins"))
    expect(page.locator("#add-member")).to_have_count(0)
    assert dashboard.accessibility() == []
    # Reminders works for a member too, without the admin's test send.
    dashboard.open("reminders")
    expect(page.locator("#push-status")).to_have_text("This device is not subscribed.")
    expect(page.get_by_role("button", name="Send a test")).to_have_count(0)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_team_is_accessible_in_light_and_dark(dashboard: Dashboard, api, scheme: str):
    api.post("/team/members", json={"name": "Dana Smith", "email": "dana@example.com", "role": "admin"})
    suspended = api.post("/team/members", json={"name": "Eli Jones", "role": "member"}).json()["member"]
    api.post("/team/members/suspend", json={"id": suspended["id"], "suspended": True})
    page = dashboard.page
    page.emulate_media(color_scheme=scheme)
    dashboard.open("team")
    page.get_by_label("Name").fill("Fay Lee")
    page.get_by_role("button", name="Add member").click()
    expect(page.locator("pre.secret")).to_be_visible()
    expect(page.locator(".badge.suspended")).to_have_count(1)
    expect(page.locator("#activity li").first).to_contain_text("Fay Lee")
    assert dashboard.accessibility() == []
    if scheme == "light":
        dashboard.screenshot("team")
    else:
        page.set_viewport_size({"width": 390, "height": 800})
        dashboard.open("team")
        expect(page.locator(".member")).to_have_count(4)
        assert dashboard.accessibility() == []


def test_a_member_whose_token_an_admin_replaced_is_told_and_replaces_it_themselves(dashboard: Dashboard, api):
    """Issue 38, item 12: an admin who replaces a member's token sees it; the member is told at sign-in, reads in
    Settings what an admin can and cannot see, and makes a token nobody else has seen."""
    bob = api.post("/team/members", json={"name": "Bob", "role": "member"}).json()["member"]
    handed = api.post("/team/members/token", json={"id": bob["id"]}).json()["token"]
    page = dashboard.page
    page.get_by_role("button", name="Sign out").click()
    dashboard.sign_in(handed)
    notice = page.locator("#notice")
    expect(notice).to_contain_text("Owner replaced your token on")
    assert dashboard.accessibility() == []
    notice.get_by_role("link", name="Replace my token").click()
    access = page.locator("#token")
    expect(access).to_contain_text("Your personal memories are read by you alone")
    expect(access).to_contain_text("An admin who adds you or replaces your token sees that token once")
    expect(page.locator("#token-made")).to_contain_text("Owner made the token you use")
    access.get_by_role("button", name="Replace my token").click()
    fresh = page.locator("#new-token")
    expect(fresh).to_have_text(re.compile(r"^sbm_\S{20,}$"))
    expect(notice).to_be_hidden()
    expect(page.locator("#token-made")).to_have_text("You made this token yourself: nobody else has seen it.")
    mine = fresh.inner_text()
    assert whoami(dashboard.server, handed).status_code == 401  # the admin's copy is dead
    assert whoami(dashboard.server, mine).json()["me"]["notice"] == ""
    page.reload()  # this browser carries on with the new token
    expect(page.locator("#nav")).to_be_visible()
    expect(notice).to_be_hidden()
    feed = api.get("/team/activity").json()["activity"]
    assert [(i["type"], i["actor_name"], i["member_name"]) for i in feed[:2]] == [
        ("token_rotated", "Bob", "Bob"), ("token_rotated", "Owner", "Bob")]
