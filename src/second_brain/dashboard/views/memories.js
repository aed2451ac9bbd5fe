// Memories: newest first, with the filters GET /list takes, paged by time in pages of 25, so a page stays right
// while new memories arrive. GET /list's `before` is inclusive: the next page starts at the last memory's time and
// skips the ones of that same millisecond already shown (`skip`).
import { api, clear, failure, h, heading, link, localTime, memoryCard, navigate } from "../app.js";

const PAGE = 25;
const FILTERS = [["tag", "Tag", "text"], ["kind", "Kind", "select", ["", "episodic", "semantic", "procedural"]],
  ["project", "Project", "text"], ["workspace", "Workspace", "select", ["", "personal", "company"]],
  ["actor", "Author", "text"], ["after", "After", "date"], ["before", "Before", "date"]];

export default {
  title: "Memories",
  async render(main, params) {
    const controls = FILTERS.map(([name, label, type, choices]) => {
      const id = "list-" + name;
      const value = name === "before" && /^\d+$/.test(params.before || "") ? "" : params[name] || "";
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
    const skip = Number(params.skip) || 0;
    const query = { n: PAGE + skip };
    for (const [name] of FILTERS) if (params[name]) query[name] = params[name];
    for (const name of ["after", "before"]) {
      if (query[name] && !/^\d+$/.test(query[name])) query[name] = localTime(query[name]).getTime();
    }
    try {
      const memories = (await api.get("/list", query)).slice(skip);
      const last = memories.at(-1);
      const older = memories.length === PAGE ? h("a", { href: link("memories", { ...params, before: last.created_at,
        skip: memories.filter((m) => m.created_at === last.created_at).length + (last.created_at === Number(
          params.before) ? skip : 0) }) }, "Older →") : null;
      const newest = /^\d+$/.test(params.before || "")
        ? h("a", { href: link("memories", { ...params, before: undefined, skip: undefined }) }, "← Newest") : null;
      clear(list, memories.length ? memories.map((m) => memoryCard(m))
        : h("p", { class: "muted" }, "No memories match."),
        h("nav", { class: "pager", "aria-label": "Pages" }, newest, older));
    } catch (error) {
      clear(list, failure(error));
    }
  },
};
