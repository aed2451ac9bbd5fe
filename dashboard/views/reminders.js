// Reminders: what is due or overdue (snooze to a chosen date and time, or clear), the open loops (task-tagged
// commitments, 25 a page, resolved as done or as not a task), and push: subscribe this device through the browser's
// Push API (the service worker at dashboard/sw.js, scoped to the page's folder), content-free notifications,
// unsubscribe, and for admins a test send with what each device's push service answered.
import { act, api, clear, dayNumber, dueWords, failure, h, heading, HOUR_MS, isAdmin, localDate, localTime,
  memoryCard, pager, time, toast, withUndo } from "../app.js";

const PAGE = 25;
const CONTENT_FREE_KEY = "secondBrain.pushContentFree";
const KINDS = { due: "Due", event: "Event", wake: "Reminder" };

// ---------------------------------------------------------------------------------------------------------------
// Due and overdue

const AHEAD_DAYS = 366; // the agenda reads a year ahead (GET /due?days=, ours): the tax and passport dates too

/** Snooze to a moment (Unix ms, the person's own clock): the card leaves at once, with Undo while it is held. */
function snoozeTo(item, until, refresh) {
  if (!(until > Date.now())) throw new Error("until must be in the future");
  const card = document.querySelector(`.due-item[data-id="${item.id}"]`);
  withUndo(`Snoozed until ${time(until)}.`, {
    hide: () => { if (card) card.hidden = true; },
    undo: () => { if (card) card.hidden = false; },
    send: (keepalive) => api.post("/due/snooze", { id: item.id, until }, undefined, { keepalive }),
    done: refresh,
  });
}

function atNine(daysAhead) {
  const moment = new Date();
  moment.setDate(moment.getDate() + daysAhead);
  moment.setHours(9, 0, 0, 0);
  return moment.getTime();
}

/** The presets a person reaches for: in three hours, tomorrow at 9, next Monday at 9. */
function presets() {
  const monday = (8 - new Date().getDay()) % 7 || 7;
  return [["Tomorrow 9:00", () => atNine(1)], ["In 3 hours", () => Date.now() + 3 * HOUR_MS],
    ["Next Monday 9:00", () => atNine(monday)]];
}

function snoozeForm(item, refresh, others = []) {
  const dateId = "snooze-date-" + item.id;
  const timeId = "snooze-time-" + item.id;
  const date = h("input", { id: dateId, name: "date", type: "date", value: localDate(new Date(Date.now() + 86400000)),
    required: true });
  const clock = h("input", { id: timeId, name: "time", type: "time", value: "09:00" });
  const submit = h("button", { type: "submit", class: "secondary" }, "Snooze");
  const form = h("form", { class: "row snooze", onsubmit: (event) => {
    event.preventDefault();
    act(submit, async () => {
      // The person's own local time, sent as Unix ms so the server's time zone cannot shift it.
      const until = localTime(clock.value ? `${date.value}T${clock.value}` : date.value).getTime();
      if (Number.isNaN(until)) throw new Error("Choose the date to snooze until.");
      snoozeTo(item, until, refresh);
    });
  } },
  h("label", { for: dateId }, "Snooze until", date), h("label", { for: timeId }, "Time (optional)", clock), submit);
  return h("details", { class: "snooze-other" }, h("summary", null, "Other time…"),
    others.length ? h("div", { class: "row" }, others) : null, form);
}

function dueItem(item, overdue, refresh) {
  const clearButton = h("button", { type: "button", class: "secondary", onclick: () => withUndo(
    "Cleared: it is no longer due.", {
      hide: () => { card.hidden = true; },
      undo: () => { card.hidden = false; },
      send: (keepalive) => api.post("/due/clear", { id: item.id }, undefined, { keepalive }),
      done: refresh,
    }) }, "Clear");
  const label = h("span", { class: overdue ? "error" : "warn", title: time(item.when_at) },
    `${KINDS[item.when_kind] || "Due"} · `, h("time", { datetime: new Date(item.when_at).toISOString() },
      dueWords(item.when_at)));
  const card = memoryCard(item, { extra: label, anchor: false }); // the label says its time: once
  card.classList.add("due-item");
  card.dataset.id = item.id;
  const [first, ...others] = presets().map(([text, until]) => {
    const button = h("button", { type: "button", class: "secondary" }, text);
    button.addEventListener("click", () => snoozeTo(item, until(), refresh));
    return button;
  });
  // Two buttons on the card (the likeliest snooze, and Clear); the other snoozes under "Other time…".
  card.append(h("div", { class: "row due-actions" }, first, clearButton), snoozeForm(item, refresh, others));
  return card;
}

export function dueSection() {
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"));
  const title = h("h2", { id: "due-title" }, "Due and overdue");
  const section = h("section", { id: "due", "aria-labelledby": "due-title" }, title, body);
  const refresh = async () => {
    try {
      const due = await api.get("/due");
      clear(title, `Due and overdue (${due.counts.overdue} overdue, ${due.counts.upcoming} in the next 48 hours)`);
      const items = [...due.overdue.map((i) => dueItem(i, true, refresh)),
        ...due.upcoming.map((i) => dueItem(i, false, refresh))];
      clear(body, items.length ? h("div", { class: "list" }, items)
        : h("p", { class: "muted" }, "Nothing is due or overdue in the next 48 hours."));
      return due; // Home counts the overdue from it
    } catch (error) {
      clear(body, failure(error));
      return null;
    }
  };
  return { section, refresh };
}

/** The Reminders view's agenda: every reminder of the coming year, under Overdue, Today, This week and Later. */
export function agendaSection() {
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"));
  const title = h("h2", { id: "due-title" }, "Agenda");
  const summary = h("p", { class: "muted", id: "agenda-counts" });
  const section = h("section", { id: "due", "aria-labelledby": "due-title" }, title, summary, body);
  const refresh = async () => {
    try {
      const due = await api.get("/due", { days: AHEAD_DAYS });
      const today = dayNumber(new Date());
      const groups = [["Overdue", due.overdue], ["Today", []], ["This week", []], ["Later", []]];
      for (const item of due.upcoming) {
        const days = dayNumber(new Date(item.when_at)) - today;
        groups[days <= 0 ? 1 : days < 7 ? 2 : 3][1].push(item);
      }
      clear(summary, groups.map(([name, items]) => `${name}: ${items.length}`).join(" · "));
      const shown = groups.filter(([, items]) => items.length).map(([name, items]) => {
        const id = "agenda-" + name.toLowerCase().replace(" ", "-");
        return h("section", { class: "agenda-group", "aria-labelledby": id },
          h("h3", { id }, name), h("div", { class: "list" }, items.map((i) => dueItem(i, name === "Overdue", refresh))));
      });
      clear(body, shown.length ? shown
        : h("p", { class: "muted" }, "Nothing is due in the coming year. A note that names a time (\"call Bob tomorrow "
          + "at 10\") or a capture with a date sets a reminder."));
      return due;
    } catch (error) {
      clear(body, failure(error));
      return null;
    }
  };
  return { section, refresh };
}

// ---------------------------------------------------------------------------------------------------------------
// Open loops

export function loopSection() {
  let offset = 0;
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"));
  const title = h("h2", { id: "loops-title" }, "Open loops");
  const section = h("section", { id: "loops", "aria-labelledby": "loops-title" }, title,
    h("p", { class: "muted" }, "Commitments tagged as tasks that are not done yet."), body);
  const resolveButton = (loop, action, label) => {
    const button = h("button", { type: "button", class: "secondary", onclick: () => act(button, async () => {
      await api.post("/loops/resolve", { id: loop.id, action });
      toast(action === "done" ? "Marked done." : "No longer a task.");
      await refresh();
    }) }, label);
    return button;
  };
  async function refresh() {
    try {
      let loops = await api.get("/loops", { limit: PAGE, offset });
      if (!loops.loops.length && offset > 0) { // the last item of the last page was resolved: step back a page
        offset = Math.max(0, offset - PAGE);
        loops = await api.get("/loops", { limit: PAGE, offset });
      }
      clear(title, `Open loops (${loops.total})`);
      if (!loops.loops.length) {
        clear(body, h("p", { class: "muted" }, "No open loops."));
        return;
      }
      const cards = loops.loops.map((loop) => {
        const card = memoryCard(loop, { extra: h("span", { class: "actions" }, resolveButton(loop, "done", "Done"),
          resolveButton(loop, "not-task", "Not a task")) });
        card.classList.add("loop-item");
        card.dataset.id = loop.id;
        return card;
      });
      clear(body, h("div", { class: "list" }, cards), pager({ label: "Open loop pages", offset,
        shown: loops.loops.length, total: loops.total, size: PAGE, go: (to) => {
          offset = to;
          refresh();
        } }));
    } catch (error) {
      clear(body, failure(error));
    }
  }
  return { section, refresh };
}

// ---------------------------------------------------------------------------------------------------------------
// Push

function unsupported() {
  if (!window.isSecureContext) {
    return "Push notifications need a secure connection (https), and this page is not on one.";
  }
  if (!("serviceWorker" in navigator)) {
    return "This browser cannot run service workers, so it cannot get push notifications.";
  }
  if (!("PushManager" in window) || !("Notification" in window)) {
    return "This browser has no push support, so it cannot get notifications.";
  }
  return null;
}

function keyBytes(base64url) {
  const text = base64url.replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(text + "=".repeat((4 - (text.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

// The worker's scope is the page's folder ("./": "/Prod/" under API Gateway's stage), so its registration is looked up
// relative to the page too: getRegistration("/") finds nothing under a path prefix.
const SCOPE = "./";

export async function existingSubscription() {
  const registration = await navigator.serviceWorker.getRegistration(SCOPE);
  return registration ? registration.pushManager.getSubscription() : null;
}

const PUSH_WAIT_MS = 8000; // how long registering and subscribing this device may take in all

function withTimeout(promise, ms, message) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The browser's refusals as sentences a person can act on. */
function browserSentence(error) {
  if (error && error.name === "NotAllowedError") {
    return "The browser refused: notifications are blocked for this site. Allow them in the site settings and "
      + "try again.";
  }
  const reason = ((error && error.message) || String(error)).replace(/\.$/, "");
  return `This browser could not subscribe this device (${reason}). Private windows, and browsers without a push `
    + "service, cannot get notifications.";
}

function pushSection() {
  const status = h("p", { id: "push-status", class: "muted", role: "status" }, "Checking this device…");
  const say = (message, kind = "muted") => {
    status.className = kind;
    clear(status, message);
  };
  const free = h("input", { id: "push-content-free", type: "checkbox",
    checked: localStorage.getItem(CONTENT_FREE_KEY) === "true" });
  const subscribeButton = h("button", { type: "button", id: "push-subscribe" }, "Notify this device");
  const unsubscribeButton = h("button", { type: "button", class: "secondary", id: "push-unsubscribe", hidden: true },
    "Stop notifying this device");
  const testButton = isAdmin()
    ? h("button", { type: "button", class: "secondary", id: "push-test" }, "Send a test") : null;
  const results = h("div", { id: "push-results" });
  const section = h("section", { id: "push", "aria-labelledby": "push-title" },
    h("h2", { id: "push-title" }, "Push notifications"),
    h("p", { class: "muted" },
      "Reminders reach this device when something becomes due, even with the dashboard closed."),
    h("div", { class: "push-options" }, free,
      h("label", { for: "push-content-free" },
        "Content-free: notifications say something is due, without the memory's text")),
    h("div", { class: "actions" }, subscribeButton, unsubscribeButton, testButton), status, results);

  const problem = unsupported();
  const showSubscribed = (subscribed) => {
    subscribeButton.hidden = subscribed;
    unsubscribeButton.hidden = !subscribed;
  };
  /** The API's 409 and 503 mean this server has no push keys (or cannot use them): a sentence, not a fault. */
  const apiSentence = (error) => (error.status === 409 || error.status === 503
    ? `Push notifications are not available on this server: ${error.message}` : error.message);

  const register = async (contentFree) => {
    const subscription = await existingSubscription();
    if (!subscription) return null;
    await api.post("/push/subscribe", { subscription: subscription.toJSON(), content_free: contentFree });
    return subscription;
  };

  subscribeButton.addEventListener("click", () => act(subscribeButton, async () => {
    if (problem) return say(problem, "warn");
    say("Asking the server for its push key…");
    let key;
    try {
      key = (await api.get("/push/vapid-public-key")).publicKey;
    } catch (error) {
      if (error.status !== 401) say(apiSentence(error), "error");
      return undefined;
    }
    let subscription;
    try {
      const permission = await Notification.requestPermission();
      if (permission !== "granted") {
        return say("Notifications are blocked for this site, so this device cannot be notified. Allow them in the "
          + "browser's site settings and try again.", "warn");
      }
      say("Subscribing this device…");
      const deadline = Date.now() + PUSH_WAIT_MS; // every step below shares it: the button ends within it
      // Relative, like every request: the page's folder is the scope, under a path prefix too.
      const registration = await navigator.serviceWorker.register("dashboard/sw.js", { scope: SCOPE });
      await withTimeout(navigator.serviceWorker.ready, deadline - Date.now(), "the service worker did not start");
      // A browser whose push service never answers must not leave the button waiting: it ends in a sentence.
      const late = `the browser's push service did not answer in ${PUSH_WAIT_MS / 1000} seconds`;
      subscription = await withTimeout(registration.pushManager.getSubscription(), deadline - Date.now(), late)
        || await withTimeout(registration.pushManager.subscribe({ userVisibleOnly: true,
          applicationServerKey: keyBytes(key) }), deadline - Date.now(), late);
    } catch (error) {
      return say(browserSentence(error), "error");
    }
    try {
      await api.post("/push/subscribe", { subscription: subscription.toJSON(), content_free: free.checked });
    } catch (error) {
      if (error.status !== 401) say(apiSentence(error), "error");
      return undefined;
    }
    showSubscribed(true);
    return say(free.checked ? "This device will be notified when something is due, without the memory's text."
      : "This device will be notified when something is due.", "ok");
  }));

  unsubscribeButton.addEventListener("click", () => act(unsubscribeButton, async () => {
    const subscription = await existingSubscription();
    if (!subscription) {
      showSubscribed(false);
      return say("This device is not subscribed.");
    }
    try {
      await api.post("/push/unsubscribe", { endpoint: subscription.endpoint });
    } catch (error) {
      if (error.status !== 401) say(apiSentence(error), "error");
      return undefined;
    }
    await subscription.unsubscribe().catch(() => false);
    showSubscribed(false);
    return say("This device will no longer be notified.", "ok");
  }));

  free.addEventListener("change", () => act(free, async () => {
    localStorage.setItem(CONTENT_FREE_KEY, String(free.checked));
    if (problem) return;
    try {
      if (await register(free.checked)) {
        say(free.checked ? "Notifications on this device no longer show the memory's text."
          : "Notifications on this device show the memory's opening words.", "ok");
      }
    } catch (error) {
      if (error.status !== 401) say(apiSentence(error), "error");
    }
  }));

  if (testButton) {
    testButton.addEventListener("click", () => act(testButton, async () => {
      let answer;
      try {
        answer = await api.post("/push/test");
      } catch (error) {
        if (error.status !== 401) clear(results, h("p", { class: "error", role: "alert" }, apiSentence(error)));
        return;
      }
      if (!answer.devices) {
        clear(results, h("p", { class: "muted" }, "No device of yours is subscribed, so nothing was sent."));
        return;
      }
      const c = answer.counts;
      clear(results, h("p", null, `Sent to ${answer.devices} device${answer.devices === 1 ? "" : "s"}: `
        + `${c.sent} delivered, ${c.failed} failed, ${c.gone} gone (unsubscribed by the browser).`),
      h("ul", { class: "push-results" }, answer.results.map((r) => h("li", null, h("strong", null, r.host), " · ",
        h("span", { class: r.result === "sent" ? "ok" : "error" }, r.result),
        r.status ? ` (HTTP ${r.status})` : " (unreachable)"))));
    }));
  }

  const check = async () => {
    if (problem) {
      subscribeButton.disabled = true;
      return say(problem, "warn");
    }
    try {
      const subscription = await existingSubscription();
      showSubscribed(Boolean(subscription));
      return say(subscription ? "This device is subscribed." : "This device is not subscribed.");
    } catch (error) {
      return say(browserSentence(error), "error");
    }
  };
  return { section, refresh: check };
}

export default {
  title: "Reminders",
  async render(main) {
    const due = agendaSection();
    const loops = loopSection();
    const push = pushSection();
    main.append(heading("Reminders"), due.section, loops.section, push.section);
    await Promise.all([due.refresh(), loops.refresh(), push.refresh()]);
  },
};
