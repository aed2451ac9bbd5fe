// What every view uses: the API client, the signed-in session, the DOM helpers and the words things are said in.
// The shell (shell.js: the router, the sign-in screen, the keyboard, the palette) loads the views and fills `shell`
// below; this module imports no other of the dashboard's, so views, palette and shell all import it and nothing
// imports in a circle (tests/service/test_no_import_cycles.py).

export const TOKEN_KEY = "secondBrain.token";
export const THEME_KEY = "secondBrain.theme";

/** What the shell does for the helpers here (it fills these as it starts): sign out with a message, draw the
 * current view again, show what the signed-in person must be told. */
export const shell = {
  signedOut: (message) => {},
  reload: async () => {},
  noticed: () => {},
};

// ---------------------------------------------------------------------------------------------------------------
// API

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

export function token() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== "") search.set(key, value);
  }
  const text = search.toString();
  return text ? "?" + text : "";
}

/** The sentence an API error body carries: `error` as a string, or its message, else the HTTP status. */
function sentence(status, body) {
  const error = body && (body.error ?? body.message ?? body.detail);
  if (typeof error === "string" && error) return error;
  if (error && typeof error.message === "string") return error.message;
  if (status === 0) return "The server could not be reached. Check your connection and try again.";
  return `The server answered ${status} without saying why.`;
}

// How long a request may go unanswered before the page says so (a button never spins for ever). The few that do
// long work on purpose (an import page, an export, a sync, a chat) pass `timeout: 0` and say their progress.
export const ANSWER_WITHIN_MS = 10_000;

async function request(method, path, { params, body, raw, signal, keepalive, headers: extra,
  timeout = ANSWER_WITHIN_MS } = {}) {
  const headers = { ...extra, Authorization: "Bearer " + token() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const signals = [signal, timeout ? AbortSignal.timeout(timeout) : null].filter(Boolean);
  let response;
  try {
    // Relative to the page, so a deployment under a path prefix (API Gateway's /Prod/) reaches its own API.
    response = await fetch(path.replace(/^\//, "") + query(params), {
      method, headers, keepalive, body: body === undefined ? undefined : JSON.stringify(body),
      signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
    });
  } catch (error) {
    if (error.name === "TimeoutError") {
      throw new ApiError(0, `The server did not answer within ${timeout / 1000} seconds. It may still finish: `
        + "look again in a moment.");
    }
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, sentence(0));
  }
  if (response.status === 401) {
    shell.signedOut("Your token was refused: it is wrong, or it was revoked. Enter a valid token to go on.");
    throw new ApiError(401, "Signed out");
  }
  if (raw && response.ok) return response;
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok || (data && data.ok === false && !data.duplicate)) {
    throw new ApiError(response.status, sentence(response.status, data), data);
  }
  return data;
}

export const api = {
  get: (path, params, options) => request("GET", path, { ...options, params }),
  post: (path, body, params, options) => request("POST", path, { ...options, body: body ?? {}, params }),
  patch: (path, body) => request("PATCH", path, { body }),
  del: (path) => request("DELETE", path),
  raw: (method, path, options) => request(method, path, { ...options, raw: true }),
};

// ---------------------------------------------------------------------------------------------------------------
// DOM helpers

/** h("a", {href, class, onclick}, child, ...): an element; strings become text nodes, null/false are skipped. */
export function h(tag, attrs, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") element.addEventListener(key.slice(2), value);
    else if (key === "class") element.className = value;
    else if (key === "style") element.style.cssText = value; // CSSOM: the content security policy forbids style=""
    else if (key === "dataset") Object.assign(element.dataset, value);
    else if (key === "value" || (key in element && typeof value !== "string")) element[key] = value;
    else element.setAttribute(key, value === true ? "" : value);
  }
  append(element, children);
  return element;
}

/** Appends children as h() does: strings become text nodes, null/undefined/false are skipped. */
export function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
}

export function clear(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** A hash link to a view: link("recall", {q: "x"}) -> "#/recall?q=x". */
export function link(view, params) {
  return "#/" + (view || "") + query(params);
}

export function navigate(view, params) {
  location.hash = link(view, params);
}

/** "3 memories", "1 memory": `plural(n, "memory", "memories")`. */
export function plural(n, one, many = one + "s") {
  return `${n} ${n === 1 ? one : many}`;
}

/** A date as the person's local YYYY-MM-DD (what a date input holds). */
export function localDate(date = new Date()) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** "work, idea ,," -> ["work", "idea"]. */
export function splitList(text) {
  return text.split(",").map((part) => part.trim()).filter(Boolean);
}

export function isAdmin() {
  return Boolean(session.me && session.me.role === "admin");
}

export function time(ms) {
  if (ms === null || ms === undefined) return "";
  return new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function ago(ms) {
  const seconds = Math.round((Date.now() - ms) / 1000);
  const units = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400], ["hour", 3600],
    ["minute", 60]];
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return format.format(-Math.round(seconds / size), unit);
  }
  return "just now";
}

/** A date or datetime-local input's value as a local time ("2026-03-01" is local midnight, not UTC's). */
export function localTime(value) {
  return new Date(/T/.test(value) ? value : value + "T00:00");
}

export const HOUR_MS = 3600000;
export const DAY_MS = 86400000;

/** When it is, as a person says it: "2 days overdue", "today at 18:15", "Friday at 09:00", "3 Mar 2027". */
export function dueWords(ms, now = Date.now()) {
  const moment = new Date(ms);
  const midnight = moment.getHours() === 0 && moment.getMinutes() === 0;
  const clock = midnight ? "" : " at " + moment.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  if (ms < now) {
    const late = now - ms;
    const [n, unit] = late >= DAY_MS ? [Math.floor(late / DAY_MS), "day"]
      : late >= HOUR_MS ? [Math.floor(late / HOUR_MS), "hour"] : [Math.max(1, Math.floor(late / 60000)), "minute"];
    return `${n} ${unit}${n === 1 ? "" : "s"} overdue`;
  }
  const days = dayNumber(moment) - dayNumber(new Date(now));
  if (days === 0) return "today" + clock;
  if (days === 1) return "tomorrow" + clock;
  if (days < 7) return moment.toLocaleDateString(undefined, { weekday: "long" }) + clock;
  const sameYear = moment.getFullYear() === new Date(now).getFullYear();
  const year = sameYear ? undefined : "numeric";
  return moment.toLocaleDateString(undefined, { day: "numeric", month: "short", year })
    + clock;
}

/** Days since the epoch on the person's calendar (a local date, whatever the hour). */
export function dayNumber(moment) {
  return Math.round(new Date(moment.getFullYear(), moment.getMonth(), moment.getDate()).getTime() / DAY_MS);
}

/** <time> with the local date and time, and how long ago on hover. */
export function when(ms) {
  return h("time", { datetime: new Date(ms).toISOString(), title: ago(ms) }, time(ms));
}

// Tags the brain sets for its own bookkeeping (domain/text.py PIPELINE_MARKERS, the reserved prefixes): shown only
// when the person asks (Settings, "Show the brain's own tags"), never as topics.
const SYSTEM_TAGS = new Set(["synthesized", "auto-pattern", "auto-insight", "duplicate-candidate", "possible-update",
  "contradiction-resolved", "rolled-up"]);
const SYSTEM_PREFIXES = ["stale:", "capsule:", "capsule-slot:", "status:", "volatility:state"];
export const SHOW_SYSTEM_TAGS_KEY = "secondBrain.showSystemTags";
// The one dictionary of the brain's words as a person reads them: on cards, filters, timelines, links and
// Settings alike (a value the API sends, by what it is).
export const WORDS = {
  kind: { episodic: "event", semantic: "fact", procedural: "how-to" },
  when_kind: { wake: "bring it back then", due: "due then", event: "happens then" },
  provenance: { explicit: "linked by a person", inferred: "suggested by the brain", system: "made by the brain" },
  status: { canonical: "confirmed", draft: "draft", deprecated: "retired" },
  volatility: { volatile: "may change soon", durable: "lasting", state: "can change" },
};
/** A value of the API in a person's words (`group`: kind, when_kind, provenance, status, volatility). */
export function word(group, value) {
  return WORDS[group]?.[value] ?? value;
}
// Bookkeeping tags a person reads as words.
export const TAG_WORDS = Object.fromEntries(["kind", "status", "volatility"].flatMap((group) =>
  Object.entries(WORDS[group]).filter(([value]) => !(group === "volatility" && value === "state")
    && !(group === "status" && value !== "deprecated")).map(([value, said]) => [`${group}:${value}`, said])));
/** A link's strength as a person reads it: a share, not a float ("73%"). */
export function strength(weight) {
  return `${Math.round(Number(weight) * 100)}%`;
}

/** Whether a tag is one of the brain's own markers, never a topic. */
export function isSystemTag(tag) {
  return SYSTEM_TAGS.has(tag) || SYSTEM_PREFIXES.some((prefix) => tag.startsWith(prefix));
}

/** Tags people read: bookkeeping (kind:, status:, volatility:) becomes plain words, a project tag names the project,
 * the brain's own markers stay out of sight; the rest link to Memories. */
export function tagList(tags) {
  const showSystem = localStorage.getItem(SHOW_SYSTEM_TAGS_KEY) === "1";
  return h("ul", { class: "tags" }, (tags || []).map((tag) => {
    if (tag in TAG_WORDS) return h("li", { class: "tag system" }, TAG_WORDS[tag]);
    if (tag.startsWith("project:")) {
      const project = tag.slice(8);
      return h("li", { class: "tag" }, h("a", { href: link("memories", { project }) }, "project " + project));
    }
    if (isSystemTag(tag)) return showSystem ? h("li", { class: "tag system" }, tag) : null;
    return h("li", { class: "tag" }, h("a", { href: link("memories", { tag }) }, "#" + tag));
  }));
}

/** Where memories came from, in words: "api" is the API, "claude" an AI client over MCP. */
export function sourceName(source) {
  return { api: "the API", claude: "AI clients", mcp: "AI clients", import: "imports", dashboard: "the dashboard",
    cli: "the command line" }[source] ?? source;
}

export function workspaceName(workspace) {
  return workspace === "personal" ? "personal" : workspace === "company" ? "company" : workspace;
}

/** The text with each query word marked: <mark> around case-insensitive matches of words of 2+ letters. */
export function highlight(text, words) {
  const terms = [...new Set((words || []).map((w) => w.toLowerCase()).filter((w) => w.length > 1))];
  if (!terms.length) return [text];
  const pattern = new RegExp("(" + terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") + ")",
    "gi");
  return text.split(pattern).map((part, i) => (i % 2 ? h("mark", null, part) : part));
}

export function queryWords(q) {
  return (q || "").split(/[^\p{L}\p{N}_.#-]+/u).filter(Boolean);
}

/** "← Previous 26–50 of 80 Next →" over an offset-paged list (nothing when one page holds it all); go(offset)
 * shows another page. `next`: the offset of the page after this one, null where there is none. */
export function pager({ label, offset, shown, total, size, go, back = "← Previous", forward = "Next →",
  next = offset + size }) {
  if (total <= size) return null;
  const button = (text, to) => h("button", { type: "button", class: "secondary", onclick: () => go(to) }, text);
  const last = offset + shown;
  return h("nav", { class: "pager", "aria-label": label },
    offset > 0 ? button(back, Math.max(0, offset - size)) : null,
    h("span", { class: "muted" }, `${offset + 1}–${last} of ${total}`),
    next !== null && last < total ? button(forward, next) : null);
}

/** An error as a sentence in the view, with role=alert so screen readers hear it. */
export function failure(error) {
  if (error && error.name === "AbortError") return null;
  return h("p", { class: "error", role: "alert" }, error && error.message ? error.message : String(error));
}

/** A short message in the corner: news fades after 4 s; an error is announced at once and stays until dismissed. */
export function toast(message, kind = "info") {
  const item = h("div", { class: "toast " + kind, role: kind === "error" ? "alert" : null }, message);
  if (kind === "error") {
    item.append(" ", h("button", { type: "button", class: "ghost", "aria-label": "Dismiss",
      onclick: () => item.remove() }, "×"));
  } else {
    setTimeout(() => item.remove(), 4000);
  }
  document.getElementById("toasts").append(item);
}

// How long Undo waits before a held action is sent: the person's choice in Settings (this browser), 6 s unless set.
export const UNDO_SECONDS_KEY = "secondBrain.undoSeconds";
export const UNDO_CHOICES = [3, 6, 10, 20];
export function undoSeconds() {
  const chosen = Number(localStorage.getItem(UNDO_SECONDS_KEY));
  return chosen > 0 && chosen <= 60 ? chosen : 6;
}
const held = new Set(); // the actions waiting out their undo time: sent at once if the page is left

/** An action the server cannot take back (forget, clear) or that moves a reminder (snooze), held for a few seconds
 * behind an Undo button instead of a confirm() dialog. `hide` shows it done at once; `send(keepalive)` makes the
 * request when the time is up (or as the page is left); `undo` puts back what `hide` changed. A failed request
 * is said, and undone. */
export function withUndo(message, { hide, send, undo, done }) {
  let state = "held";
  const cancel = h("button", { type: "button", class: "secondary" }, "Undo");
  const item = h("div", { class: "toast info held" }, message, " ", cancel);
  const commit = async (keepalive = false) => {
    if (state !== "held") return;
    state = "sent";
    held.delete(commit);
    clearTimeout(timer);
    item.remove();
    try {
      await send(keepalive);
      if (done) await done();
    } catch (error) {
      if (undo) undo();
      if (error.status !== 401) toast(error.message, "error");
    }
  };
  cancel.addEventListener("click", () => {
    if (state !== "held") return;
    state = "undone";
    held.delete(commit);
    clearTimeout(timer);
    item.remove();
    if (undo) undo();
    toast("Undone.");
  });
  if (hide) hide();
  held.add(commit);
  const timer = setTimeout(() => commit(), undoSeconds() * 1000);
  document.getElementById("toasts").append(item);
  cancel.focus({ preventScroll: true });
}

window.addEventListener("pagehide", () => {
  for (const commit of [...held]) commit(true);
});

/** A question in place of a button, for what cannot be undone, instead of the browser's confirm(): `yes` (a button
 * named `answer`) runs `action(yes)`; Cancel or Escape puts the button back, focused. */
export function ask(button, question, answer, action) {
  const yes = h("button", { type: "button", class: "danger" }, answer);
  const no = h("button", { type: "button", class: "secondary" }, "Cancel");
  const box = h("span", { class: "ask", role: "group", "aria-label": question }, h("span", null, question), yes, no);
  let answering = false; // once answered, the question stays until the action is done
  const back = () => {
    if (!box.isConnected) return;
    box.replaceWith(button);
    button.focus();
  };
  no.addEventListener("click", back);
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || answering) return;
    event.preventDefault();
    event.stopPropagation();
    back();
  });
  yes.addEventListener("click", async () => {
    answering = true;
    no.disabled = true;
    try {
      await action(yes);
    } finally {
      back();
    }
  });
  button.replaceWith(box);
  no.focus();
}

/** Runs an action from a button: disables it while running, shows errors as a toast, returns the result. */
export async function act(button, action) {
  if (button) button.disabled = true;
  try {
    return await action();
  } catch (error) {
    if (error.status !== 401) toast(error.message, "error");
    return undefined;
  } finally {
    if (button) button.disabled = false;
    if (document.activeElement === document.body) focusTitle(); // the button was redrawn away: keep the place
  }
}

/** Focus the view's title (not a tab stop of its own), so the keyboard and a screen reader start from there. */
export function focusTitle() {
  const title = document.getElementById("view-title");
  if (title) {
    title.tabIndex = -1;
    title.focus({ preventScroll: true });
  }
}

export function heading(text, ...extra) {
  return h("div", { class: "view-head" }, h("h1", { id: "view-title" }, text), ...extra);
}

/** A short memory card: content (highlighted), tags, where and when; the whole card opens the entry. */
export function memoryCard(memory, { words, extra, anchor = true } = {}) {
  return h("article", { class: "item card", tabindex: "-1", dataset: { href: link("entry", { id: memory.id }) } },
    h("p", { class: "content" },
      h("a", { href: link("entry", { id: memory.id }) }, highlight(memory.content ?? memory.label ?? "", words))),
    h("div", { class: "meta" }, anchor ? whenBadge(memory) : null, tagList(memory.tags),
      h("span", { class: "muted" }, workspaceName(memory.workspace || "personal")),
      memory.created_at ? when(memory.created_at) : null, extra));
}

// A time anchor's kind in words (when_kind): the memory card, the memory's page and its timeline say it so.
export const WHEN_WORDS = { due: "Due", event: "Happens", wake: "Reminder" };

/** A memory's time anchor in words ("Due: tomorrow at 09:00", "Happened: 3 days ago"), or null. */
export function whenBadge(memory, now = Date.now()) {
  if (memory.when_at === null || memory.when_at === undefined) return null;
  const past = memory.when_at < now;
  const words = memory.when_kind === "event" ? (past ? `Happened: ${ago(memory.when_at)}`
    : `Happens: ${dueWords(memory.when_at, now)}`)
    : `${WHEN_WORDS[memory.when_kind] ?? "Due"}: ${dueWords(memory.when_at, now)}`;
  return h("span", { class: `badge when${past && memory.when_kind !== "event" ? " overdue" : ""}`,
    title: time(memory.when_at) }, words);
}

// ---------------------------------------------------------------------------------------------------------------
// Signed-in state

export const session = { me: null };

export const NAV = [
  ["", "Home"], ["capture", "Capture"], ["recall", "Recall"], ["memories", "Memories"], ["graph", "Graph"],
  ["projects", "Projects"], ["reminders", "Reminders"], ["team", "Team", "admin"], ["settings", "Settings"],
  ["chat", "Chat"], ["integrations", "Integrations"], ["backup", "Backup"],
];

export const ME_KEY = "secondBrain.me";

/** Who is signed in, from the server; kept in this browser so the installed app can open without a connection. */
export async function refreshMe() {
  const me = await api.get("/team/me");
  session.me = me.me;
  localStorage.setItem(ME_KEY, JSON.stringify(me.me));
  shell.noticed();
}

// ---------------------------------------------------------------------------------------------------------------
// The outbox: captures typed without a connection, kept in this browser and sent once it is back. Each keeps the
// Idempotency-Key it was first sent with, so a note whose answer was lost on the way is stored once, never twice.

export const OUTBOX_KEY = "secondBrain.outbox";

/** A key for one capture: random, the same for every retry of it. */
export function captureKey() {
  if (crypto.randomUUID) return crypto.randomUUID(); // secure pages only (https, localhost)
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function outbox() {
  try {
    const items = JSON.parse(localStorage.getItem(OUTBOX_KEY) || "[]");
    return Array.isArray(items) ? items : [];
  } catch {
    return [];
  }
}

function keepOutbox(items) {
  if (items.length) localStorage.setItem(OUTBOX_KEY, JSON.stringify(items));
  else localStorage.removeItem(OUTBOX_KEY);
  document.dispatchEvent(new CustomEvent("outbox"));
}

/** Keep a capture the server could not be reached for, with the key it was sent with. */
export function queueCapture(body, key) {
  keepOutbox([...outbox(), { key, body, at: Date.now() }]);
}

/** Drop one kept capture (a refused one the person has read). */
export function dropQueued(key) {
  keepOutbox(outbox().filter((item) => item.key !== key));
}

let flushing = null;

/** Send what waits, oldest first, each with its own key; stops at the first that cannot reach the server. A
 * capture the server refuses (its answer says why) stays, marked with the reason, for the person to read on
 * Capture: never sent again, never silently dropped. Several calls at once share one run. */
export function flushOutbox() {
  flushing ??= (async () => {
    let sent = 0;
    for (const item of outbox().filter((queued) => !queued.refused)) {
      try {
        await api.post("/capture", item.body, undefined, { headers: { "Idempotency-Key": item.key } });
        dropQueued(item.key);
        sent += 1;
      } catch (error) {
        if (error.status === 0 || error.status === 401 || error.status >= 500) break; // later, as it was
        keepOutbox(outbox().map((queued) => (queued.key === item.key ? { ...queued, refused: error.message }
          : queued)));
      }
    }
    if (sent) toast(`Captured ${plural(sent, "note")} kept while the connection was down.`);
    return sent;
  })().finally(() => { flushing = null; });
  return flushing;
}

/** Keep a token the person was just given (by replacing their own) for the next requests. */
export function keepToken(value) {
  localStorage.setItem(TOKEN_KEY, value);
}

/** Draw the current view again (after a change it shows). */
export function reload() {
  return shell.reload();
}

// ---------------------------------------------------------------------------------------------------------------
// Theme

/** The colour scheme this browser uses: "light", "dark", or "" (the system's). */
export function setTheme(theme) {
  if (theme) localStorage.setItem(THEME_KEY, theme);
  else localStorage.removeItem(THEME_KEY);
  applyTheme(theme);
}

export function currentTheme() {
  return localStorage.getItem(THEME_KEY) || "";
}

export function applyTheme(theme) {
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}
