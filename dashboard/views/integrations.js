// Integrations: what is connected (status, last sync, what it changed, the last error in words), sync now,
// disconnect (keeping the mirrors or forgetting them), and connecting a notes folder.
import { act, api, ask, clear, failure, h, heading, plural, reload, session, toast, when } from "../app.js";

const KINDS = { notes: "Notes folder", calendar: "Calendar (ICS feed)" };

function counts(last) {
  const parts = [["created", "new"], ["updated", "updated"], ["removed", "removed"]]
    .filter(([key]) => last[key]).map(([key, word]) => `${last[key]} ${word}`);
  return parts.length ? parts.join(", ") : "nothing changed";
}

function card(item) {
  const status = !item.connected ? h("span", { class: "badge" }, "disconnected")
    : item.last_error ? h("span", { class: "badge attention" }, "needs attention")
      : h("span", { class: "badge" }, item.complete ? "up to date" : "syncing");
  const sync = h("button", { type: "button", onclick: () => act(sync, async () => {
    const answer = await api.post("/integrations/sync", { id: item.id });
    const done = answer.sync;
    toast(done.error ? `Sync failed: ${done.error}` : `Synced ${item.name}: ${counts(done)}`,
      done.error ? "error" : "info");
    await reload();
  }) }, "Sync now");
  const disconnect = h("button", { type: "button", class: "secondary", onclick: () =>
    ask(disconnect, `Disconnect ${item.name}? Its ${plural(item.mirrors, "memory", "memories")}:`, "Keep them",
      async () => {
        const answer = await api.post("/integrations/disconnect", { id: item.id, forget_mirrors: false });
        toast(`Disconnected: ${plural(answer.kept, "memory", "memories")} kept as your own`);
        await reload();
      }) }, "Disconnect…");
  const forget = h("button", { type: "button", class: "danger", onclick: () =>
    ask(forget, `Forget the ${plural(item.mirrors, "memory", "memories")} ${item.name} brought in?`,
      "Disconnect and forget", async () => {
        const answer = await api.post("/integrations/disconnect", { id: item.id, forget_mirrors: true });
        toast(`Disconnected: ${plural(answer.forgotten, "memory", "memories")} forgotten`);
        await reload();
      }) }, "Disconnect and forget…");
  return h("article", { class: "card integration", dataset: { id: item.id } },
    h("h2", null, item.name, " ", status),
    h("p", { class: "muted" }, KINDS[item.kind] || item.kind, item.settings.path || item.settings.url
      ? [": ", h("code", null, item.settings.path || item.settings.url)] : null, " · connected by ", item.connected_by,
    " · ",
    item.layer === "company" ? "company" : "personal"),
    h("p", null, plural(item.mirrors, "memory", "memories"), " mirrored",
      item.last_sync ? [" · last sync ", when(item.last_sync), ": ", counts(item.last_counts)] : " · never synced"),
    item.last_error ? h("p", { class: "error", role: "alert" }, "The last sync failed: ", item.last_error) : null,
    item.connected && item.may_change ? h("div", { class: "row" }, sync, disconnect, forget) : null);
}

function connectForm() {
  const name = h("input", { id: "integration-name", name: "name", placeholder: "My vault", maxlength: 100 });
  const path = h("input", { id: "integration-path", name: "path", required: true, placeholder: "/home/me/Vault",
    autocomplete: "off" });
  const status = h("div", { role: "status" });
  const button = h("button", { type: "submit" }, "Connect");
  const form = h("form", { class: "card", onsubmit: (event) => {
    event.preventDefault();
    clear(status);
    act(button, async () => {
      try {
        const answer = await api.post("/integrations", { kind: "notes", name: name.value.trim() || "Notes",
          settings: { path: path.value.trim() } });
        toast(`Connected ${answer.integration.name}: ${counts(answer.sync)}`);
        await reload();
      } catch (error) {
        clear(status, failure(error)); // said beside the form, where the folder is typed
      }
    });
  } },
  h("h2", null, "Connect a notes folder"),
  h("p", { class: "muted" }, "A folder of Markdown notes on the machine the brain runs on (an Obsidian vault, say). ",
    "Each note becomes a memory that the folder owns: edit it there, and the next sync brings the change here."),
  h("label", { for: "integration-path" }, "Folder (absolute path)"), path,
  h("label", { for: "integration-name" }, "Name"), name, button, status);
  return form;
}

function calendarForm() {
  const url = h("input", { id: "calendar-url", name: "url", type: "url", required: true,
    placeholder: "https://calendar.example.com/me/basic.ics", autocomplete: "off" });
  const name = h("input", { id: "calendar-name", name: "name", placeholder: "Work calendar", maxlength: 100 });
  const status = h("div", { role: "status" });
  const button = h("button", { type: "submit" }, "Connect calendar");
  const form = h("form", { class: "card", novalidate: true, onsubmit: (event) => {
    event.preventDefault();
    clear(status);
    act(button, async () => {
      try {
        const answer = await api.post("/integrations", { kind: "calendar", name: name.value.trim() || "Calendar",
          settings: { url: url.value.trim() } });
        toast(`Connected ${answer.integration.name}: ${counts(answer.sync)}`);
        await reload();
      } catch (error) {
        clear(status, failure(error));
      }
    });
  } },
  h("h2", null, "Connect a calendar"),
  h("p", { class: "muted" }, "Its ICS feed's address (the secret iCal address your calendar offers). Each event ",
    "becomes a memory with its time, repeating ones within the coming year; moves and cancellations follow."),
  h("label", { for: "calendar-url" }, "Feed address"), url,
  h("label", { for: "calendar-name" }, "Name"), name, button, status);
  return form;
}

export default {
  title: "Integrations",
  async render(main) {
    const list = h("div", { class: "list" }, h("p", { class: "muted" }, "Loading…"));
    // A folder is read with the server's rights: only the brain's owner may name one.
    const owner = Boolean(session.me && session.me.owner);
    main.append(heading("Integrations"), list, owner ? connectForm()
      : h("p", { class: "muted" }, "Only the brain's owner can connect a folder on the machine it runs on."),
    calendarForm());
    try {
      const { integrations } = await api.get("/integrations");
      clear(list, integrations.length ? integrations.map(card)
        : h("p", { class: "muted" }, "Nothing is connected yet. Mail and Notion are not available yet."));
    } catch (error) {
      clear(list, failure(error));
    }
  },
};
