"""The dashboard in a real browser: Debian's chromium (Playwright cannot download browsers here) driven headless by
Playwright for Python, against a real `brain serve`. Fixtures for the dashboard tests, an axe-core scan, and
screenshots written to build/dashboard-screenshots/ (the README shows two of them)."""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, Response, expect, sync_playwright

from .conftest import Server

SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "dashboard-screenshots"
TOKEN_KEY = "secondBrain.token"
# The browser runs in a time zone other than the server's (UTC), so a date shown or sent in the server's time instead
# of the person's is caught.
TIMEZONE = "America/Los_Angeles"


def new_context(browser: Browser, **options) -> BrowserContext:
    """A browser context as every dashboard test uses: desktop size, in the person's (not the server's) time zone."""
    return browser.new_context(**{"viewport": {"width": 1280, "height": 900}, "timezone_id": TIMEZONE, **options})


def chromium_path() -> str:
    """The system chromium; `make test` installs Debian's package. Missing, the dashboard tests fail loudly."""
    path = os.environ.get("BRAIN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise RuntimeError("chromium is not installed: run `make test` (it installs Debian's chromium) or "
                           "`apt-get install chromium`, or set BRAIN_CHROMIUM to a Chromium binary")
    return path


class Chromium:
    """One chromium per test process, launched by the first dashboard test and reused by the next ones.

    Playwright's sync API keeps an asyncio loop marked as running on the main thread while it is started, and the
    tests that talk MCP (anyio.run) or call the Lambda handlers need that thread free: `close` is called before any
    test that does not use the browser (tests/e2e/conftest.py), and tests/conftest.py hands every dashboard test to
    the same worker, one after the other, so one launch serves them all."""

    def __init__(self) -> None:
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None

    def get(self) -> Browser:
        if self._browser is None:
            self._playwright = sync_playwright().start()
            self._browser = self._playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        return self._browser

    def close(self) -> None:
        if self._browser is not None:
            self._browser.close()
            self._playwright.stop()
            self._browser = self._playwright = None


CHROMIUM = Chromium()


@pytest.fixture
def browser() -> Browser:
    return CHROMIUM.get()


class Dashboard:
    """A signed-in tab on one server, failing the test on any script error or console error."""

    def __init__(self, page: Page, server: Server) -> None:
        self.page = page
        self.server = server
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        # An API error the view shows as a sentence is also logged by the browser as a failed resource: not a fault.
        page.on("console", lambda message: message.type == "error" and not message.text.startswith(
            "Failed to load resource") and self.errors.append(message.text))
        # ...but the shell or one of the dashboard's own files failing to load is.
        page.on("response", self._loaded)

    def _loaded(self, response: Response) -> None:
        path = urlsplit(response.url).path
        if response.status >= 400 and (path.endswith("/") or "/dashboard/" in path):
            self.errors.append(f"HTTP {response.status} for {response.url}")

    def open(self, view: str = "") -> Page:
        """The view at #/<view>, once drawn. A hash change is not a page load (waiting for the network to go idle
        returns at once), and the previous view's title stays until the next one is drawn: so this waits for the
        router to say it has drawn this address (#main's data-shown, set when the view's render has finished)."""
        self.page.goto(f"{self.server.url}/#/{view}")
        address = self.page.evaluate("location.hash").replace("\\", "\\\\").replace('"', '\\"')
        expect(self.page.locator(f'#main[data-shown="{address}"]')).to_have_count(1)
        expect(self.page.locator("#view-title")).to_be_visible()
        return self.page

    def sign_in(self, token: str | None = None) -> None:
        self.page.goto(self.server.url + "/")
        self.page.fill("#token", token or self.server.token or "")
        self.page.get_by_role("button", name="Sign in").click()
        expect(self.page.locator("#nav")).to_be_visible()

    def undo_after(self, seconds: float) -> None:
        """How long Undo holds an action in this browser (Settings offers 3-20 s; 6 s by default): a test that only
        waits a hold out shortens it, one that presses Undo keeps enough time to press it on a loaded machine."""
        self.page.evaluate(f"localStorage.setItem('secondBrain.undoSeconds', '{seconds}')")

    def screenshot(self, name: str, full_page: bool = True) -> Path:
        """The page (or, with full_page False, what the window shows) as build/dashboard-screenshots/<name>.png."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path

    def accessible_light_and_dark(self) -> None:
        """No serious or critical violation in either colour scheme (the page is left in dark)."""
        for scheme in ("light", "dark"):
            self.page.emulate_media(color_scheme=scheme)
            assert self.accessibility() == [], scheme

    def accessible_at_phone_width(self) -> None:
        """At 390 px: no serious or critical violation, and nothing scrolls sideways."""
        self.page.set_viewport_size({"width": 390, "height": 800})
        assert self.accessibility() == []
        assert self.page.evaluate("document.documentElement.scrollWidth") <= 390

    def covered_controls(self) -> list[str]:
        """The header's and the navigation's visible links and buttons that something else covers at their centre
        (a person tapping there would hit that instead), each named with what covers it."""
        return self.page.evaluate("""() => {
          const covered = [];
          for (const box of document.querySelectorAll("#top, #nav")) {
            for (const control of box.querySelectorAll("a, button")) {
              const r = control.getBoundingClientRect();
              if (!r.width || !r.height || getComputedStyle(control).visibility === "hidden") continue;
              const x = r.left + r.width / 2, y = r.top + r.height / 2;
              if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
              const hit = document.elementFromPoint(x, y);
              if (hit && !control.contains(hit) && !hit.contains(control)) {
                covered.push(`${control.textContent.trim() || control.getAttribute("aria-label")} under `
                             + `${hit.tagName.toLowerCase()}.${[...hit.classList].join(".")}`);
              }
            }
          }
          return covered;
        }""")

    def labels_beside_their_fields(self) -> list[str]:
        """The labels (on the current view) whose words run on one line with the field they hold: a label's text
        sits above its field, unless the two are a pair (a checkbox or a radio button beside its words, or a label
        marked `check`, such as the list's "Sort")."""
        return self.page.evaluate("""() => {
          const bad = [];
          for (const label of document.querySelectorAll("#main label:not(.check)")) {  // .check: a declared pair
            const field = label.querySelector("input:not([type=checkbox]):not([type=radio]), select, textarea");
            if (!field || !field.getClientRects().length) continue;
            const words = [...label.childNodes].find((n) => n.nodeType === 3 && n.textContent.trim());
            if (!words) continue;
            const range = document.createRange();
            range.selectNodeContents(words);
            const said = range.getBoundingClientRect(), box = field.getBoundingClientRect();
            if (said.width && box.top < said.bottom - 2) bad.push(label.textContent.trim().slice(0, 40));
          }
          return bad;
        }""")

    def clipped_fields(self) -> list[str]:
        """The fields (on the current view) whose placeholder, or value the page filled in, is wider than the box
        it is shown in: a person reads "words from a me" and guesses the rest. Measured with the field's own font
        on a canvas; what a person types is theirs to make long."""
        return self.page.evaluate("""() => {
          const canvas = document.createElement("canvas").getContext("2d");
          const clipped = [];
          for (const field of document.querySelectorAll("#top input, #main input, #main select")) {
            if (!field.getClientRects().length || ["checkbox", "radio", "hidden", "file", "range", "color"]
                .includes(field.type)) continue;
            const style = getComputedStyle(field);
            const said = field.tagName === "SELECT" ? field.selectedOptions[0]?.textContent || ""
              : field.value === field.defaultValue && field.value ? field.value : field.value ? "" : field.placeholder;
            if (!said) continue;
            canvas.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
            const room = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
              - (field.tagName === "SELECT" || field.type === "search" ? 16 : 0);  // a select's arrow, a search
              // box's clear button (chromium keeps its room while the box is empty)
            if (canvas.measureText(said).width > room + 1) clipped.push(`#${field.id || field.name}: ${said}`);
          }
          return clipped;
        }""")

    def accessibility(self) -> list[dict]:
        """axe-core's serious and critical violations on the current view (axe.min.js from axe-playwright-python)."""
        import axe_playwright_python

        source = (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text()
        self.page.evaluate(source)
        result = self.page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
                 "nodes": [n["html"][:200] for n in v["nodes"][:3]]}
                for v in result["violations"] if v["impact"] in ("serious", "critical")]


@pytest.fixture
def dashboard(browser: Browser, server: Server) -> Iterator[Dashboard]:
    context = new_context(browser)
    page = context.new_page()
    page.set_default_timeout(10_000)
    board = Dashboard(page, server)
    page.goto(server.url + "/")
    page.evaluate(f"localStorage.setItem('{TOKEN_KEY}', '{server.token}')")
    page.reload()
    expect(page.locator("#nav")).to_be_visible()
    yield board
    context.close()
    assert not board.errors, board.errors
