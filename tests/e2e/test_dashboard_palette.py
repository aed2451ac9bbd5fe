"""The command palette (issue 45): the header's search box answers as you type with memories, projects and actions in
one list, keyboard first, with recall's typo fallback; in a real browser against a real server."""

import threading

from playwright.sync_api import expect

from .browser import Dashboard
from .test_dashboard import capture


def test_the_search_box_answers_as_you_type_and_opens_the_choice_from_the_keyboard(dashboard: Dashboard, api):
    pricing = capture(api, "The pricing floor for enterprise deals is $6k per year", project="pricing")
    capture(api, "Lunch with Dana on Thursday at the noodle bar")
    page = dashboard.open()
    page.keyboard.press("Control+k")
    box = page.locator("#search-input")
    expect(box).to_be_focused()
    box.type("pricng flor")  # a slip in each word, as a person types
    options = page.locator("#palette [role=option]")
    expect(options.first).to_contain_text("The pricing floor for enterprise deals")
    expect(page.locator("#palette-note")).to_have_text(
        "Showing results for “pricing floor”: no memory holds “pricng flor” as typed.")
    expect(box).to_have_attribute("aria-expanded", "true")
    expect(options.filter(has_text="Project")).to_contain_text("pricing")  # matched on the words recall read
    dashboard.screenshot("palette")
    page.keyboard.press("ArrowDown")
    assert dashboard.accessibility() == []  # open, with an option chosen
    dashboard.page.emulate_media(color_scheme="dark")
    assert dashboard.accessibility() == []
    dashboard.screenshot("palette-dark")
    expect(options.first).to_have_attribute("aria-selected", "true")
    expect(box).to_have_attribute("aria-activedescendant", "palette-0")
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{dashboard.server.url}/#/entry?id={pricing}")
    expect(page.locator("#main")).to_contain_text("The pricing floor for enterprise deals")
    expect(page.locator(".palette-box")).to_be_hidden()
    assert not dashboard.errors, dashboard.errors


def test_projects_and_actions_share_the_list_and_enter_alone_still_searches_everything(dashboard: Dashboard, api):
    capture(api, "Atlas ships the new importer in May", project="atlas")
    page = dashboard.open()
    page.keyboard.press("/")
    page.keyboard.type("atlas")
    options = page.locator("#palette [role=option]")
    expect(options.filter(has_text="Project")).to_have_count(1)
    expect(options.filter(has_text="Memory").first).to_contain_text("Atlas ships the new importer")
    page.keyboard.press("Escape")
    expect(page.locator(".palette-box")).to_be_hidden()
    page.fill("#search-input", "remind")
    action = options.filter(has_text="Go to Reminders")
    expect(action).to_have_count(1)
    action.click()
    expect(page).to_have_url(f"{dashboard.server.url}/#/reminders")
    page.fill("#search-input", "")
    page.locator("#search-input").type("importer")
    expect(options.first).to_contain_text("Atlas ships")
    page.keyboard.press("Enter")  # nothing chosen: the Recall view, as before
    expect(page).to_have_url(f"{dashboard.server.url}/#/recall?q=importer")
    assert not dashboard.errors, dashboard.errors


def test_a_slow_answer_to_an_older_query_never_replaces_the_newer_one(dashboard: Dashboard, api):
    capture(api, "Quarterly budget review moved to Friday")
    capture(api, "Kayak trip on the fjord in August")
    page = dashboard.open()
    held = threading.Event()

    def slow_first(route):
        if "budget" in route.request.url and not held.is_set():
            held.set()
            page.wait_for_timeout(1500)  # the answer to "budget" arrives after the one to "kayak"
        route.continue_()

    page.route("**/recall?*", slow_first)
    box = page.locator("#search-input")
    box.focus()
    box.type("budget")
    page.wait_for_timeout(400)  # its request has gone out
    box.fill("kayak")
    box.dispatch_event("input")
    options = page.locator("#palette [role=option]")
    expect(options.first).to_contain_text("Kayak trip on the fjord")
    page.wait_for_timeout(2000)  # well past the late answer
    expect(options.first).to_contain_text("Kayak trip on the fjord")
    expect(page.locator("#palette")).not_to_contain_text("Quarterly budget")
    assert held.is_set()
