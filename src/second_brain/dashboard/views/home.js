// Home: the brief (what came in, activity, topics, one memory to resurface, what needs attention), due and
// overdue items, open loops and patterns waiting for a verdict. One request each, in parallel.
import { act, api, clear, failure, h, heading, link, memoryCard, time, toast } from "../app.js";

function activityChart(activity) {
  const peak = Math.max(1, ...activity.map((d) => d.count));
  const label = (day) => new Date(day * 86400000).toLocaleDateString(undefined, { month: "short", day: "numeric" });
  const total = activity.reduce((sum, d) => sum + d.count, 0);
  return h("figure", { class: "card", style: "margin:0" },
    h("figcaption", null, h("strong", null, "Last 14 days"), h("span", { class: "muted" }, ` · ${total} captured`)),
    h("div", { class: "chart", role: "img",
      "aria-label": "Captures per day: " + activity.map((d) => `${label(d.day)} ${d.count}`).join(", ") },
    activity.map((d) => h("div", { class: "bar", title: `${label(d.day)}: ${d.count}`,
      style: `height:${Math.round((d.count / peak) * 100)}%` }))),
    h("div", { class: "chart-labels muted", "aria-hidden": "true" },
      h("span", null, label(activity[0]?.day ?? 0)), h("span", null, label(activity.at(-1)?.day ?? 0))));
}

function attention(brief, due) {
  const items = [];
  if (due.counts.overdue) items.push(h("li", null, h("a", { href: "#due" }, `${due.counts.overdue} overdue`)));
  if (brief.attention.unindexed) {
    const button = h("button", { type: "button", class: "secondary", onclick: () => act(button, async () => {
      const result = await api.post("/vectorize-pending");
      toast(`Indexed ${result.vectorized} memories; ${result.remaining} left.`);
    }) }, "Index now");
    items.push(h("li", null, `${brief.attention.unindexed} memories are not searchable by meaning yet `, button));
  }
  if (brief.attention.stale) {
    items.push(h("li", null, h("a", { href: link("memories", { tag: "stale:as-of" }) },
      `${brief.attention.stale} memories may be out of date`)));
  }
  if (brief.attention.patterns) {
    items.push(h("li", null, h("a", { href: "#patterns" }, `${brief.attention.patterns} patterns to confirm`)));
  }
  return h("section", { class: "card", "aria-labelledby": "attention-title" },
    h("h2", { id: "attention-title", style: "margin-top:0" }, "Needs attention"),
    items.length ? h("ul", null, items) : h("p", { class: "muted" }, "Nothing needs attention."));
}

function dueList(due, refresh) {
  const row = (item, overdue) => {
    const snooze = h("button", { type: "button", class: "secondary", onclick: () => act(snooze, async () => {
      const until = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
      await api.post("/due/snooze", { id: item.id, until });
      toast(`Snoozed until ${until}.`);
      refresh();
    }) }, "Snooze a day");
    const done = h("button", { type: "button", class: "secondary", onclick: () => act(done, async () => {
      await api.post("/due/clear", { id: item.id });
      toast("Cleared.");
      refresh();
    }) }, "Clear");
    return memoryCard(item, { extra: [h("span", { class: overdue ? "error" : "warn" },
      `${item.when_kind} ${time(item.when_at)}`), h("span", { class: "actions" }, snooze, done)] });
  };
  return h("section", { id: "due", "aria-labelledby": "due-title" },
    h("h2", { id: "due-title" }, `Due (${due.counts.overdue} overdue, ${due.counts.upcoming} in the next 48 hours)`),
    due.overdue.length + due.upcoming.length
      ? h("div", { class: "list" }, due.overdue.map((i) => row(i, true)), due.upcoming.map((i) => row(i, false)))
      : h("p", { class: "muted" }, "Nothing due."));
}

function loopList(loops, refresh) {
  return h("section", { "aria-labelledby": "loops-title" },
    h("h2", { id: "loops-title" }, `Open loops (${loops.total})`),
    loops.loops.length ? h("div", { class: "list" }, loops.loops.slice(0, 10).map((loop) => {
      const resolve = (action, label) => {
        const button = h("button", { type: "button", class: "secondary", onclick: () => act(button, async () => {
          await api.post("/loops/resolve", { id: loop.id, action });
          toast(action === "done" ? "Marked done." : "No longer a task.");
          refresh();
        }) }, label);
        return button;
      };
      return memoryCard(loop, { extra: h("span", { class: "actions" }, resolve("done", "Done"),
        resolve("not-task", "Not a task")) });
    }), loops.total > 10 ? h("a", { href: link("reminders") }, `All ${loops.total} open loops`) : null)
      : h("p", { class: "muted" }, "No open loops."));
}

function patternList(patterns, refresh) {
  if (!patterns.length) return null;
  return h("section", { id: "patterns", "aria-labelledby": "patterns-title" },
    h("h2", { id: "patterns-title" }, "Patterns to confirm"),
    h("p", { class: "muted" }, "Derived from your memories overnight; recall ignores them until you confirm."),
    h("div", { class: "list" }, patterns.map((pattern) => {
      const decide = (action, label) => {
        const button = h("button", { type: "button", class: action === "confirm" ? "" : "secondary",
          onclick: () => act(button, async () => {
            await api.post("/patterns/resolve", { id: pattern.id, action });
            toast(action === "confirm" ? "Pattern confirmed." : "Pattern dismissed.");
            refresh();
          }) }, label);
        return button;
      };
      return memoryCard(pattern, { extra: h("span", { class: "actions" }, decide("confirm", "Confirm"),
        decide("dismiss", "Dismiss")) });
    })));
}

export default {
  title: "Home",
  async render(main) {
    const head = heading("Home");
    main.append(head, h("p", { class: "muted" }, "Loading the brief…"));
    const draw = async () => {
      const [brief, due, loops] = await Promise.all([api.get("/brief"), api.get("/due"), api.get("/loops",
        { limit: 50 })]);
      const sources = brief.sources.map((s) => `${s.count} from ${s.source}`).join(", ");
      clear(main, head,
        h("div", { class: "grid" },
          h("section", { class: "card", "aria-labelledby": "captured-title" },
            h("h2", { id: "captured-title", style: "margin-top:0" }, `Captured in ${brief.window_hours} hours`),
            h("p", { class: "stat" }, String(brief.captured)),
            h("p", { class: "muted" }, sources ? sources + "." : "Nothing new.", ` ${brief.total} memories in all.`)),
          activityChart(brief.activity),
          attention(brief, due)),
        h("section", { "aria-labelledby": "topics-title" }, h("h2", { id: "topics-title" }, "Topics this week"),
          brief.topics.length ? h("ul", { class: "tags" }, brief.topics.map((t) => h("li", { class: "tag" },
            h("a", { href: link("memories", { tag: t.tag }) }, `#${t.tag}`), h("span", { class: "muted" },
              ` ${t.count}`)))) : h("p", { class: "muted" }, "No tags used this week.")),
        brief.resurface ? h("section", { "aria-labelledby": "resurface-title" },
          h("h2", { id: "resurface-title" }, "Worth re-reading"), memoryCard(brief.resurface)) : null,
        dueList(due, refresh), loopList(loops, refresh), patternList(brief.patterns, refresh));
    };
    const refresh = () => draw().catch((error) => main.append(failure(error)));
    await draw().catch((error) => clear(main, head, failure(error)));
  },
};
