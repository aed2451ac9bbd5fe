// One memory: its content, tags and where it lives; status, edit, append, share and forget; its links (add and
// remove); and its timeline, every change with who made it and when, each one a way to see the memory as it was.
import { act, api, clear, failure, h, heading, isSystemTag, link, localTime, navigate, plural, sourceName, splitList,
  strength, TAG_WORDS, tagList, time, toast, when, WHEN_WORDS, withUndo, word, workspaceName } from "../app.js";
import { inline, markdown, noteParts } from "../markdown.js";
import { describer, drawGraph } from "./graph.js";

const TYPES = ["relates_to", "supersedes", "caused_by", "decided", "about_person", "part_of_project", "follows"];
const STATUSES = ["canonical", "draft", "deprecated"];
// The statuses in words, and what each means: a memory with none is simply in use.
const STATUS_WORDS = { active: "In use", canonical: "Confirmed", draft: "Draft", deprecated: "Retired" };
const STATUS_MEANING = { canonical: "confirmed true: protected from being retired by a newer note",
  draft: "not settled yet", deprecated: "out of recall, kept for the record" };

function statusOf(tags) {
  const tag = (tags || []).find((t) => t.startsWith("status:"));
  return tag ? tag.slice(7) : "active";
}

function timeline(entry) {
  return h("ol", { class: "timeline", "aria-label": "Timeline" }, entry.timeline.map((event) =>
    h("li", null, h("strong", null, event.event.replaceAll("_", " ")), " · ", event.actor_name || "someone",
      " · ", when(event.created_at), " · ",
      h("a", { href: link("entry", { id: entry.id, as_of: event.created_at }) }, "view as of this event"),
      said(event) ? h("p", { class: "timeline-said" }, said(event)) : details(event.payload))));
}

/** What an event changed, as a sentence (with a link where it names another memory); null for an event this
 * does not know yet, which shows its fields. */
function said(event) {
  const p = event.payload || {};
  // A change from before the memory was shared: the API keeps what it was to the author.
  if (p.before_shared) return "Before it was shared: what changed is kept to its author.";
  switch (event.event) {
    case "created":
      return `Saved through ${sourceName(p.source)}` + (tagWords(p.tags) ? ` with ${tagWords(p.tags)}` : "") + ".";
    case "tags_changed":
      return tagWords(p.tags) ? `Tags now ${tagWords(p.tags)}.` : "Topic tags removed.";
    case "classified":
      return `Classified as ${article(word("kind", p.kind))} (importance ${p.importance}`
        + (p.volatility ? `, ${TAG_WORDS[`volatility:${p.volatility}`] ?? "a state that can change"}` : "")
        + `) by ${p.method === "rules" ? "the built-in rules" : "the language model"}`
        + (p.canonical ? ", and confirmed." : ".");
    case "time_anchor_set":
      return `${WHEN_WORDS[p.when_kind] ?? "Reminder"} set for ${time(p.when_at)}.`;
    case "time_anchor_cleared":
      return "Reminder cleared.";
    case "appended":
      return `Added an update of ${plural(p.chars, "character")}.`;
    case "updated":
      return `Text replaced: now ${plural(p.chars, "character")}.`;
    case "status_changed":
      return `Marked ${(STATUS_WORDS[p.status] ?? p.status).toLowerCase()}.`;
    case "recalled":
      return "Found by a recall (counted once a day).";
    case "opened":
      return "Opened (counted once a day).";
    case "shared":
      return "Shared with the company.";
    case "unshared":
      return "Taken back into its author's personal workspace.";
    case "imported":
      return "Restored from a backup" + (p.created_at ? `, first saved ${time(p.created_at)}.` : ".");
    case "reminder_pushed":
      return `Reminder sent to ${plural(p.devices ?? 0, "device")}.`;
    case "staleness_judged":
      return p.stale ? `Judged possibly out of date${p.reason ? `: ${p.reason}` : ""}.` : "Judged still current.";
    case "digest_composed":
      return `Written as a digest of ${plural(p.sources ?? 0, "memory", "memories")}.`;
    case "duplicate_suspected":
      return ["Looks like a near-copy of ", other(p.match_id), p.score ? ` (${Math.round(p.score > 1 ? p.score
        : p.score * 100)}% alike).` : "."];
    case "contradiction_won":
      return ["Kept over ", other(p.other_id, "an older note"), ", which it contradicts", because(p.reason)];
    case "contradiction_lost":
      return ["Retired: ", other(p.other_id, "a newer note"), " contradicts it", because(p.reason)];
    case "conflict_suspected":
      return ["May contradict ", other(p.other_id), because(p.reason), " Waiting for an answer on Home."];
    case "conflict_answered":
      return [`Answered the question about `, other(p.other_id), `: keep ${p.keep === "both" ? "both" : `the ${
        p.keep}`}.`];
    case "rolled_up":
      return ["Folded into ", other(p.digest_id, "a digest"), "."];
    case "released":
      return ["Taken out of ", other(p.digest_id, "a digest"), "."];
    case "drawn_into":
      return ["Part of ", other(p.pattern_id, "a recurring theme"), " the brain noticed."];
    case "deleted":
      return "Forgotten: its text was erased everywhere.";
    default:
      return null;
  }
}

/** Another memory an event names, as a link; one the reader cannot open (another member's, or gone since: the
 * API sends no id) is said so. */
function other(id, words = "another memory") {
  return id ? h("a", { href: link("entry", { id }) }, words) : "a memory you cannot open now";
}

const because = (reason) => (reason ? ` (${reason}).` : ".");

/** The topic and project tags of a list, as people read them ("#billing, project finance"); the brain's own left out. */
/** "a fact", "an event". */
function article(noun) {
  return `${/^[aeiou]/i.test(noun) ? "an" : "a"} ${noun}`;
}

function tagWords(tags) {
  return (tags || []).filter((t) => (!t.includes(":") || t.startsWith("project:")) && !isSystemTag(t))
    .map((t) => (t.startsWith("project:") ? "project " + t.slice(8) : "#" + t)).join(", ");
}

/** An event's payload as "key: value" lines: lists joined, empty values left out. */
function details(payload) {
  const lines = Object.entries(payload || {}).filter(([, v]) => v !== null && v !== "" && !(Array.isArray(v)
    && !v.length)).map(([k, v]) => `${k.replaceAll("_", " ")}: ${Array.isArray(v) ? v.join(", ")
    : typeof v === "object" ? JSON.stringify(v) : v}`);
  return lines.length ? h("pre", null, lines.join("\n")) : null;
}

function linkForm(entry, refresh) {
  const search = h("input", { id: "link-search", type: "search", placeholder: "Find a memory" });
  const type = h("select", { id: "link-type" }, TYPES.map((t) => h("option", { value: t }, t.replaceAll("_", " "))));
  const found = h("div", { class: "list" });
  const find = async () => {
    if (!search.value.trim()) return;
    try {
      const answer = await api.get("/recall", { query: search.value, topK: 5 });
      clear(found, ...answer.results.filter((r) => r.id !== entry.id).map((r) => {
        const button = h("button", { type: "button", class: "secondary", onclick: () => act(button, async () => {
          await api.post("/link", { source_id: entry.id, target_id: r.id, type: type.value });
          toast("Linked.");
          await refresh();
        }) }, "Link");
        return h("div", { class: "card row" }, h("span", { style: "flex:1" }, r.content.slice(0, 140)), button);
      }));
      if (!found.children.length) found.append(h("p", { class: "muted" }, "Nothing found."));
    } catch (error) {
      clear(found, failure(error));
    }
  };
  return h("form", { class: "stack", onsubmit: (event) => {
    event.preventDefault();
    find();
  } }, h("div", { class: "row" }, h("label", { for: "link-search" }, "Link to", search),
    h("label", { for: "link-type" }, "As", type), h("button", { type: "submit" }, "Find")), found);
}

/** The memory's links: those it makes ("Links to", a relation without a direction too) and those other memories
 * make to it ("Linked from", its backlinks), each a region of its own. */
function connections(entry, answer, past, refresh) {
  if (!answer.connections.length) return h("p", { class: "muted" }, "No links.");
  const card = (c) => {
    const unlink = past || c.provenance === "system" ? null : h("button", { type: "button", class: "secondary",
      onclick: () => act(unlink, async () => {
        const answer = await api.post("/unlink", { source_id: entry.id, target_id: c.id, type: c.type });
        toast(answer.deleted ? "Link removed." : "That link was already gone.");
        await refresh();
      }) }, "Remove link");
    return h("article", { class: "item card", tabindex: "-1", dataset: { href: link("entry", { id: c.id }) } },
      h("div", { class: "meta" }, h("span", { class: "badge" }, c.label), h("span", { class: "muted" },
        `${word("provenance", c.provenance)}, strength ${strength(c.weight)}`), when(c.linkedAt)),
      h("p", { class: "content" }, h("a", { href: link("entry", { id: c.id }) }, c.content)), unlink);
  };
  const group = (id, title, items) => (items.length ? h("section", { "aria-labelledby": id },
    h("h3", { id }, title), h("div", { class: "list" }, items.map(card))) : null);
  return [group("links-to-title", "Links to", answer.connections.filter((c) => c.direction !== "incoming")),
    group("linked-from-title", "Linked from", answer.connections.filter((c) => c.direction === "incoming"))];
}

/** The memory's text as a note (its title line and its Markdown), and, where the reader may change it, an Edit
 * that turns it into its text in place: Save shows the new text at once and holds the change for the Undo time. */
function note(entry, editable, refresh) {
  const box = h("div", { class: "note-text" });
  const show = (content) => {
    const { title, body } = noteParts(content);
    clear(box, title ? h("h2", { class: "note-title" }, inline(title)) : null,
      h("div", { class: "note-body" }, markdown(body)),
      editable ? h("button", { type: "button", class: "secondary note-edit", onclick: edit }, "Edit") : null);
  };
  let shown = entry.content;
  const edit = () => {
    const text = h("textarea", { id: "edit-content", value: shown, rows: Math.min(20, shown.split("\n").length + 2) });
    const tags = h("input", { id: "edit-tags", value: entry.tags.filter((t) => !t.includes(":")).join(", ") });
    const cancel = h("button", { type: "button", class: "secondary", onclick: () => show(shown) }, "Cancel");
    clear(box, h("form", { class: "stack", onsubmit: (event) => {
      event.preventDefault();
      const before = shown;
      const after = text.value;
      const kept = entry.tags.filter((t) => t.includes(":"));
      withUndo("Saving your edit.", {
        hide: () => { shown = after; show(after); },
        undo: () => { shown = before; show(before); },
        send: (keepalive) => api.post("/update", { id: entry.id, content: after,
          tags: [...splitList(tags.value), ...kept] }, undefined, { keepalive }),
        done: async () => { toast("Saved."); await refresh(); },
      });
    } }, h("label", { for: "edit-content" }, "Text"), text, h("label", { for: "edit-tags" }, "Tags"), tags,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Save"), cancel)));
    text.focus();
  };
  show(shown);
  return box;
}

function controls(entry, refresh) {
  const status = statusOf(entry.tags);
  const statusButtons = STATUSES.map((s) => {
    const button = h("button", { type: "button", class: s === status ? "" : "secondary", title: STATUS_MEANING[s],
      "aria-pressed": String(s === status), onclick: () => act(button, async () => {
        await api.post("/status", { id: entry.id, status: s });
        toast(`Marked ${STATUS_WORDS[s].toLowerCase()}: ${STATUS_MEANING[s]}.`);
        await refresh();
      }) }, STATUS_WORDS[s]);
    return button;
  });
  const addition = h("textarea", { id: "append-text" });
  const add = h("button", { type: "submit" }, "Append");
  const appendForm = h("details", null, h("summary", null, "Append an update"), h("form", { class: "stack",
    onsubmit: (event) => {
      event.preventDefault();
      act(add, async () => {
        await api.post("/append", { id: entry.id, addition: addition.value });
        toast("Appended.");
        await refresh();
      });
    } }, h("label", { for: "append-text" }, "Update"), addition, add));
  const share = entry.workspace === "personal" ? h("button", { type: "button", class: "secondary",
    onclick: () => act(share, async () => {
      await api.post("/share", { id: entry.id, workspace: "company" });
      toast("Shared with the company.");
      await refresh();
    }) }, "Share with the company") : null;
  // No confirm(): the page shows it gone at once, and the request waits out the Undo time (app.withUndo).
  const forget = h("button", { type: "button", class: "danger", onclick: () => {
    const view = forget.closest(".view");
    const gone = h("p", { class: "warn", role: "status", id: "forgetting" },
      "Forgetting this memory: its text will be erased everywhere and cannot be restored after that.");
    withUndo("Forgetting this memory.", {
      hide: () => { for (const child of view.children) child.hidden = true; view.append(gone); },
      undo: () => { gone.remove(); for (const child of view.children) child.hidden = false; },
      send: (keepalive) => api.post("/forget", { id: entry.id }, undefined, { keepalive }),
      done: () => { toast("Forgotten."); navigate("memories"); },
    });
  } }, "Forget");
  const statusGroup = h("div", { class: "actions", role: "group", "aria-label": "Status" }, h("span", { class: "muted" },
    status === "active" ? "In use. Mark it:" : "Status:"), statusButtons);
  if (entry.managed_by) {
    // A managed mirror: its system owns its words (the API would answer 409), so the change is offered there.
    const { source, url } = entry.managed_by;
    const there = /^https?:\/\//.test(url) ? h("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, url)
      : h("code", null, url);
    return h("section", { "aria-labelledby": "controls-title" }, h("h2", { id: "controls-title" }, "Change it"),
      statusGroup, h("p", { class: "managed" }, `Synced from ${source}: change it there and the next sync brings `
        + "the change here. The original: ", there, ". To take it out of the brain, delete it there or ",
      h("a", { href: link("integrations") }, "disconnect the integration"), "."));
  }
  return h("section", { "aria-labelledby": "controls-title" }, h("h2", { id: "controls-title" }, "Change it"),
    statusGroup, appendForm, h("div", { class: "actions", style: "margin-top:.5rem" }, share, forget));
}

const AROUND_NODES = 15;

/** The memory's neighbourhood as a small graph (the Graph view's picture, centred on it), drawn once it arrives. */
function around(entry) {
  const box = h("div", { class: "local-graph" }, h("p", { class: "muted" }, "Loading…"));
  const section = h("section", { "aria-labelledby": "around-title" }, h("h2", { id: "around-title" }, "Around it"),
    box);
  api.get("/graph", { seed: entry.id, limit: AROUND_NODES }).then((graph) => {
    if (graph.nodes.length < 2) {
      clear(box, h("p", { class: "muted" }, "Nothing is linked to it yet."));
      return;
    }
    const idle = "Hover over a memory to see how it is linked; click it to open it.";
    const details = h("p", { class: "graph-details muted", "aria-live": "polite" }, idle);
    const width = Math.max(300, Math.min(760, Math.floor(box.clientWidth || 600)));
    const drawn = drawGraph(graph, { width, height: Math.round(Math.min(300, width * 0.6)), compact: true,
      describe: describer(details, idle) });
    clear(box, drawn.svg, details, h("a", { href: link("graph", { seed: entry.id }) }, "Explore in the graph"));
  }, (error) => clear(box, h("p", { class: "muted" }, error.message)));
  return section;
}

export default {
  title: "Memory",
  async render(main, params) {
    if (!params.id) {
      main.append(heading("Memory"), h("p", { class: "error", role: "alert" }, "No memory was named."));
      return;
    }
    const past = params.as_of ? new Date(/^\d+$/.test(params.as_of) ? Number(params.as_of)
      : localTime(params.as_of)) : null;
    const asOf = past ? past.toISOString() : undefined;
    let turn = 0;
    const draw = async () => {
      const mine = ++turn; // two quick actions: only the later answer draws
      const [{ entry }, links] = await Promise.all([api.get("/entry", { id: params.id, as_of: asOf }),
        api.get("/connections", { id: params.id, as_of: asOf })]);
      if (mine !== turn) return;
      const refresh = () => draw().catch((error) => toast(error.message, "error"));
      clear(main,
        heading("Memory", h("span", { class: "badge" }, STATUS_WORDS[statusOf(entry.tags)] ?? statusOf(entry.tags)),
          h("a", { href: link("graph", { seed: entry.id }) }, "Show in graph")),
        past ? h("p", { class: "warn", role: "note" }, "As it stood on ", time(past.getTime()), ". ",
          h("a", { href: link("entry", { id: entry.id }) }, "See it now")) : null,
        h("article", { class: "card note" }, note(entry, !past && entry.can_edit && !entry.managed_by, refresh),
          h("div", { class: "meta" }, tagList(entry.tags), h("span", { class: "muted" },
            workspaceName(entry.workspace)), entry.actor_name ? h("span", null, "by ", entry.actor_name) : null,
          "created ", when(entry.created_at), entry.updated_at !== entry.created_at ? ["· updated ",
            when(entry.updated_at)] : null),
          h("p", { class: "muted" }, `Importance ${entry.importance_score} · recalled ${plural(entry.recall_count,
            "time")} · ${entry.use_count ? `opened on ${plural(entry.use_count, "day")}` : "never opened"} · `,
          entry.indexed ? "searchable by meaning" : "not yet searchable by meaning",
          entry.when_at ? ` · ${WHEN_WORDS[entry.when_kind] ?? "Due"}: ${time(entry.when_at)}` : "")),
        past || !entry.can_edit ? null : controls(entry, refresh),
        h("section", { "aria-labelledby": "links-title" }, h("h2", { id: "links-title" }, "Links"),
          connections(entry, links, past, refresh), past || !entry.can_edit ? null : linkForm(entry, refresh)),
        past ? null : around(entry),
        h("section", { "aria-labelledby": "timeline-title" }, h("h2", { id: "timeline-title" }, "Timeline"),
          timeline(entry)));
    };
    main.append(heading("Memory"), h("p", { class: "muted" }, "Loading…"));
    await draw().catch((error) => clear(main, heading("Memory"), failure(error)));
  },
};
