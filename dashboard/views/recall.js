// Recall: the query with its filters in the address (so a search can be bookmarked and the back button works),
// scores, snippets with the query's words marked, truncated results expandable, and "as of" a past moment.
import { act, api, clear, failure, h, heading, highlight, link, localTime, navigate, plural, queryWords, reload,
  tagList, toast, when, word, workspaceName } from "../app.js";

const FILTERS = [
  ["tag", "Tag", "text"], ["kind", "Kind", "select", ["", "episodic", "semantic"], "kind"],
  ["project", "Project", "text"], ["workspace", "Workspace", "select", ["", "personal", "company"]],
  ["after", "After", "date"], ["before", "Before", "date"], ["hops", "Graph hops", "select", ["", "0", "1", "2", "3"]],
  ["topK", "Results", "select", ["10", "5", "20"]], ["as_of", "As of", "datetime-local"],
];

function field([name, label, type, choices, words], value) {
  const id = "recall-" + name;
  const control = type === "select"
    ? h("select", { id, name }, choices.map((c) => h("option", { value: c, selected: c === (value || "") },
      c ? word(words, c) : "any")))
    : h("input", { id, name, type, value: value || "" });
  return h("label", { for: id }, label, control);
}

/** What recall knows of a result's history, said on its card: replaced by a newer memory, or maybe updated by
 * another (a change capture could only flag), with the answer one click away. */
function history(item) {
  if (item.superseded_by) {
    return h("p", { class: "warn", dataset: { history: "replaced" } }, "A newer memory replaced this one: ",
      h("a", { href: link("entry", { id: item.superseded_by }) }, "read the newer one"), ".");
  }
  const others = item.conflicts_with || [];
  if (!others.length) return null;
  const answer = (keep, label) => {
    const button = h("button", { type: "button", class: "secondary", onclick: () => act(button, async () => {
      const { conflicts } = await api.get("/conflicts", { limit: 100 });
      const pair = conflicts.find((c) => c.older && c.newer && [c.older.id, c.newer.id].includes(item.id)
        && others.some((other) => [c.older.id, c.newer.id].includes(other)));
      if (!pair) {
        navigate("", {});
        return;
      }
      await api.post("/conflicts/answer", { conflict: pair.conflict, keep });
      toast(keep === "newer" ? "Kept the newer one: the older is retired." : "Both kept, the flag cleared.");
      await reload();
    }) }, label);
    return button;
  };
  return h("p", { class: "warn", dataset: { history: "conflict" } }, "This may say otherwise than ",
    others.map((other, index) => [index ? ", " : "", h("a", { href: link("entry", { id: other }) }, "another memory")]),
    ". ", answer("newer", "The newer one replaced the older"), " ", answer("both", "Both are true"));
}

const MATCH_SAYS = {
  strong: "Holds every word you asked for, or clearly means it (score out of 100)",
  partial: "Holds some of your words, or is close in meaning (score out of 100)",
  weak: "Only loosely related: the closest there is (score out of 100)",
};

function result(item, words, asOf) {
  const content = h("p", { class: "content" }, highlight(item.content, words));
  const more = item.truncated ? h("button", { type: "button", class: "secondary", onclick: async () => {
    more.disabled = true;
    try {
      const { entry } = await api.get("/entry", { id: item.id, as_of: asOf }); // the text of then, in the past
      clear(content, ...highlight(entry.content, words));
      more.remove();
    } catch (error) {
      more.replaceWith(failure(error));
    }
  } }, `Show all ${item.full_length} characters`) : null;
  const via = item.hop ? h("span", { class: "badge" }, `${item.hop} hop${item.hop > 1 ? "s" : ""} via `,
    item.via_type || "link", item.related_to ? [" from ", h("a", { href: link("entry", { id: item.related_to }) },
      "a match")] : null) : null;
  return h("article", { class: "item card", tabindex: "-1", dataset: { href: link("entry", { id: item.id }) } },
    h("div", { class: "meta" }, h("span", { class: "score", dataset: { match: item.match }, title: MATCH_SAYS[item.match] },
      `${item.match} match · ${item.score.toFixed(0)}`), via, item.updated ? h("span", { class: "badge" }, "matched an update") : null),
    content, more, asOf ? null : history(item),
    h("div", { class: "meta" }, tagList(item.tags), h("span", { class: "muted" }, workspaceName(item.workspace)),
      item.actor_name ? h("span", { class: "muted" }, item.actor_name) : null, when(item.created_at),
      h("a", { href: link("entry", { id: item.id }) }, "Open")));
}

export default {
  title: "Recall",
  async render(main, params) {
    const input = h("input", { id: "recall-query", name: "query", type: "search", value: params.q || "",
      placeholder: "What are you looking for?", autocomplete: "off", class: "grow" });
    const form = h("form", { role: "search", onsubmit: (event) => {
      event.preventDefault();
      const data = Object.fromEntries(new FormData(form));
      const next = { q: data.query.trim() };
      for (const [name] of FILTERS) if (data[name]) next[name] = data[name];
      if (next.topK === "10") delete next.topK;
      navigate("recall", next);
    } },
    h("div", { class: "row" }, h("label", { for: "recall-query", class: "visually-hidden" }, "Query"), input,
      h("button", { type: "submit" }, "Recall")),
    h("details", { open: FILTERS.some(([name]) => params[name] && name !== "topK") },
      h("summary", null, "Filters"), h("div", { class: "filters" }, FILTERS.map((f) => field(f, params[f[0]])))));
    const results = h("div", { class: "list" });
    const summary = h("p", { class: "visually-hidden", role: "status" }); // one line announced, not every card
    main.append(heading("Recall"), form, summary, results);
    if (!params.q) {
      input.focus();
      results.append(h("p", { class: "muted" }, "Search by meaning and by exact words. Press / from anywhere."));
      return;
    }
    results.append(h("p", { class: "muted" }, "Searching…"));
    const query = { query: params.q, topK: params.topK || 10 };
    for (const [name] of FILTERS) {
      if (params[name] && name !== "topK") query[name] = params[name];
    }
    for (const name of ["after", "before"]) {
      if (query[name]) query[name] = localTime(query[name]).getTime();
    }
    if (query.as_of) query.as_of = localTime(query.as_of).toISOString();
    try {
      const answer = await api.get("/recall", query);
      clear(summary, plural(answer.results.length, "result"));
      const words = queryWords(answer.query_used || params.q);
      clear(results,
        answer.as_of ? h("p", { class: "warn" }, "As the brain stood on ", when(answer.as_of), ".") : null,
        answer.did_you_mean ? h("p", { class: "muted", "data-did-you-mean": "" }, "Showing results for ",
          h("strong", null, answer.did_you_mean), ": no memory holds ", h("em", null, params.q), " as typed.") : null,
        answer.semantic_unavailable ? h("p", { class: "warn" },
          "Matching by meaning is unavailable right now: these results match your words only.") : null,
        answer.insight ? h("p", { class: "card" }, h("strong", null, "Insight: "), answer.insight) : null,
        answer.results.length && answer.message ? h("p", { class: "muted", dataset: { weak: "" } }, answer.message)
          : null,
        answer.results.length ? answer.results.map((item) => result(item, words, query.as_of))
          : h("p", { class: "muted" }, "Nothing matched. Try other words, or fewer filters."));
    } catch (error) {
      clear(results, failure(error));
    }
  },
};
