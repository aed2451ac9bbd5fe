// Memories: newest first, with the filters GET /list takes, paged by time in pages of 25, so a page stays right
// while new memories arrive. The page's `cursor` is the last memory's time; GET /list's `before` is inclusive, so
// the next page asks from that millisecond and skips the memories of it already shown (`skip`). Memories picked with
// their checkboxes are changed together: confirmed, retired, shared with the company, or forgotten (with Undo).
import { api, clear, failure, h, heading, link, localTime, memoryCard, navigate, plural, reload, toast, withUndo,
  word } from "../app.js";

const PAGE = 25;
const MOST = 100; // GET /list's largest page
const LIST_OFFSET_MOST = 9_900; // and its furthest offset (operations/memories.py)
const KINDS = ["", "episodic", "semantic"]; // the kinds GET /list and /recall filter on
// GET /list's sort (ours), in words; newest first pages by time, the others by offset.
const SORTS = [["newest", "Newest first"], ["oldest", "Oldest first"], ["updated", "Recently changed"],
  ["important", "Most important"]];
const FILTERS = [["tag", "Tag", "text"], ["kind", "Kind", "select", KINDS, "kind"],
  ["project", "Project", "text"], ["workspace", "Workspace", "select", ["", "personal", "company"]],
  ["actor", "Author", "text"], ["after", "After", "date"], ["before", "Before", "date"]];

export default {
  title: "Memories",
  async render(main, params) {
    const controls = FILTERS.map(([name, label, type, choices, words]) => {
      const id = "list-" + name;
      const value = params[name] || "";
      const control = type === "select"
        ? h("select", { id, name }, choices.map((c) => h("option", { value: c, selected: c === value },
          c ? word(words, c) : "any")))
        : h("input", { id, name, type, value });
      return h("label", { for: id }, label, control);
    });
    const form = h("form", { class: "filters stack-narrow", onsubmit: (event) => {
      event.preventDefault();
      navigate("memories", { ...Object.fromEntries([...new FormData(form)].filter(([, v]) => v)),
        sort: params.sort }); // the sort outlives a new filter
    } }, controls, h("button", { type: "submit" }, "Filter"),
    h("a", { href: link("memories") }, "Clear"));
    // On a phone the filters fold away (they filled the first screen) unless one is in use.
    const filtering = FILTERS.some(([name]) => params[name]);
    const folded = h("details", { class: "filters-box", open: filtering || matchMedia("(min-width: 721px)").matches },
      h("summary", null, filtering ? "Filters (in use)" : "Filters"), form);
    const list = h("div", { class: "list" }, h("p", { class: "muted" }, "Loading…"));
    const total = h("span", { class: "muted", id: "memories-total" });
    const sorted = SORTS.some(([value]) => value === params.sort) && params.sort !== "newest" ? params.sort : null;
    const sort = h("select", { id: "memories-sort", onchange: () => navigate("memories", { ...params,
      sort: sort.value === "newest" ? undefined : sort.value, cursor: undefined, skip: undefined, offset: undefined }),
    }, SORTS.map(([value, words]) => h("option", { value, selected: value === (sorted || "newest") }, words)));
    main.append(heading("Memories", total, h("a", { href: link("capture") }, "Capture")),
      h("div", { class: "row list-head" }, h("label", { for: "memories-sort", class: "check" }, "Sort", sort), folded),
      list);

    api.get("/count").then((answer) => clear(total, `${plural(answer.count, "memory", "memories")} in all`),
      () => null);
    const filters = { ...params, cursor: undefined, skip: undefined, offset: undefined };
    const query = {};
    for (const [name] of FILTERS) if (params[name]) query[name] = params[name];
    for (const name of ["after", "before"]) if (query[name]) query[name] = localTime(query[name]).getTime();
    if (sorted) {
      await page(list, { ...query, sort: sorted }, filters, Math.max(0, Number(params.offset) || 0));
      return;
    }
    let cursor = Number(params.cursor) || null;
    let skip = Number(params.skip) || 0;
    if (skip > MOST - PAGE) { // more memories in one millisecond than a page can skip: move past that millisecond
      cursor -= 1;
      skip = 0;
    }
    if (cursor !== null) query.before = query.before ? Math.min(query.before, cursor) : cursor;
    query.n = PAGE + skip;
    try {
      const memories = (await api.get("/list", query)).slice(skip);
      const last = memories.at(-1);
      const sameMoment = (m) => m.created_at === last.created_at;
      const older = memories.length === PAGE ? h("a", { href: link("memories", { ...filters,
        cursor: last.created_at, skip: memories.filter(sameMoment).length + (last.created_at === cursor ? skip : 0),
      }) }, "Older →") : null;
      const newest = cursor !== null ? h("a", { href: link("memories", filters) }, "← Newest") : null;
      show(list, memories, newest, older);
    } catch (error) {
      clear(list, failure(error));
    }
  },
};

/** A page of a sorted list: by offset, as GET /list's other orders page. */
async function page(list, query, filters, offset) {
  try {
    const memories = await api.get("/list", { ...query, n: PAGE, offset });
    const earlier = Math.max(0, offset - PAGE) || undefined;
    const back = offset > 0 ? h("a", { href: link("memories", { ...filters, offset: earlier }) }, "← Previous")
      : null;
    const further = memories.length === PAGE && offset + PAGE <= LIST_OFFSET_MOST; // GET /list's furthest offset
    const next = further ? h("a", { href: link("memories", { ...filters, offset: offset + PAGE }) }, "Next →") : null;
    show(list, memories, back, next, query.sort);
  } catch (error) {
    clear(list, failure(error));
  }
}

/** A page of memories with their checkboxes and the bar for the picked ones, and the links to the pages beside. */
function show(list, memories, back, forward, sort) {
  const bulk = selection(memories, reload);
  // Sorted by importance, each card says the importance it is sorted by.
  const said = (m) => (sort === "important" ? h("span", { class: "badge", title: "Importance, 1 to 5" },
    `importance ${m.importance_score}`) : null);
  clear(list, bulk.bar, memories.length ? memories.map((m) => bulk.card(m, said(m)))
    : h("p", { class: "muted" }, "No memories match."),
  h("nav", { class: "pager", "aria-label": "Pages" }, back, forward));
}

/** Checkboxes on the page's cards, and the bar of what can be done to the picked ones together: confirm, retire,
 * tag, untag, share with the company, forget. Each waits out an Undo (app.withUndo) before its requests go. */
function selection(memories, reload) {
  const picked = new Set();
  const count = h("span", { id: "selected-count" });
  const cards = new Map();
  const held = (doing, done, request, { hide = false } = {}) => {
    const ids = [...picked];
    const n = plural(ids.length, "memory", "memories");
    let refused = [];
    withUndo(`${doing} ${n}.`, {
      hide: () => ids.forEach((id) => { cards.get(id).classList.add(hide ? "gone" : "pending"); }),
      undo: () => ids.forEach((id) => { cards.get(id).classList.remove("gone", "pending"); }),
      // All at once (each with keepalive when the page is being left), each one's answer kept: one refusal
      // neither stops the others nor hides what they did.
      send: async (keepalive) => {
        const answers = await Promise.allSettled(ids.map((id) => request(id, keepalive)));
        refused = answers.filter((answer) => answer.status === "rejected").map((answer) => answer.reason);
      },
      done: () => {
        const made = ids.length - refused.length;
        if (made) toast(`${plural(made, "memory", "memories")} ${done}.`);
        if (refused.length) toast(`${plural(refused.length, "memory", "memories")} not changed: `
          + `${refused[0].message}`, "error");
        if (bar.isConnected) reload(); // still on this view: show the memories as they now are
      },
    });
  };
  const button = (label, className, action) => h("button", { type: "button", class: className, onclick: action },
    label);
  const post = (path, body) => (id, keepalive) => api.post(path, { id, ...body }, undefined, { keepalive });
  const tag = h("input", { id: "bulk-tag", autocomplete: "off", placeholder: "a tag", size: 12 });
  const named = () => {
    const value = tag.value.trim().replace(/^#/, "");
    if (!value) tag.focus();
    return value;
  };
  const bar = h("div", { class: "bulk row", role: "toolbar", "aria-label": "With the picked memories", hidden: true },
    count,
    button("Confirm", "secondary", () => held("Confirming", "confirmed", post("/status", { status: "canonical" }))),
    button("Retire", "secondary", () => held("Retiring", "retired", post("/status", { status: "deprecated" }))),
    h("label", { for: "bulk-tag", class: "visually-hidden" }, "Tag to add or take off"), tag,
    button("Add tag", "secondary", () => {
      const value = named();
      if (value) held(`Tagging #${value} on`, `tagged #${value}`, post("/tags", { add: [value] }));
    }),
    button("Remove tag", "secondary", () => {
      const value = named();
      if (value) held(`Taking #${value} off`, `no longer tagged #${value}`, post("/tags", { remove: [value] }));
    }),
    button("Share with the company", "secondary", () => held("Sharing", "shared with the company",
      post("/share", { workspace: "company" }))),
    button("Forget", "danger", () => held("Forgetting", "forgotten", post("/forget", {}), { hide: true })));
  const update = () => {
    bar.hidden = picked.size === 0;
    clear(count, `${picked.size} picked:`);
  };
  return {
    bar,
    card(memory, extra = null) {
      const card = memoryCard(memory, { extra });
      const box = h("input", { type: "checkbox", class: "pick", "aria-label": `Pick: ${memory.content.slice(0, 60)}` });
      box.addEventListener("change", () => {
        if (box.checked) picked.add(memory.id);
        else picked.delete(memory.id);
        update();
      });
      card.prepend(box);
      cards.set(memory.id, card);
      return card;
    },
  };
}
