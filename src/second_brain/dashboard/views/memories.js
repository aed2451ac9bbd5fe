// Memories: newest first, with the filters GET /list takes, paged by time in pages of 25, so a page stays right
// while new memories arrive. The page's `cursor` is the last memory's time; GET /list's `before` is inclusive, so
// the next page asks from that millisecond and skips the memories of it already shown (`skip`).
import { api, clear, failure, h, heading, link, localTime, memoryCard, navigate } from "../app.js";

const PAGE = 25;
const MOST = 100; // GET /list's largest page
const KINDS = ["", "episodic", "semantic"]; // the kinds GET /list and /recall filter on
const FILTERS = [["tag", "Tag", "text"], ["kind", "Kind", "select", KINDS],
  ["project", "Project", "text"], ["workspace", "Workspace", "select", ["", "personal", "company"]],
  ["actor", "Author", "text"], ["after", "After", "date"], ["before", "Before", "date"]];

export default {
  title: "Memories",
  async render(main, params) {
    const controls = FILTERS.map(([name, label, type, choices]) => {
      const id = "list-" + name;
      const value = params[name] || "";
      const control = type === "select"
        ? h("select", { id, name }, choices.map((c) => h("option", { value: c, selected: c === value }, c || "any")))
        : h("input", { id, name, type, value });
      return h("label", { for: id }, label, control);
    });
    const form = h("form", { class: "filters", onsubmit: (event) => {
      event.preventDefault();
      navigate("memories", Object.fromEntries([...new FormData(form)].filter(([, v]) => v)));
    } }, controls, h("button", { type: "submit" }, "Filter"),
    h("a", { href: link("memories") }, "Clear"));
    const list = h("div", { class: "list" }, h("p", { class: "muted" }, "Loading…"));
    main.append(heading("Memories", h("a", { href: link("capture") }, "Capture")), form, list);

    const filters = { ...params, cursor: undefined, skip: undefined };
    const query = {};
    for (const [name] of FILTERS) if (params[name]) query[name] = params[name];
    for (const name of ["after", "before"]) if (query[name]) query[name] = localTime(query[name]).getTime();
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
      clear(list, memories.length ? memories.map((m) => memoryCard(m))
        : h("p", { class: "muted" }, "No memories match."),
      h("nav", { class: "pager", "aria-label": "Pages" }, newest, older));
    } catch (error) {
      clear(list, failure(error));
    }
  },
};
