// Integrations: what is connected (status, last sync, what it changed, the last error in words), sync now,
// disconnect (keeping the mirrors or forgetting them), and connecting a mailbox, Notion, a calendar or a notes folder.
import { act, api, ask, clear, failure, h, heading, plural, reload, session, toast, when } from "../app.js";

const KINDS = { notes: "Notes folder", imap: "Mailbox (IMAP)", calendar: "Calendar (ICS feed)",
  caldav: "Calendar (CalDAV)", notion: "Notion" };

// Where it reads from, as far as its settings may be shown (a secret never is).
function where(settings) {
  const shown = (value) => value && !value.startsWith("(secret");
  if (shown(settings.path)) return settings.path;
  if (shown(settings.host)) return `${settings.username || ""}${settings.username ? "@" : ""}${settings.host}`
    + ` · ${settings.mailbox || "INBOX"}`;
  return [settings.database, settings.page, settings.url, settings.calendar].find(shown) || "";
}

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
    h("p", { class: "muted" }, KINDS[item.kind] || item.kind, where(item.settings)
      ? [": ", h("code", null, where(item.settings))] : null, " · connected by ", item.connected_by,
    " · ",
    item.layer === "company" ? "company" : "personal"),
    h("p", null, plural(item.mirrors, "memory", "memories"), " mirrored",
      item.last_sync ? [" · last sync ", when(item.last_sync), ": ", counts(item.last_counts)] : " · never synced"),
    item.last_error ? h("p", { class: "error", role: "alert" }, "The last sync failed: ", item.last_error) : null,
    item.connected && item.may_change ? h("div", { class: "row" }, sync, disconnect, forget) : null);
}

// What each kind asks for. A secret (a password, a token, a secret feed address) is sent once, kept sealed by the
// brain and never shown again.
const FORMS = {
  notes: { title: "Connect a notes folder", button: "Connect", nameId: "integration-name", name: "Notes",
    placeholder: "My vault",
    intro: "A folder of Markdown notes on the machine the brain runs on (an Obsidian vault, say). Each note becomes "
      + "a memory that the folder owns: edit it there, and the next sync brings the change here.",
    fields: [{ name: "path", id: "integration-path", label: "Folder (absolute path)", placeholder: "/home/me/Vault",
      required: true }] },
  imap: { title: "Connect a mailbox", button: "Connect mailbox", nameId: "mail-name", name: "Mail",
    placeholder: "Brain label",
    intro: "A mail folder or label over IMAP (a \"brain\" label, a forwarding address's inbox). Each message becomes "
      + "a memory: its own words without the quoted history or signature, attachments named but not stored. "
      + "The mailbox is only read: nothing is marked read or moved. For Gmail, use an app password.",
    fields: [
      { name: "host", id: "mail-host", label: "IMAP server", placeholder: "imap.gmail.com", required: true },
      { name: "username", id: "mail-username", label: "User name", placeholder: "me@example.com", required: true },
      { name: "password", id: "mail-password", label: "Password (an app password)", type: "password",
        required: true },
      { name: "mailbox", id: "mail-mailbox", label: "Folder or label", placeholder: "INBOX" },
      { name: "security", id: "mail-security", label: "Connection", choices: [["tls", "TLS (port 993)"],
        ["starttls", "STARTTLS (port 143)"], ["none", "Unencrypted (test servers only)"]] },
      { name: "port", id: "mail-port", label: "Port (if not the usual one)", placeholder: "993", inputmode: "numeric" },
    ] },
  calendar: { title: "Connect a calendar feed", button: "Connect calendar", nameId: "calendar-name",
    name: "Calendar", placeholder: "Work calendar",
    intro: "Its ICS feed's address (the secret iCal address your calendar offers). Each event becomes a memory with "
      + "its time, repeating ones within the coming year; moves and cancellations follow.",
    fields: [{ name: "url", id: "calendar-url", label: "Feed address", type: "url", required: true,
      placeholder: "https://calendar.example.com/me/basic.ics" }] },
  caldav: { title: "Connect a CalDAV calendar", button: "Connect CalDAV", nameId: "caldav-name", name: "Calendar",
    placeholder: "Family calendar",
    intro: "A CalDAV server (Fastmail, iCloud, Nextcloud, Radicale): its address, or one calendar's. Each event "
      + "becomes a memory with its time; moves and cancellations follow.",
    fields: [
      { name: "url", id: "caldav-url", label: "Server or calendar address", type: "url", required: true,
        placeholder: "https://caldav.fastmail.com/" },
      { name: "username", id: "caldav-username", label: "User name", required: true },
      { name: "password", id: "caldav-password", label: "Password (an app password)", type: "password",
        required: true },
      { name: "calendar", id: "caldav-calendar", label: "Only the calendar named", placeholder: "all of them" },
    ] },
  notion: { title: "Connect Notion", button: "Connect Notion", nameId: "notion-name", name: "Notion",
    placeholder: "Team wiki",
    intro: "An internal integration's secret (notion.so/my-integrations), and the databases or the page to mirror, "
      + "shared with that integration in Notion. Each page becomes a memory.",
    fields: [
      { name: "token", id: "notion-token", label: "Integration secret", type: "password", required: true },
      { name: "database", id: "notion-database", label: "Databases (links or ids, separated by commas)" },
      { name: "page", id: "notion-page", label: "Or a page (its link): it and the pages under it" },
    ] },
};

function connectForm(kind) {
  const spec = FORMS[kind];
  const inputs = spec.fields.map((field) => [field, field.choices
    ? h("select", { id: field.id, name: field.name }, field.choices.map(([value, label]) =>
      h("option", { value }, label)))
    : h("input", { id: field.id, name: field.name, type: field.type || "text", required: Boolean(field.required),
      placeholder: field.placeholder || "", inputmode: field.inputmode || null,
      autocomplete: field.type === "password" ? "new-password" : "off" })]);
  const name = h("input", { id: spec.nameId, name: "name", placeholder: spec.placeholder, maxlength: 100 });
  const status = h("div", { role: "status" });
  const button = h("button", { type: "submit" }, spec.button);
  return h("form", { class: "card", novalidate: true, dataset: { kind }, onsubmit: (event) => {
    event.preventDefault();
    clear(status);
    const settings = {};
    for (const [field, input] of inputs) {
      if (input.value.trim()) settings[field.name] = field.type === "password" ? input.value : input.value.trim();
    }
    act(button, async () => {
      try {
        const answer = await api.post("/integrations", { kind, name: name.value.trim() || spec.name, settings });
        for (const [field, input] of inputs) if (field.type === "password") input.value = "";
        toast(`Connected ${answer.integration.name}: ${counts(answer.sync)}`);
        await reload();
      } catch (error) {
        clear(status, failure(error)); // said beside the form, where the setting is typed
      }
    });
  } },
  h("h2", null, spec.title), h("p", { class: "muted" }, spec.intro),
  inputs.map(([field, input]) => [h("label", { for: field.id }, field.label), input]),
  h("label", { for: spec.nameId }, "Name"), name, button, status);
}

export default {
  title: "Integrations",
  async render(main) {
    const list = h("div", { class: "list" }, h("p", { class: "muted" }, "Loading…"));
    // A folder is read with the server's rights: only the brain's owner may name one.
    const owner = Boolean(session.me && session.me.owner);
    main.append(heading("Integrations"), list, ...["imap", "notion", "caldav", "calendar"].map(connectForm),
      owner ? connectForm("notes")
        : h("p", { class: "muted" }, "Only the brain's owner can connect a folder on the machine it runs on."));
    try {
      const { integrations } = await api.get("/integrations");
      clear(list, integrations.length ? integrations.map(card)
        : h("p", { class: "muted" }, "Nothing is connected yet."));
    } catch (error) {
      clear(list, failure(error));
    }
  },
};
