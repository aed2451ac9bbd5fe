// The dashboard's service worker. It shows push notifications (reminders and tests) and, on a click, focuses the
// dashboard (or opens it) at the memory the reminder is about. It also keeps the dashboard's own files (the page and
// dashboard/*, never an API answer) so the installed app opens without a connection: each is fetched from the
// network first and the copy kept is only used when the network fails; a capture typed then waits in the page's
// outbox (app.js) until the connection is back.
// Served from dashboard/sw.js with `Service-Worker-Allowed: /` and registered at start by the shell with the page's
// own folder as its scope ("/" locally, "/Prod/" behind API Gateway's stage): links are made from that scope.

const CACHE = "second-brain-shell-v1";
const HERE = new URL("./", self.location.href).href; // .../dashboard/
const PAGE = new URL("../", self.location.href).href; // the page itself
// What opening offline needs: the page, its styles and scripts, and the views one captures and reads with.
const SHELL = [PAGE, ...["app.css", "app.js", "shell.js", "palette.js", "markdown.js", "icon.svg",
  "manifest.webmanifest", "views/home.js", "views/capture.js"].map((file) => HERE + file)];

self.addEventListener("install", (event) => {
  self.skipWaiting();
  // A change goes straight to the network, as from a page with no worker: through a worker, a change held behind
  // Undo and sent with keepalive as the page is left was lost with the page (Chromium's static routing; elsewhere
  // the fetch handler below lets it pass untouched).
  if (event.addRoutes) {
    event.waitUntil(event.addRoutes(["POST", "PUT", "PATCH", "DELETE"].map((method) => ({
      condition: { requestMethod: method }, source: "network" }))).catch(() => {}));
  }
  // Best effort: a file that cannot be fetched now is kept the next time the page asks for it.
  event.waitUntil(caches.open(CACHE).then((cache) => Promise.all(SHELL.map((url) => cache.add(url).catch(() => {})))));
});
self.addEventListener("activate", (event) => event.waitUntil((async () => {
  for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
  await self.clients.claim();
})()));

// A page that loaded while this worker was activating asks to be taken (the claim above only takes pages running then).
self.addEventListener("message", (event) => {
  if (event.data === "claim") event.waitUntil(self.clients.claim());
});

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET") return;
  const address = request.url.split(/[?#]/)[0];
  const page = request.mode === "navigate" && address === PAGE; // the page, however it is opened (?title=... too)
  if (!page && !address.startsWith(HERE)) return; // the API and everything else: the network's answer, untouched
  const key = page ? PAGE : address;
  event.respondWith((async () => {
    try {
      const response = await fetch(request);
      if (response.ok) {
        const copy = response.clone();
        event.waitUntil(caches.open(CACHE).then((cache) => cache.put(key, copy)));
      }
      return response;
    } catch (error) {
      const kept = await caches.match(key);
      if (kept) return kept;
      throw error;
    }
  })());
});

function payload(event) {
  if (!event.data) return {};
  try {
    return event.data.json();
  } catch {
    return { body: event.data.text() };
  }
}

self.addEventListener("push", (event) => {
  const data = payload(event);
  // A content-free device gets no memory text from the server; the id alone opens the memory after sign-in.
  const target = data.id ? "#/entry?id=" + encodeURIComponent(data.id) : "#/reminders";
  event.waitUntil(self.registration.showNotification(data.title || "Second Brain", {
    body: data.body || "",
    tag: data.id ? "reminder-" + data.id : "second-brain",
    data: { url: target },
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL((event.notification.data && event.notification.data.url) || "", self.registration.scope).href;
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const open = windows.find((client) => client.url.startsWith(self.registration.scope));
    if (open) {
      const focused = await open.focus();
      if (focused && "navigate" in focused) {
        try {
          await focused.navigate(url);
        } catch {
          // An uncontrolled window cannot be navigated from here: focusing it is enough.
        }
      }
      return;
    }
    await self.clients.openWindow(url);
  })());
});
