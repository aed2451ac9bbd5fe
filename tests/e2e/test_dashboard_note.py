"""A memory reads as a note (issue 64 item 3): its title, its Markdown rendered without running or fetching anything,
the memories that link to it, and an edit made in place that Undo takes back."""

import httpx
from playwright.sync_api import expect

from .browser import Dashboard

NOTE = """# Pricing decision

We move to **per-technician** pricing, *from Nov 16*; see [the deck](https://example.com/deck) and `plans.yaml`.

- $39 a technician, annual
- $45 month to month

1. Tell sales
2. Update the page

> Greg worried about Brightline.

<script>window.pwned = 1</script> <img src=x onerror="window.pwned = 2"> [bad](javascript:window.pwned=3)

![the chart](https://images.example.com/chart.png)

```
curl -s api/plans
  --json
```"""


def capture(api: httpx.Client, content: str) -> str:
    answer = api.post("/capture", json={"content": content}).json()
    assert answer["ok"], answer
    return answer["id"]


def test_a_memory_reads_as_a_note_whose_markdown_runs_and_fetches_nothing(dashboard: Dashboard, api):
    memory = capture(api, NOTE)
    fetched: list[str] = []
    dashboard.page.on("request", lambda request: fetched.append(request.url))
    page = dashboard.open(f"entry?id={memory}")
    note = page.locator("#main .note")
    expect(note.locator(".note-title")).to_have_text("Pricing decision")  # the heading is its title line
    expect(note.locator("strong")).to_have_text("per-technician")
    expect(note.locator("em")).to_have_text("from Nov 16")
    expect(note.locator("code").first).to_have_text("plans.yaml")
    deck = note.get_by_role("link", name="the deck")
    expect(deck).to_have_attribute("href", "https://example.com/deck")
    expect(deck).to_have_attribute("rel", "noopener noreferrer")
    expect(note.locator(".note-body ul > li")).to_have_count(2)
    expect(note.locator(".note-body ol > li")).to_have_count(2)
    expect(note.locator("blockquote")).to_contain_text("Greg worried about Brightline.")
    expect(note.locator("pre")).to_have_text("curl -s api/plans\n  --json")
    # Raw HTML is shown as the text it is; a javascript: link is no link; an image is a link to it, never fetched.
    expect(note).to_contain_text("<script>window.pwned = 1</script>")
    expect(note.locator("script, img, iframe")).to_have_count(0)
    expect(note.get_by_role("link", name="bad")).to_have_count(0)
    expect(note.get_by_role("link", name="the chart (image)")).to_have_attribute(
        "href", "https://images.example.com/chart.png")
    assert page.evaluate("window.pwned") is None
    assert not [url for url in fetched if "example.com" in url], fetched
    assert dashboard.accessibility() == []
    dashboard.screenshot("memory-note")
    assert not dashboard.errors, dashboard.errors


def test_a_plain_note_keeps_its_lines_and_takes_its_first_line_as_title(dashboard: Dashboard, api):
    memory = capture(api, "Call list for Friday\nDupont about the boiler\nthe school about Maya's trip")
    page = dashboard.open(f"entry?id={memory}")
    note = page.locator("#main .note")
    expect(note.locator(".note-title")).to_have_text("Call list for Friday")
    expect(note.locator(".note-body")).to_have_text("Dupont about the boiler\nthe school about Maya's trip")
    single = capture(api, "The wifi at the cabin is slow after 8pm")
    page = dashboard.open(f"entry?id={single}")
    expect(page.locator("#main .note .note-title")).to_have_count(0)  # one line: the note itself, not a title
    expect(page.locator("#main .note .note-body")).to_have_text("The wifi at the cabin is slow after 8pm")


def test_a_note_lists_the_memories_linking_to_it(dashboard: Dashboard, api):
    plan = capture(api, "Q1 plan: ship the dispatch board")
    sync = capture(api, "Product sync: the dispatch board beta went live for Brightline")
    assert api.post("/link", json={"source_id": sync, "target_id": plan, "type": "part_of_project"}).json()["ok"]
    page = dashboard.open(f"entry?id={plan}")
    backlinks = page.get_by_role("region", name="Linked from")
    expect(backlinks).to_contain_text("Product sync: the dispatch board beta went live")
    expect(page.get_by_role("region", name="Links to")).to_have_count(0)
    page = dashboard.open(f"entry?id={sync}")
    expect(page.get_by_role("region", name="Links to")).to_contain_text("Q1 plan: ship the dispatch board")
    expect(page.get_by_role("region", name="Linked from")).to_have_count(0)
    assert not dashboard.errors, dashboard.errors


def test_a_note_is_edited_in_place_and_undo_takes_the_edit_back(dashboard: Dashboard, api):
    memory = capture(api, "Gate code for the storage unit: 4412")
    page = dashboard.open(f"entry?id={memory}")
    note = page.locator("#main .note")
    dashboard.undo_after(10)
    note.get_by_role("button", name="Edit").click()
    editor = note.get_by_label("Text")
    expect(editor).to_be_focused()
    editor.fill("Gate code for the storage unit: 9917")
    note.get_by_role("button", name="Save").click()
    expect(note.locator(".note-body")).to_have_text("Gate code for the storage unit: 9917")  # shown at once
    page.locator(".toast.held").get_by_role("button", name="Undo").click()
    expect(note.locator(".note-body")).to_have_text("Gate code for the storage unit: 4412")
    page.wait_for_timeout(500)
    assert api.get("/entry", params={"id": memory}).json()["entry"]["content"] == \
        "Gate code for the storage unit: 4412"  # nothing was sent

    dashboard.undo_after(1)
    note.get_by_role("button", name="Edit").click()
    note.get_by_label("Text").fill("Gate code for the storage unit: 9917")
    note.get_by_role("button", name="Save").click()
    expect(page.locator(".toast").filter(has_text="Saved.")).to_be_visible(timeout=10_000)
    assert api.get("/entry", params={"id": memory}).json()["entry"]["content"] == \
        "Gate code for the storage unit: 9917"
    note.get_by_role("button", name="Edit").click()
    note.get_by_label("Text").fill("something else")
    note.get_by_role("button", name="Cancel").click()  # Cancel leaves the note as it was
    expect(note.locator(".note-body")).to_have_text("Gate code for the storage unit: 9917")
    assert not dashboard.errors, dashboard.errors
