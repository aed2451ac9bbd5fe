// Capture: content, tags, project, workspace and a time anchor; the outcome is said plainly (stored, blocked as a
// repeat, flagged as similar, merged, replaced, a contradiction resolved, kept as a draft) with links to the
// memories it names.
import { act, api, captureKey, clear, dropQueued, failure, h, heading, link, localTime, outbox, queueCapture, session,
  splitList, tagList, toast, word } from "../app.js";

function entryLink(id, text) {
  return h("a", { href: link("entry", { id }) }, text);
}

/** A button that takes back what a capture did automatically: keep both memories of the pair it made. */
function undoButton(conflict, done) {
  const button = h("button", { type: "button", class: "secondary", onclick: () => act(button, async () => {
    await api.post("/conflicts/answer", { conflict, keep: "both" });
    toast("Undone: both memories are kept as they were.");
    done();
  }) }, "Undo");
  return button;
}

/** The sentence for one POST /capture answer; `retry(body)` sends the capture again (store it anyway). */
export function outcome(result, retry) {
  if (result.duplicate) {
    const anyway = retry ? h("button", { type: "button", class: "secondary",
      onclick: () => act(anyway, () => retry({ force: true })) }, "Store it anyway") : null;
    return h("div", { class: "card" }, h("p", { class: "warn" },
      `Not stored: it repeats a memory you already have (${result.score}% alike). `,
      entryLink(result.matchId, "Open the original"), " ", anyway));
  }
  const parts = [];
  if (result.action === "merged") parts.push("Merged into an existing memory: ", entryLink(result.id, "open it"));
  else if (result.action === "replaced") {
    parts.push("Replaced an outdated memory with this one: ", entryLink(result.id, "open it"));
  } else if (result.resolved_conflict) {
    parts.push("Stored, and it resolved a contradiction: ", entryLink(result.resolved_conflict,
      "the older memory"), " lost and no longer shows in recall. ", result.reason ? `(${result.reason}) ` : "",
    entryLink(result.id, "Open the new memory"));
  } else if (result.status === "draft") {
    parts.push("Kept as a draft: it conflicts with ", entryLink(result.kept_canonical, "a canonical memory"),
      ", which is protected. ", entryLink(result.id, "Open the draft"));
  } else if (result.warning === "similar") {
    parts.push("Stored, but a similar memory exists ", `(${result.score}% alike): `,
      entryLink(result.matchId, "compare"), " · ", entryLink(result.id, "open the new one"));
  } else if (result.warning === "possible_update") {
    parts.push("Stored beside ", entryLink(result.matchId, "a memory it may update"),
      ": both are kept until you answer it under Conflicts to review on ", h("a", { href: link("") }, "Home"), ". ",
      entryLink(result.id, "Open the new one"));
  } else {
    parts.push("Stored. ", entryLink(result.id, "Open it"));
  }
  const card = h("div", { class: "card" }, h("p", { class: "ok" }, parts));
  if (result.conflict) { // an older memory was retired or rewritten, or the note kept as a draft: undo in one call
    const undo = undoButton(result.conflict, () => card.querySelector(".undo")?.replaceChildren("Undone."));
    card.append(h("p", { class: "undo" }, "Not what you meant? ", undo));
    toast(h("span", null, "Capture changed another memory. ", undoButton(result.conflict,
      () => card.querySelector(".undo")?.replaceChildren("Undone."))));
  }
  if (result.reminder) { // a time the words named became the reminder: say it, and let it be taken back
    const clearIt = h("button", { type: "button", class: "secondary", onclick: () => act(clearIt, async () => {
      await api.post("/due/clear", { id: result.id });
      clear(reminder, "Reminder removed.");
    }) }, "Remove reminder");
    const said = result.reminder.message.split(". To undo")[0];
    const reminder = h("p", { class: "reminder" }, said, ". ", clearIt);
    card.append(reminder);
  }
  // Where it went, in words: a note that names no workspace follows a default someone else may have set.
  if (result.visibility) card.append(h("p", { class: "where" }, result.visibility, "."));
  if (result.tags && result.tags.length) card.append(h("div", { class: "muted" }, "Tags: ", tagList(result.tags)));
  return card;
}

/** A bookmark that captures the page it is pressed on: its title, address and the words selected, opened here in
 * Capture to read over before saving. Dragged to the bookmarks bar; on this page (whose policy runs no inline
 * script) it does nothing. */
function bookmarklet() {
  const here = location.origin + location.pathname;
  const code = `(()=>{const q=encodeURIComponent;open(${JSON.stringify(here)}+'?title='+q(document.title)+'&url='`
    + "+q(location.href)+'&text='+q(String(getSelection())),'_blank','noopener')})()";
  return h("section", { "aria-labelledby": "anywhere-title" }, h("h2", { id: "anywhere-title" },
    "Capture from anywhere"), h("p", null, "Drag this to your bookmarks bar, then press it on any page to capture "
    + "its title, address and the words you selected: ", h("a", { class: "bookmarklet", href: `javascript:${code}`,
    onclick: (event) => event.preventDefault() }, "Save to Second Brain"), "."), h("p", { class: "muted" },
  "Installed as an app (your browser's Install or Add to Home Screen), Second Brain is in your phone's share sheet "
    + "too, and notes typed without a connection are kept until it is back."));
}

export default {
  title: "Capture",
  async render(main, params) {
    const result = h("div", { id: "capture-result", role: "status" }); // present from the start: it is announced
    const content = h("textarea", { id: "content", name: "content", required: true, value: params.text || "" });
    const tags = h("input", { id: "tags", name: "tags", placeholder: "work, idea" });
    const projects = h("datalist", { id: "project-list" });
    const project = h("input", { id: "project", name: "project", list: "project-list", placeholder: "its short name" });
    const whenInput = h("input", { id: "when", name: "when", type: "datetime-local" });
    const whenKind = h("select", { id: "when_kind", name: "when_kind" },
      ["wake", "due", "event"].map((kind) => h("option", { value: kind }, word("when_kind", kind))));
    const workspace = h("select", { id: "workspace", name: "workspace" },
      h("option", { value: "" }, `default (${session.me.effective_default_share})`),
      h("option", { value: "personal" }, "personal"), h("option", { value: "company" }, "company"));
    const submit = h("button", { type: "submit" }, "Capture");
    let sending = false;
    const form = h("form", { class: "stack", onsubmit: async (event) => {
      event.preventDefault();
      if (sending) return; // Ctrl+Enter pressed again while the first capture is on its way
      const body = { content: content.value, tags: splitList(tags.value), source: "dashboard" };
      if (project.value.trim()) body.project = project.value.trim();
      if (workspace.value) body.workspace = workspace.value;
      if (whenInput.value) {
        body.when = localTime(whenInput.value).getTime(); // the person's own time, whatever the brain's zone
        body.when_kind = whenKind.value;
      }
      sending = true;
      submit.disabled = true;
      let key = null; // each send's own: if its answer is lost, the same key sends it again, stored once
      const send = async (extra = {}) => {
        key = captureKey();
        const answer = await api.post("/capture", { ...body, ...extra }, undefined,
          { headers: { "Idempotency-Key": key } });
        clear(result, outcome(answer, send));
        if (!answer.duplicate) form.reset();
      };
      try {
        await send();
      } catch (error) {
        if (error.status === 0) { // no connection: kept here, sent when it is back (app.js's outbox)
          queueCapture(body, key);
          form.reset();
          clear(result, h("p", { class: "warn" }, "No connection: the note is kept in this browser and will be "
            + "captured as soon as the connection is back."));
        } else {
          clear(result, failure(error));
        }
      } finally {
        sending = false;
        submit.disabled = false;
      }
    } },
    h("label", { for: "content" }, "What do you want to remember?"), content,
    h("div", { class: "row" },
      h("label", { for: "tags" }, "Tags (comma separated)", tags),
      h("label", { for: "project" }, "Project", project, projects),
      h("label", { for: "workspace" }, "Workspace", workspace)),
    h("div", { class: "row" },
      h("label", { for: "when" }, "When (optional)", whenInput),
      h("label", { for: "when_kind" }, "Kind of time", whenKind)),
    h("div", { class: "row" }, submit, h("span", { class: "muted" }, "Ctrl+Enter captures")));
    // Ctrl+Enter (Cmd+Enter) captures from anywhere in the form: the text, the tags, the time, a button.
    form.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
      event.preventDefault();
      form.requestSubmit();
    });
    const waiting = h("section", { "aria-labelledby": "outbox-title", class: "outbox" });
    const showWaiting = () => {
      const items = outbox();
      waiting.hidden = !items.length;
      clear(waiting, h("h2", { id: "outbox-title" }, "Kept in this browser"), h("ul", { class: "list" },
        items.map((item) => h("li", { class: "card" }, h("p", { class: "content" }, item.body.content),
          item.refused ? [h("p", { class: "error" }, `Not captured: ${item.refused}`),
            h("button", { type: "button", class: "secondary", onclick: () => dropQueued(item.key) }, "Remove")]
            : h("p", { class: "muted" }, "Waiting for the connection.")))));
    };
    showWaiting();
    document.addEventListener("outbox", showWaiting);
    main.append(heading("Capture"), form, result, waiting, bookmarklet());
    content.focus();
    api.get("/projects").then((answer) => clear(projects, ...answer.projects.map((p) =>
      h("option", { value: p.id }, p.name)))).catch((error) => form.append(failure(error)));
    return () => document.removeEventListener("outbox", showWaiting);
  },
};
