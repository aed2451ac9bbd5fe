// The dashboard's shell, the page's one script: the sign-in screen, the navigation, the router that loads each view
// (a module in views/, loaded when first visited, exporting `default { title, render(main, params) }`; render fills
// `main` and may return a cleanup function), keyboard shortcuts, the theme switch and the palette. What the views
// share lives in app.js, which imports nothing of the dashboard's: views never import the shell.

import {
  applyTheme, clear, failure, flushOutbox, focusTitle, h, heading, isAdmin, link, ME_KEY, NAV, navigate, refreshMe,
  session, shell, THEME_KEY, token, TOKEN_KEY,
} from "./app.js";
import { setupPalette } from "./palette.js";

// ---------------------------------------------------------------------------------------------------------------
// Signed-in state

function signedOut(message) {
  localStorage.removeItem(TOKEN_KEY);
  session.me = null;
  routing++; // a view still loading draws nothing more
  if (cleanup) cleanup();
  cleanup = null;
  showSignIn(message);
}

/** The sign-in screen; if it is already showing, only its message changes (a token being typed stays). */
function showSignIn(message) {
  const shown = document.getElementById("signin-status");
  if (shown) {
    if (message) clear(shown, message).className = "error";
    shown.setAttribute("role", "alert");
    return;
  }
  document.getElementById("top").hidden = true;
  document.getElementById("nav").hidden = true;
  const main = document.getElementById("main");
  const input = h("input", { id: "token", name: "token", type: "password", autocomplete: "current-password",
    required: true });
  const status = h("p", { id: "signin-status", class: message ? "error" : "muted", role: message ? "alert" : null },
    message || "Enter the bearer token of this brain. It is kept in this browser only.");
  const form = h("form", { class: "signin card", onsubmit: async (event) => {
    event.preventDefault();
    localStorage.setItem(TOKEN_KEY, input.value.trim());
    try {
      await start();
    } catch (error) {
      if (error.status !== 401) clear(status, error.message);
    }
  } },
  h("h1", { id: "view-title" }, "Sign in to Second Brain"), status,
  h("label", { for: "token" }, "Token"), input, h("button", { type: "submit" }, "Sign in"));
  clear(main, form);
  input.focus();
}

/** What the signed-in person must be told at every sign-in until they act on it: someone else replaced their
 * token (and so saw it). Settings replaces it for them. */
function showNotice() {
  const notice = document.getElementById("notice");
  const text = session.me && session.me.notice;
  notice.hidden = !text;
  if (text) {
    clear(notice, h("p", null, text), h("a", { href: link("settings", { section: "token" }) },
      "Replace my token"));
  }
}

// On a phone the views are a tab bar at the bottom: these four, and "More" for the rest (app.css, max-width 720px).
const TABS = new Set(["", "capture", "recall", "reminders"]);

async function start() {
  try {
    await refreshMe();
  } catch (error) {
    // No connection: the installed app opens as this browser last knew the person; captures wait in the outbox.
    const known = error.status === 0 ? JSON.parse(localStorage.getItem(ME_KEY) || "null") : null;
    if (!known) throw error;
    session.me = known;
  }
  shared();
  const nav = document.getElementById("nav");
  const views = NAV.filter(([, , role]) => !role || isAdmin());
  const more = h("div", { class: "more-sheet", id: "more-sheet", hidden: true },
    h("ul", null, views.filter(([view]) => !TABS.has(view)).map(([view, label]) =>
      h("li", null, h("a", { href: link(view), dataset: { view } }, label)))));
  const moreButton = h("button", { type: "button", class: "more-button", "aria-expanded": "false",
    "aria-controls": "more-sheet" }, "More");
  const toggle = (open) => {
    more.hidden = !open;
    moreButton.setAttribute("aria-expanded", String(open));
  };
  moreButton.addEventListener("click", () => toggle(more.hidden));
  more.addEventListener("click", (event) => { if (event.target.closest("a")) toggle(false); });
  window.addEventListener("hashchange", () => toggle(false));
  clear(nav, h("ul", null, views.map(([view, label]) =>
    h("li", { class: TABS.has(view) ? "tab" : "extra" }, h("a", { href: link(view), dataset: { view } }, label))),
  h("li", { class: "more-item" }, moreButton)), more);
  nav.hidden = false;
  document.getElementById("top").hidden = false;
  await route();
}

/** What was shared to the installed app (its share target) or sent by the bookmarklet arrives as the page's query
 * (?title=&text=&url=): it opens Capture with those words, and the query leaves the address. */
function shared() {
  const query = new URLSearchParams(location.search);
  const words = ["title", "url", "text"].map((name) => (query.get(name) || "").trim());
  if (!words.some(Boolean)) return;
  const [title, url, text] = words;
  const content = [title, url && !text.includes(url) ? url : "", text].filter(Boolean).join("\n");
  history.replaceState(null, "", location.pathname + link("capture", { text: content }));
}

// ---------------------------------------------------------------------------------------------------------------
// Router

const VIEWS = {
  "": "home", capture: "capture", recall: "recall", memories: "memories", entry: "entry", graph: "graph",
  projects: "projects", reminders: "reminders", team: "team", settings: "settings", chat: "chat", backup: "backup",
  integrations: "integrations",
};
let cleanup = null;
let routing = 0;

function parseHash() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [view, search] = hash.split("?");
  return { view: view || "", params: Object.fromEntries(new URLSearchParams(search || "")) };
}

async function route() {
  if (!session.me) return;
  const main = document.getElementById("main");
  // "#main" (the skip link) or "#patterns" is a place on the page, not a view: the browser scrolls to it.
  if (location.hash && !location.hash.startsWith("#/") && main.querySelector(".view")) return;
  const { view, params } = location.hash.startsWith("#/") ? parseHash() : { view: "", params: {} };
  const name = VIEWS[view];
  const turn = ++routing;
  const address = location.hash;
  // Busy while the view draws (a screen reader waits for it); once drawn, `data-shown` names the address it shows.
  main.setAttribute("aria-busy", "true");
  const focusedBefore = document.activeElement;
  if (cleanup) cleanup();
  cleanup = null;
  // The header's search box holds what it last searched only while its answer is on screen: elsewhere it is
  // empty, as a search box a person has not typed in (unless they are typing in it now).
  const search = document.getElementById("search-input");
  if (document.activeElement !== search) search.value = view === "recall" ? params.q || "" : "";
  for (const a of document.querySelectorAll("#nav a")) {
    const current = a.dataset.view === view || (view === "entry" && a.dataset.view === "memories");
    if (current) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (!name) {
    clear(main, heading("Not found"), h("p", null, "There is no such view. ", h("a", { href: "#/" }, "Go home")));
    shown(main, address);
    return;
  }
  try {
    const module = await import(`./views/${name}.js`);
    if (turn !== routing) return;
    document.title = module.default.title + " · Second Brain";
    // Each visit renders into its own element: a view still loading when the person moves on writes into a
    // detached element, never over the next view.
    const container = h("div", { class: "view", dataset: { view: name } });
    clear(main, container);
    const result = await module.default.render(container, params);
    if (typeof result === "function") {
      if (turn === routing) cleanup = result;
      else result(); // the person moved on while it loaded
    }
    // A screen reader hears the new view; the keyboard starts from it. A view that focused a field keeps it, and
    // so does whatever the person went to while the view loaded (typing in the search box must not be cut, nor a
    // tab to the skip link undone).
    const focused = document.activeElement;
    const moved = focused !== focusedBefore && focused !== document.body;
    if (turn === routing && !main.contains(focused) && !moved) focusTitle();
  } catch (error) {
    if (turn !== routing || error.status === 401) return;
    clear(main, heading("Something went wrong"), failure(error));
  } finally {
    if (turn === routing) shown(main, address);
  }
}

function shown(main, address) {
  main.removeAttribute("aria-busy");
  main.dataset.shown = address;
}

// ---------------------------------------------------------------------------------------------------------------
// Keyboard

function typing(target) {
  if (!target) return false;
  if (target.tagName === "INPUT") return !["checkbox", "radio", "button", "submit", "reset"].includes(target.type);
  return target.isContentEditable || ["TEXTAREA", "SELECT"].includes(target.tagName);
}

function move(step) {
  const items = [...document.querySelectorAll("#main .item")];
  if (!items.length) return;
  const index = items.indexOf(document.activeElement.closest(".item"));
  const next = items[Math.max(0, Math.min(items.length - 1, index < 0 ? 0 : index + step))];
  for (const item of items) item.classList.toggle("selected", item === next);
  next.focus();
  next.scrollIntoView({ block: "nearest" });
}

let pendingG = false;

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || !session.me) return;
  const help = document.getElementById("help");
  if (typing(event.target)) {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  if (help.open) return;
  const goto = { h: "", m: "memories", r: "reminders", p: "projects", s: "settings", g: "graph", c: "chat" };
  if (pendingG) {
    pendingG = false;
    if (event.key in goto) {
      event.preventDefault();
      navigate(goto[event.key]);
    }
    return;
  }
  switch (event.key) {
    case "/": {
      event.preventDefault();
      const input = document.querySelector("#main input[name=query]") || document.getElementById("search-input");
      input.focus();
      input.select();
      break;
    }
    case "c":
      event.preventDefault();
      navigate("capture");
      break;
    case "j":
      move(1);
      break;
    case "k":
      move(-1);
      break;
    case "g":
      pendingG = true;
      setTimeout(() => { pendingG = false; }, 1500);
      break;
    case "?":
      help.showModal();
      break;
    case "Enter": {
      const item = document.activeElement.closest && document.activeElement.closest(".item");
      if (item && item.dataset.href && document.activeElement === item) location.hash = item.dataset.href;
      break;
    }
    default:
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Theme switch and start

function toggleTheme() {
  const dark = document.documentElement.dataset.theme
    ? document.documentElement.dataset.theme === "dark"
    : matchMedia("(prefers-color-scheme: dark)").matches;
  const theme = dark ? "light" : "dark";
  localStorage.setItem(THEME_KEY, theme);
  applyTheme(theme);
}

applyTheme(localStorage.getItem(THEME_KEY));
document.getElementById("theme").addEventListener("click", toggleTheme);
document.getElementById("keys").addEventListener("click", () => document.getElementById("help").showModal());
document.getElementById("signout").addEventListener("click", () => signedOut(""));
document.getElementById("search").addEventListener("submit", (event) => {
  event.preventDefault();
  const q = document.getElementById("search-input").value.trim();
  if (q) navigate("recall", { q });
});
document.addEventListener("keydown", onKey);
window.addEventListener("hashchange", route);
setupPalette();
Object.assign(shell, { signedOut, reload: route, noticed: showNotice });

if (token()) {
  start().then(() => flushOutbox()).catch((error) => {
    if (error.status !== 401) showSignIn(error.message);
  });
} else {
  showSignIn("");
}
window.addEventListener("online", () => { if (session.me) flushOutbox(); });
// The installed app: the worker keeps the page's files for opening offline (and shows push notifications).
// A page whose loading began before the worker was active is not taken by the worker's claim (only pages already
// running are): it asks the worker to take it once the worker is ready, so it too opens offline and gets pushes.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("dashboard/sw.js", { scope: "./" }).catch(() => {});
  navigator.serviceWorker.ready.then((registration) => {
    if (!navigator.serviceWorker.controller && registration.active) registration.active.postMessage("claim");
  });
}
