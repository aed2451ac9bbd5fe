// Home: the brief (what came in, activity, topics, one memory to resurface, what needs attention), conflicts to
// review, due and overdue items and open loops (the Reminders view's own sections), and patterns waiting for a
// verdict.
import { act, api, clear, failure, h, heading, link, memoryCard, plural, sourceName, toast, token } from "../app.js";
import { dueSection, existingSubscription, loopSection } from "./reminders.js";

const STARTED_KEY = "secondBrain.gettingStartedDone";
const MCP_SOURCES = new Set(["claude", "mcp"]); // what MCP remember files memories under (it defaults to "claude")

/** How an AI client connects to this brain over HTTP, for copy and paste: `TOKEN` stands for the person's token. */
function clientSetups(endpoint) {
  return [
    ["Claude Code", `claude mcp add --transport http second-brain ${endpoint} --header "Authorization: Bearer TOKEN"`],
    ["Cursor (~/.cursor/mcp.json)", JSON.stringify({ mcpServers: { "second-brain": { url: endpoint,
      headers: { Authorization: "Bearer TOKEN" } } } }, null, 2)],
    ["VS Code (.vscode/mcp.json)", JSON.stringify({ servers: { "second-brain": { type: "http", url: endpoint,
      headers: { Authorization: "Bearer TOKEN" } } } }, null, 2)],
    ["Claude Desktop and other clients without headers", `Add a custom connector with the URL ${endpoint}: it signs `
      + "in through your browser (OAuth), where you paste your token once."],
    ["MCP Inspector", `npx @modelcontextprotocol/inspector --cli --server-url ${endpoint} --transport http `
      + '--header "Authorization: Bearer TOKEN" --method tools/list'],
  ];
}

/** The first-run checklist: shown until every step is done or the person hides it. */
async function gettingStarted(brief, redraw) {
  if (localStorage.getItem(STARTED_KEY)) return null;
  const endpoint = new URL("mcp", location.href.split("#")[0]).href;
  const connected = brief.sources.some((s) => MCP_SOURCES.has(s.source));
  let pushing = false;
  try {
    pushing = Boolean(await existingSubscription());
  } catch {
    pushing = false; // no push here: the step stays open, and Reminders says why
  }
  const steps = [
    [brief.total > 0, "Capture your first memory", h("a", { href: link("capture") }, "Capture"),
      " a note, a decision or a date (press c anywhere)."],
    [brief.total > 0, "Or bring in what you have", h("a", { href: link("backup") }, "Import a backup"),
      " from Second Brain or a compatible export."],
    [connected, "Connect an AI client", "so it remembers for you (MCP at ", h("code", null, endpoint), "):",
      h("div", { class: "stack" }, clientSetups(endpoint).map(([client, text]) => {
        const copy = h("button", { type: "button", class: "secondary" }, "Copy with my token");
        copy.addEventListener("click", () => act(copy, async () => {
          await navigator.clipboard.writeText(text.replaceAll("TOKEN", token()));
          toast(`Copied the ${client.split(" (")[0]} set-up, with your token: keep it private.`);
        }));
        return h("details", { class: "client-setup" }, h("summary", null, client),
          h("pre", { class: "secret" }, text), text.includes("TOKEN") ? copy : null);
      }))],
    [pushing, "Get reminders on this device", h("a", { href: link("reminders") }, "Turn on notifications"),
      " under Reminders."],
  ];
  // A step done stays done (the brief's sources cover two days only; a subscription may lapse).
  steps.forEach((step, n) => {
    if (step[0]) localStorage.setItem(`${STARTED_KEY}.${n}`, "1");
    else step[0] = Boolean(localStorage.getItem(`${STARTED_KEY}.${n}`));
  });
  const done = steps.filter(([ok]) => ok).length;
  if (done === steps.length) localStorage.setItem(STARTED_KEY, "1");
  if (done === steps.length) return null;
  const hide = h("button", { type: "button", class: "secondary" }, "Hide this");
  hide.addEventListener("click", () => {
    localStorage.setItem(STARTED_KEY, "1");
    redraw();
  });
  return h("section", { class: "card getting-started", "aria-labelledby": "started-title" },
    h("h2", { id: "started-title", style: "margin-top:0" }, `Get started · ${done} of ${steps.length} done`),
    h("ol", { class: "checklist" }, steps.map(([ok, title, ...detail]) => h("li", { class: ok ? "done" : null },
      h("strong", null, (ok ? "✓ " : "") + title), h("span", { class: "visually-hidden" }, ok ? " (done)" : ""),
      h("div", { class: "muted" }, detail)))),
    hide);
}

function activityChart(activity) {
  const peak = Math.max(1, ...activity.map((d) => d.count));
  // `day` counts UTC days since the epoch: read it in UTC, or the Americas would see the day before.
  const label = (day) => new Date(day * 86400000).toLocaleDateString(undefined, { month: "short", day: "numeric",
    timeZone: "UTC" });
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
  if (brief.attention.conflicts) {
    const count = plural(brief.attention.conflicts, "conflict");
    items.push(h("li", null, h("a", { href: "#conflicts" }, `${count} to review`)));
  }
  if (due && due.counts.overdue) {
    items.push(h("li", null, h("a", { href: link("reminders") }, `${due.counts.overdue} overdue`)));
  }
  if (brief.attention.unindexed) {
    const button = h("button", { type: "button", class: "secondary", onclick: () => act(button, async () => {
      const result = await api.post("/vectorize-pending");
      toast(`Indexed ${result.vectorized} memories; ${result.remaining} left.`);
    }) }, "Index now");
    items.push(h("li", null, `${plural(brief.attention.unindexed, "memory is", "memories are")} not searchable by `
      + "meaning yet ", button));
  }
  if (brief.attention.stale) {
    items.push(h("li", null, h("a", { href: link("memories", { tag: "stale:as-of" }) },
      `${plural(brief.attention.stale, "memory", "memories")} may be out of date`)));
  }
  if (brief.attention.patterns) {
    const count = plural(brief.attention.patterns, "pattern");
    items.push(h("li", null, h("a", { href: "#patterns" }, `${count} to confirm`))); // a place on this page
  }
  return h("section", { class: "card", "aria-labelledby": "attention-title" },
    h("h2", { id: "attention-title", style: "margin-top:0" }, "Needs attention"),
    items.length ? h("ul", null, items) : h("p", { class: "muted" }, "Nothing needs attention."));
}

// What capture decided about a pair, in words a person reads at a glance.
const CONFLICT_WORDS = {
  retired: "The newer note retired the older one",
  kept_canonical: "The newer note was kept as a draft beside a canonical memory",
  similar: "Stored beside a very similar memory",
  possible_update: "The newer note may update the older one",
  merged: "A note was merged into this memory",
  replaced: "A note replaced this memory's text",
};

function conflictList(conflicts, refresh) {
  if (!conflicts.length) return null;
  const side = (label, memory) => memory ? h("div", { class: "conflict-memory" }, h("p", { class: "muted" }, label),
    memoryCard(memory)) : null;
  return h("section", { id: "conflicts", "aria-labelledby": "conflicts-title" },
    h("h2", { id: "conflicts-title" }, "Conflicts to review"),
    h("p", { class: "muted" }, "What capture decided about notes that may say different things about one subject. "
      + "Keep both undoes what it did."),
    h("div", { class: "list" }, conflicts.map((item) => {
      const decide = (keep, label) => {
        const button = h("button", { type: "button", class: keep === "both" ? "" : "secondary",
          onclick: () => act(button, async () => {
            await api.post("/conflicts/answer", { conflict: item.conflict, keep });
            toast(keep === "both" ? "Both kept." : `Kept the ${keep} one.`);
            await refresh();
          }) }, label);
        return button;
      };
      return h("article", { class: "card conflict", dataset: { conflict: item.conflict } },
        h("p", null, h("strong", null, CONFLICT_WORDS[item.kind] || item.kind),
          item.reason ? ` — ${item.reason}` : ""),
        side("Older", item.older), side("Newer", item.newer),
        item.note ? h("p", { class: "muted" }, "The note: ", item.note) : null,
        h("p", { class: "actions" }, decide("both", "Keep both"),
          item.newer || item.note ? decide("newer", item.newer ? "Keep the newer" : "Keep the merge") : null,
          decide("older", "Keep the older")));
    })));
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
            await refresh();
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
    const started = h("div");
    const summary = h("div", null, h("p", { class: "muted" }, "Loading the brief…"));
    const patterns = h("div");
    const review = h("div");
    const due = dueSection();
    const loops = loopSection();
    main.append(heading("Home"), started, summary, review, due.section, loops.section, patterns);
    let turn = 0;
    const draw = async () => {
      const mine = ++turn; // two quick refreshes: only the later one draws
      try {
        const [brief, overdue, conflicts] = await Promise.all([api.get("/brief"), due.refresh(),
          api.get("/conflicts")]);
        if (mine !== turn) return;
        const sources = brief.sources.map((s) => `${s.count} through ${sourceName(s.source)}`).join(", ");
        clear(summary,
          h("div", { class: "grid" },
            h("section", { class: "card", "aria-labelledby": "captured-title" },
              h("h2", { id: "captured-title", style: "margin-top:0" }, `Captured in ${brief.window_hours} hours`),
              h("p", { class: "stat" }, String(brief.captured)),
              h("p", { class: "muted" }, sources ? sources + "." : "Nothing new.",
                ` ${plural(brief.total, "memory", "memories")} in all.`)),
            activityChart(brief.activity),
            attention(brief, overdue)),
          h("section", { "aria-labelledby": "topics-title" }, h("h2", { id: "topics-title" }, "Topics this week"),
            brief.topics.length ? h("ul", { class: "tags" }, brief.topics.map((t) => h("li", { class: "tag" },
              h("a", { href: link("memories", { tag: t.tag }) }, `#${t.tag}`), h("span", { class: "muted" },
                ` ${t.count}`)))) : h("p", { class: "muted" }, "No tags used this week.")),
          brief.resurface ? h("section", { "aria-labelledby": "resurface-title" },
            h("h2", { id: "resurface-title" }, "Worth re-reading"), memoryCard(brief.resurface)) : null);
        clear(review, conflictList(conflicts.conflicts, draw));
        clear(started, await gettingStarted(brief, draw));
        clear(patterns, patternList(brief.patterns, draw));
      } catch (error) {
        if (mine === turn) clear(summary, failure(error));
      }
    };
    await Promise.all([draw(), loops.refresh()]);
  },
};
