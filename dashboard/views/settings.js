// Settings: every runtime setting (GET /config) with its effective value, its default and whether it was changed,
// grouped by what it steers. Admins edit with the control the setting's range or choices call for, save one or all
// changes at once (PATCH /config: the API refuses a whole patch with a sentence naming the setting, shown next to
// the form) and reset one (DELETE /config/{key}); members see the values read-only. Stored overrides that no
// longer apply are listed with the reason. Above them, "Your access": who can read what, and for a member who made
// their token (an admin adding or replacing it saw it once), with a button to replace it themselves.
import { api, clear, currentTheme, failure, h, heading, isAdmin, keepToken, refreshMe, session, setTheme,
  SHOW_SYSTEM_TAGS_KEY, time, toast, UNDO_CHOICES, UNDO_SECONDS_KEY, undoSeconds } from "../app.js";

const GROUPS = [
  ["ranking", "Recall ranking", "How recall finds and orders memories.", [
    "RERANK_MODE", "RERANK_AMBIGUITY_MARGIN", "RERANK_TIMEOUT_MS", "KEYWORD_CANDIDATE_LIMIT",
    "SUBSTRING_MATCH_WEIGHT", "QUERY_SATURATION_FRACTION", "MAX_QUERY_TERMS", "KEYWORD_WEIGHT", "DENSE_WEIGHT",
    "MMR_LAMBDA", "RECENCY_FLOOR", "RECENCY_FLOOR_DURABLE", "RECENCY_FLOOR_VOLATILE",
    "CONTRADICTION_IMPORTANCE_STEP", "TAG_BOOST_STEP", "TAG_BOOST_MAX", "RELEVANCE_FLOOR", "OTHER_SPEAKER_WEIGHT",
    "GRAPH_HOP_DECAY", "DEFAULT_HOPS"]],
  ["output", "Recall output", "How much of each result recall shows.", [
    "SNIPPET_MAX_CHARS", "FULL_MATCH_MAX_CHARS", "RECALL_FULL_MATCHES", "STRONG_MATCH_RATIO",
    "RECALL_OUTPUT_BUDGET"]],
  ["duplicates", "Duplicates and contradictions", "When a new note counts as a repeat, or is checked against "
    + "what you already know.", ["DUPLICATE_BLOCK_THRESHOLD", "DUPLICATE_FLAG_THRESHOLD",
    "CANDIDATE_SCORE_THRESHOLD"]],
  ["place", "Time zone and team", "Dates without a time zone, and where captures land.", [
    "TIMEZONE", "TEAM_DEFAULT_SHARE"]],
];

function shown(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function same(a, b) {
  return typeof a === "number" && typeof b === "number" ? Math.abs(a - b) < 1e-12 : a === b;
}

function zones() {
  try {
    return Intl.supportedValuesOf("timeZone");
  } catch {
    return [];
  }
}

/** The control for one setting: a select for choices, a number input within the range, text otherwise. */
function control(key, meta, value) {
  const id = "setting-" + key;
  const described = `${id}-about`;
  if (meta.choices && meta.choices.length) {
    return h("select", { id, name: key, "aria-describedby": described },
      meta.choices.map((choice) => h("option", { value: choice, selected: choice === value }, choice)));
  }
  if (meta.type === "integer" || meta.type === "number") {
    return h("input", { id, name: key, type: "number", inputmode: meta.type === "integer" ? "numeric" : "decimal",
      min: meta.min ?? undefined, max: meta.max ?? undefined, step: meta.type === "integer" ? "1" : "0.01",
      value: String(value), "aria-describedby": described });
  }
  return h("input", { id, name: key, type: "text", value: String(value ?? ""), autocomplete: "off",
    spellcheck: "false", list: key === "TIMEZONE" ? "setting-zones" : undefined, "aria-describedby": described });
}

/** What the control holds, typed as the setting's value; what cannot be read as a number is sent as typed so the
 * API answers with its sentence. */
function read(input, meta) {
  if (meta.type === "integer" || meta.type === "number") {
    const text = input.value.trim();
    const number = Number(text);
    return text !== "" && Number.isFinite(number) ? number : input.value;
  }
  return input.value;
}

/** Who can read what, said plainly, and the member's own token: who made it, and a way to make one nobody else saw. */
function access() {
  const me = session.me;
  const result = h("div", { id: "token-result", role: "status" });
  const replace = h("button", { type: "button", id: "replace-token", class: "secondary", onclick: async () => {
    replace.disabled = true;
    try {
      const answer = await api.post("/team/me/token");
      keepToken(answer.token); // this browser goes on with the new token; every other client needs it too
      await refreshMe();
      clear(result, h("p", { class: "ok" }, "Your new token (shown this once; nobody else has seen it): "),
        h("p", null, h("code", { class: "token", id: "new-token" }, answer.token)),
        h("p", { class: "muted" }, "Give it to every app that uses your old token (MCP clients, scripts): the old "
          + "one no longer works."));
      made.textContent = "You made this token yourself: nobody else has seen it.";
    } catch (error) {
      clear(result, failure(error));
    } finally {
      replace.disabled = false;
    }
  } }, "Replace my token");
  const made = h("p", { id: "token-made" }, me.owner ? "Your token is the owner's: made when this brain first "
    + "started (auth_token in its data folder), or set by whoever runs it (BRAIN_AUTH_TOKEN)."
    : me.token_known_to_another ? `${me.token_made_by} made the token you use (${time(me.token_made_at)}) and saw `
      + "it once, to hand it to you. Until you replace it, they could use it to act as you." : "You made this "
      + "token yourself: nobody else has seen it.");
  return h("section", { class: "card settings-access", id: "token", "aria-labelledby": "access-title" },
    h("h2", { id: "access-title" }, "Your access"),
    h("ul", null,
      h("li", null, "Your personal memories are read by you alone: no member, admin or the owner can list, "
        + "recall or open them through the app, the API or MCP."),
      h("li", null, "What you share with a team, every member of that team reads; its author or an admin may "
        + "change it. Who opened or recalled a shared memory is shown to that person and to admins only."),
      h("li", null, "Admins see the team's activity (members added, tokens replaced, shares; never a memory's "
        + "text), may suspend you, and may remove you, which erases your personal memories."),
      h("li", null, "An admin who adds you or replaces your token sees that token once. You are told when "
        + "someone else replaced it; replace it yourself and nobody else holds it."),
      h("li", null, "Whoever runs the server (or its cloud account) can read the data files themselves.")),
    made, me.owner ? null : replace, result);
}

const SHARES = [["personal", "In my personal workspace"], ["company", "Shared with the company"],
  ["inherit", "As the team decides"]];

/** What a person sets for themselves: their name and where their captures land (the brain keeps these), the
 * colours and the brain's own tags (this browser keeps these), where notifications and the time zone are set,
 * and which models this brain runs on (GET /stats' models, ours). */
function preferences() {
  const me = session.me || {};
  const said = (field) => h("p", { class: "field-status", "aria-live": "polite", id: `${field}-status` });
  const nameStatus = said("pref-name");
  const name = h("input", { id: "pref-name", value: me.name || "", autocomplete: "name", maxlength: 100,
    disabled: me.owner, "aria-describedby": "pref-name-status" });
  const saveName = h("button", { type: "button", class: "secondary", hidden: me.owner, onclick: async () => {
    saveName.disabled = true;
    clear(nameStatus);
    try {
      const answer = await api.post("/team/profile", { name: name.value.trim() });
      clear(nameStatus, h("span", { class: "ok" }, `Saved: others see you as ${answer.member.name}.`));
      await refreshMe();
    } catch (error) {
      if (error.status !== 401) clear(nameStatus, failure(error));
    } finally {
      saveName.disabled = false;
    }
  } }, "Save name");
  const shareStatus = said("pref-share");
  const share = h("select", { id: "pref-share", "aria-describedby": "pref-share-status" },
    SHARES.filter(([value]) => !(me.owner && value === "inherit")).map(([value, label]) => h("option", { value,
      selected: value === me.default_share }, value === "inherit" ? `${label} (now: ${me.org_default_share})`
      : label)));
  let saved = me.default_share;
  share.addEventListener("change", async () => {
    clear(shareStatus);
    try {
      await api.post("/team/me/default-share", { default: share.value });
      saved = share.value;
      clear(shareStatus, h("span", { class: "ok" }, "Saved: new captures that name no workspace land there."));
      await refreshMe();
    } catch (error) {
      share.value = saved; // back to what is in force
      if (error.status !== 401) clear(shareStatus, failure(error));
    }
  });
  const theme = h("select", { id: "pref-theme" }, [["", "As the system is"], ["light", "Light"], ["dark", "Dark"]]
    .map(([value, label]) => h("option", { value, selected: value === currentTheme() }, label)));
  theme.addEventListener("change", () => {
    setTheme(theme.value);
    toast(`Colours: ${theme.selectedOptions[0].textContent.toLowerCase()}.`);
  });
  const box = h("input", { type: "checkbox", id: "show-system-tags",
    checked: localStorage.getItem(SHOW_SYSTEM_TAGS_KEY) === "1" });
  box.addEventListener("change", () => {
    if (box.checked) localStorage.setItem(SHOW_SYSTEM_TAGS_KEY, "1");
    else localStorage.removeItem(SHOW_SYSTEM_TAGS_KEY);
    toast(box.checked ? "The brain's own tags are shown." : "The brain's own tags are hidden.");
  });
  const undo = h("select", { id: "pref-undo" }, UNDO_CHOICES.map((n) => h("option", { value: String(n),
    selected: n === undoSeconds() }, `${n} seconds`)));
  undo.addEventListener("change", () => {
    localStorage.setItem(UNDO_SECONDS_KEY, undo.value);
    toast(`Undo now waits ${undo.value} seconds.`);
  });
  const models = h("div", { id: "pref-models" }, h("p", { class: "muted" }, "Loading…"));
  api.get("/stats").then((stats) => {
    const m = stats.models || {};
    const row = (label, id, none) => [h("dt", null, label), h("dd", null, id ? h("code", null, id)
      : h("span", { class: "muted" }, none))];
    clear(models, h("dl", { class: "models" },
      row("Search by meaning", m.embedder, "none: recall finds memories by their words only"),
      row("Reranker", m.reranker, "none: results keep recall's own order"),
      row("Language model", m.language_model, "none: Chat and written summaries are off until an admin sets one "
        + "up (see the README, Configuration)")));
  }, (error) => clear(models, failure(error)));
  return h("section", { class: "card", "aria-labelledby": "display-title" },
    h("h2", { id: "display-title", style: "margin-top:0" }, "Preferences"),
    h("div", { class: "stack" },
      h("label", { for: "pref-name" }, "Your name"),
      h("div", { class: "row" }, name, saveName),
      me.owner ? h("p", { class: "muted" }, "The owner's name comes from the deployment (BRAIN_OWNER_NAME).")
        : nameStatus,
      h("label", { for: "pref-share" }, "Where your captures land when they name no workspace", share), shareStatus,
      h("label", { for: "pref-theme" }, "Colours (this browser)", theme),
      h("label", { for: "pref-undo" }, "How long Undo waits before forgetting, clearing or changing (this browser)",
        undo),
      h("label", { class: "row" }, box, "Show the brain's own tags (such as contradiction-resolved or stale:as-of) "
        + "beside your topics (this browser)"),
      h("p", { class: "muted" }, "Notifications for reminders are turned on per device under ",
        h("a", { href: "#/reminders" }, "Reminders"), ". The time zone dates are read in is ",
        h("a", { href: "#setting-TIMEZONE" }, "Time zone"), ", below."),
      h("h3", null, "Models"), models));
}

// Plain names for the settings people look for; every other shows its key.
const NAMES = { TIMEZONE: "Time zone", TEAM_DEFAULT_SHARE: "Share new captures with the team", MMR_LAMBDA:
  "Relevance against variety", DEFAULT_HOPS: "Follow links when recalling", RERANK_MODE: "Second-pass ranking",
  RECALL_OUTPUT_BUDGET: "Most characters in an AI client's answer", SNIPPET_MAX_CHARS: "Characters per result",
  DUPLICATE_BLOCK_THRESHOLD: "Refuse a repeat above this likeness", DUPLICATE_FLAG_THRESHOLD:
  "Flag a near-repeat above this likeness", KEYWORD_WEIGHT: "Weight of exact words", DENSE_WEIGHT:
  "Weight of meaning" };
const ADVANCED = new Set(["ranking", "output", "duplicates", "other"]);

export default {
  title: "Settings",
  async render(main) {
    const admin = isAdmin();
    const head = heading("Settings");
    main.append(head, h("p", { class: "muted" }, "Loading the settings…"));
    let view;
    try {
      view = await api.get("/config");
    } catch (error) {
      clear(main, head, failure(error));
      return;
    }
    const status = h("div", { class: "settings-status", id: "settings-status" });
    const controls = new Map();
    const mine = access(); // kept across redraws: a token just shown stays on screen
    const prefs = preferences(); // kept too: a sentence just said under a field stays

    const say = (error) => clear(status, failure(error));
    const changes = () => {
      const changed = {};
      for (const [key, { input, meta }] of controls) {
        const value = read(input, meta);
        if (!same(value, view.config[key])) changed[key] = value;
      }
      return changed;
    };
    const refocus = (id) => { // the form is drawn afresh: keep the keyboard where it was
      const target = document.getElementById(id);
      if (target) target.focus();
    };
    /** Draws the form afresh from the server's values, keeping what the person typed into every setting other
     * than `done` (the ones just saved or reset) and has not saved yet. */
    const reload = async (done) => {
      const unsaved = [...controls].filter(([key, { input, meta }]) => !done.includes(key)
        && !same(read(input, meta), view.config[key])).map(([key, { input }]) => [key, input.value]);
      view = await api.get("/config");
      draw();
      for (const [key, typed] of unsaved) {
        const kept = controls.get(key);
        if (kept) kept.input.value = typed;
      }
    };
    const save = async (button, values) => {
      const keys = Object.keys(values);
      if (!keys.length) {
        clear(status, h("p", { class: "muted" }, "Nothing changed."));
        return;
      }
      button.disabled = true;
      try {
        await api.patch("/config", values);
        await reload(keys);
        refocus(keys.length === 1 ? "setting-" + keys[0] : "settings-save");
        clear(status, h("p", { class: "ok", role: "status" }, `Saved: ${keys.join(", ")}.`));
      } catch (error) {
        say(error);
        beside(keys, error);
      } finally {
        button.disabled = false;
      }
    };
    /** The refusal under the setting it names too, where the person is looking, and that field marked invalid. */
    const beside = (keys, error) => {
      for (const old of document.querySelectorAll(".setting-error")) old.remove();
      for (const input of document.querySelectorAll(".setting [aria-invalid]")) input.removeAttribute("aria-invalid");
      const key = keys.find((k) => error.message && error.message.includes(k));
      const field = key && controls.get(key);
      if (!field) return;
      const errorId = `setting-${key}-error`;
      field.input.setAttribute("aria-invalid", "true");
      field.input.setAttribute("aria-describedby", `setting-${key}-about ${errorId}`);
      field.input.closest(".setting").append(h("p", { class: "error setting-error", id: errorId }, error.message));
      const fold = field.input.closest("details");
      if (fold) fold.open = true;
      field.input.focus();
    };
    const reset = async (button, key) => {
      button.disabled = true;
      try {
        await api.del("/config/" + encodeURIComponent(key));
        await reload([key]);
        refocus("setting-" + key);
        clear(status, h("p", { class: "ok", role: "status" }, `${key} is back to its default.`));
      } catch (error) {
        say(error);
      } finally {
        button.disabled = false;
      }
    };

    const row = (key) => {
      const meta = (view.settings && view.settings[key]) || { description: "", choices: [],
        type: typeof view.config[key] === "string" ? "string" : "number" };
      const value = view.config[key];
      const changed = key in view.overrides;
      const id = "setting-" + key;
      const range = meta.min !== null && meta.min !== undefined ? `${meta.min} to ${meta.max}`
        : meta.choices && meta.choices.length ? meta.choices.join(", ") : null;
      const about = h("p", { class: "muted setting-about", id: `${id}-about` }, meta.description,
        range ? ` Allowed: ${range}.` : null, ` Default: ${shown(view.defaults[key])}.`);
      let editor;
      if (admin) {
        const input = control(key, meta, value);
        controls.set(key, { input, meta });
        const one = h("button", { type: "button", class: "secondary", "aria-label": `Save ${key}`,
          onclick: () => save(one, { [key]: read(input, meta) }) }, "Save");
        const back = changed ? h("button", { type: "button", class: "secondary", "aria-label": `Reset ${key}`,
          onclick: () => reset(back, key) }, "Reset") : null;
        editor = h("div", { class: "setting-edit" }, input, one, back);
      } else {
        editor = h("div", { class: "setting-edit" }, h("output", { id, class: "setting-value",
          "aria-describedby": `${id}-about` }, shown(value)));
      }
      return h("div", { class: "setting", dataset: { key } },
        h("div", { class: "setting-name" },
          admin ? h("label", { for: id }, NAMES[key] ? [NAMES[key], " ", h("code", null, key)] : key)
            : h("span", { class: "setting-key" }, NAMES[key] ? [NAMES[key], " ", h("code", null, key)] : key),
          changed ? h("span", { class: "badge changed" }, "changed") : null, about),
        editor);
    };

    const draw = () => {
      controls.clear();
      const known = new Set(GROUPS.flatMap(([, , , keys]) => keys));
      const others = Object.keys(view.config).filter((key) => !known.has(key));
      const groups = [...GROUPS, ...(others.length ? [["other", "Other", "", others]] : [])];
      const ignored = view.ignored && view.ignored.length ? h("section", { class: "card settings-ignored",
        "aria-labelledby": "ignored-title" },
      h("h2", { id: "ignored-title" }, "Stored changes that do not apply"),
      h("p", { class: "muted" }, "These were saved once but no longer hold, so their defaults apply instead."),
      h("ul", null, view.ignored.map((item) => h("li", { class: "warn" },
        h("strong", null, `${item.key} = ${shown(item.value)}`), `: ${item.reason}.`)))) : null;
      const section = ([slug, title, intro, keys]) => {
        const present = keys.filter((key) => key in view.config);
        if (!present.length) return null;
        return h("section", { class: "settings-group", "aria-labelledby": `group-${slug}` },
          h("h2", { id: `group-${slug}` }, title), intro ? h("p", { class: "muted" }, intro) : null,
          h("div", { class: "card settings-list" }, present.map(row)));
      };
      // The ranking constants are for whoever tunes recall: folded away, open when one of them was changed.
      const advanced = groups.filter(([slug]) => ADVANCED.has(slug));
      const tuned = advanced.some(([, , , keys]) => keys.some((key) => key in view.overrides))
        || Boolean(document.getElementById("advanced-settings")?.open); // a redraw keeps it as the person left it
      const sections = [...groups.filter(([slug]) => !ADVANCED.has(slug)).map(section),
        h("details", { class: "settings-advanced", id: "advanced-settings", open: tuned },
          h("summary", null, "Advanced: how recall ranks and shows memories, and what counts as a repeat"),
          advanced.map(section))];
      const count = Object.keys(view.overrides).length;
      const summary = h("p", { class: "muted" }, count ? `${count} setting${count > 1 ? "s" : ""} changed from the `
        + "shipped defaults." : "Every setting has its shipped default.",
      admin ? " Changes apply to the very next request." : " Only an admin can change settings: you see them here "
        + "as they are.");
      const saveAll = admin ? h("button", { type: "submit", id: "settings-save" }, "Save all changes") : null;
      const form = admin ? h("form", { class: "settings-form", novalidate: true, onsubmit: (event) => {
        event.preventDefault();
        save(saveAll, changes());
      } }, sections, h("div", { class: "settings-bar" }, saveAll, status)) : h("div", null, sections);
      const zoneList = admin ? h("datalist", { id: "setting-zones" }, zones().map((zone) => h("option",
        { value: zone }))) : null;
      clear(main, head, prefs, mine, summary, ignored, form, zoneList);
    };
    draw();
  },
};
