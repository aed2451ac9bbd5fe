// Integrations: what is connected (status, last sync, what it changed, the last error in words), sync now,
// disconnect (keeping the mirrors or forgetting them), and connecting one of the kinds there are: each kind's form is
// made from what its connector declares (GET /integrations/kinds), one form open at a time.
import { act, api, ask, clear, failure, h, heading, plural, reload, session, toast, when } from "../app.js";

// Where it reads from, as far as its settings may be shown (a secret never is): a folder, a mailbox, a database,
// a page, an address; else the first setting that may be shown (a kind this view knows nothing of).
function where(settings) {
  const shown = (value) => value && !value.startsWith("(secret");
  if (shown(settings.path)) return settings.path;
  if (shown(settings.host)) return `${settings.username || ""}${settings.username ? "@" : ""}${settings.host}`
    + ` · ${settings.mailbox || "INBOX"}`;
  return [settings.database, settings.page, settings.url, settings.calendar].find(shown)
    || Object.values(settings).find(shown) || "";
}

function counts(last) {
  const parts = [["created", "new"], ["updated", "updated"], ["removed", "removed"]]
    .filter(([key]) => last[key]).map(([key, word]) => `${last[key]} ${word}`);
  return parts.length ? parts.join(", ") : "nothing changed";
}

function card(item, titles) {
  const status = !item.connected ? h("span", { class: "badge" }, "disconnected")
    : item.last_error ? h("span", { class: "badge attention" }, "needs attention")
      : h("span", { class: "badge" }, item.complete ? "up to date" : "syncing");
  const sync = h("button", { type: "button", onclick: () => act(sync, async () => {
    const answer = await api.post("/integrations/sync", { id: item.id }, undefined, { timeout: 0 });
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
    h("p", { class: "muted" }, titles[item.kind] || item.kind, where(item.settings)
      ? [": ", h("code", null, where(item.settings))] : null, " · connected by ", item.connected_by,
    " · ",
    item.layer === "company" ? "company" : "personal"),
    h("p", null, plural(item.mirrors, "memory", "memories"), " mirrored",
      item.last_sync ? [" · last sync ", when(item.last_sync), ": ", counts(item.last_counts)] : " · never synced"),
    item.last_error ? h("p", { class: "error", role: "alert" }, "The last sync failed: ", item.last_error) : null,
    item.connected && item.may_change ? h("div", { class: "row" }, sync, disconnect, forget) : null);
}

// How a setting's format is typed: a password is never shown (and sent as typed, not trimmed), an address is a url.
const INPUT_TYPES = { password: "password", url: "url" };

// An example longer than this is said under its field: in the field it would be cut off on a phone.
const HINT_OVER = 24;

// A kind's connect form, as its connector declares it (its fields in its order, their labels and examples). A
// secret (a password, a token, a secret feed address) is sent once, kept sealed by the brain and never shown again.
function connectForm(spec) {
  const { kind, form } = spec;
  const id = (name) => `${kind}-${name}`;
  const inputs = spec.fields.map((field) => [field, field.choices.length
    ? h("select", { id: id(field.name), name: field.name }, field.choices.map(({ value, label }) =>
      h("option", { value }, label)))
    : h("input", { id: id(field.name), name: field.name, type: INPUT_TYPES[field.format] || "text",
      required: field.required, placeholder: field.placeholder?.length > HINT_OVER ? null : field.placeholder,
      "aria-describedby": field.placeholder?.length > HINT_OVER ? id(field.name) + "-hint" : null,
      inputmode: field.format === "numeric" ? "numeric" : null,
      autocomplete: field.format === "password" ? "new-password" : "off" })]);
  const name = h("input", { id: id("name"), name: "name", placeholder: form.name_placeholder, maxlength: 100 });
  const status = h("div", { role: "status" });
  const button = h("button", { type: "submit" }, form.button);
  const opened = h("details", { class: "card", name: "connect", dataset: { kind }, ontoggle: () => {
    if (!opened.open) return;
    for (const other of opened.parentElement ? opened.parentElement.querySelectorAll("details[open]") : []) {
      if (other !== opened) other.open = false; // one form at a time, where the browser does not do it itself
    }
  } }, h("summary", null, form.title), h("form", { class: "stack", novalidate: true, dataset: { kind },
    onsubmit: (event) => {
      event.preventDefault();
      clear(status);
      const settings = {};
      for (const [field, input] of inputs) {
        if (input.value.trim()) settings[field.name] = field.format === "password" ? input.value : input.value.trim();
      }
      act(button, async () => {
        try {
          const answer = await api.post("/integrations", { kind, name: name.value.trim() || form.name, settings }, undefined,
            { timeout: 0 });
          for (const [field, input] of inputs) if (field.format === "password") input.value = "";
          toast(`Connected ${answer.integration.name}: ${counts(answer.sync)}`);
          await reload();
        } catch (error) {
          clear(status, failure(error)); // said beside the form, where the setting is typed
        }
      });
    } },
  h("p", { class: "muted" }, form.intro),
  inputs.map(([field, input]) => [h("label", { for: input.id }, field.label), input,
    field.placeholder?.length > HINT_OVER ? h("p", { class: "hint muted", id: input.id + "-hint" }, "For example: ",
      h("code", null, field.placeholder)) : null]),
  h("label", { for: name.id }, "Name"), name, button, status));
  return opened;
}

export default {
  title: "Integrations",
  async render(main) {
    const list = h("div", { class: "list" }, h("p", { class: "muted" }, "Loading…"));
    const forms = h("div", { class: "list connect-forms" });
    main.append(heading("Integrations"), list, forms);
    const [connected, known] = await Promise.allSettled([api.get("/integrations"), api.get("/integrations/kinds")]);
    const kinds = known.status === "fulfilled" ? known.value.kinds : [];
    const titles = Object.fromEntries(kinds.map((spec) => [spec.kind, spec.title]));
    if (connected.status === "fulfilled") {
      const { integrations } = connected.value;
      clear(list, integrations.length ? integrations.map((item) => card(item, titles))
        : h("p", { class: "muted" }, "Nothing is connected yet."));
    } else {
      clear(list, failure(connected.reason));
    }
    // A kind this deployment does not run (a folder, on Lambda) is not offered. A folder is read with the server's
    // rights: only the brain's owner may name one.
    const owner = Boolean(session.me && session.me.owner);
    const offered = kinds.filter((spec) => spec.available);
    clear(forms, known.status === "rejected" ? failure(known.reason) : [
      ...offered.filter((spec) => !spec.local).map(connectForm),
      ...offered.filter((spec) => spec.local).map((spec) => owner ? connectForm(spec)
        : h("p", { class: "muted" }, "Only the brain's owner can connect a folder on the machine it runs on.")),
    ]);
  },
};
