"""The README's graph picture: a brain of 22 ordinary notes in three projects, some linked, drawn by the dashboard
in Debian's chromium with one memory hovered. Usage: .venv/bin/python docs/screenshots/graph.py (writes
docs/screenshots/graph.png; the e2e tests write their own screenshots to build/dashboard-screenshots/)."""

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.e2e import conftest  # noqa: E402  (first: tests.e2e.browser imports it)
from tests.e2e.browser import TOKEN_KEY, chromium_path  # noqa: E402

NOTES = [
    ("atlas", "Atlas launch moved to the 14th of May after the security review"),
    ("atlas", "Atlas pricing floor is 6,000 EUR per project, agreed with Lena"),
    ("atlas", "Security review for Atlas found two issues in the upload path"),
    ("atlas", "Lena owns the Atlas launch checklist"),
    ("atlas", "Atlas beta customers: Hansen Heating, Moreau Logistics, Kaur Dental"),
    ("atlas", "Upload path fix shipped in Atlas 0.9.3"),
    ("atlas", "Atlas onboarding call script lives in the sales drive"),
    ("pricing", "Discount policy: at most 15% without the CFO's sign-off"),
    ("pricing", "Annual plans are billed up front, monthly plans on the 1st"),
    ("pricing", "Moreau Logistics asked for a 20% discount on the annual plan"),
    ("pricing", "CFO approved 18% for Moreau Logistics, one year only"),
    ("pricing", "Price increase of 5% for all plans from January"),
    ("hiring", "Interviewing two backend candidates next week: Omar and Priya"),
    ("hiring", "Priya accepted the offer, starts on 2 February"),
    ("hiring", "Onboarding buddy for Priya is Tom"),
    ("hiring", "Backend role budget is 85k plus equity"),
    (None, "Boiler service booked with Hansen Heating for Tuesday 9am"),
    (None, "Passport renewal due in March: book the appointment in January"),
    (None, "Garage roof leaks when the wind is from the west"),
    (None, "Roofer quoted 1,200 EUR for the garage roof"),
    (None, "Tom prefers async updates over meetings"),
    (None, "Team offsite in Lisbon, 12-14 June"),
]
LINKS = [(0, 2, "caused_by"), (2, 5, "relates_to"), (3, 0, "part_of_project"), (1, 7, "relates_to"),
         (9, 10, "relates_to"), (10, 7, "relates_to"), (4, 9, "about_person"), (4, 16, "relates_to"),
         (13, 12, "relates_to"), (14, 13, "relates_to"), (14, 20, "about_person"), (15, 12, "relates_to"),
         (18, 19, "relates_to"), (11, 8, "relates_to"), (6, 4, "relates_to"), (21, 20, "relates_to")]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        server = conftest.Server(Path(folder) / "brain").start()
        try:
            with server.client() as client:
                ids = []
                for project, text in NOTES:
                    body = {"content": text, **({"project": project} if project else {})}
                    ids.append(client.post("/capture", json=body).json()["id"])
                for a, b, t in LINKS:
                    client.post("/link", json={"source_id": ids[a], "target_id": ids[b], "type": t}).raise_for_status()
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
                context = browser.new_context(viewport={"width": 1280, "height": 860}, color_scheme="light")
                context.add_init_script(f"localStorage.setItem('{TOKEN_KEY}', '{server.token}')")
                page = context.new_page()
                page.goto(server.url + "/#/graph")
                page.locator("svg.graph a.node").first.wait_for()
                page.locator(f'a.node[data-id="{ids[0]}"] circle').hover()  # its label in full, its links lit
                page.wait_for_timeout(300)
                page.locator(".graph-bar").scroll_into_view_if_needed()
                page.screenshot(path=str(ROOT / "docs/screenshots/graph.png"))
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
