// The dashboard's service worker: it only shows push notifications (reminders and tests) and, on a click, focuses
// the dashboard (or opens it) at the memory the reminder is about. It handles no fetches: nothing is cached.
// Served from dashboard/sw.js with `Service-Worker-Allowed: /` and registered by the Reminders view with the page's
// own folder as its scope ("/" locally, "/Prod/" behind API Gateway's stage): links are made from that scope.

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

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
