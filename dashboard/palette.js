// The command palette: the header's search box answers as you type. Memories (recall, with its typo fallback),
// projects and actions in one list, driven from the keyboard: Ctrl/Cmd-K or "/" to reach it, arrows to choose,
// Enter to open the choice (or, with nothing chosen, the full Recall view), Escape to close.
import { api, clear, h, link, NAV, session } from "./app.js";

const DELAY_MS = 150; // typing pauses shorter than this send no request
const MEMORIES = 6;
let projects = null; // read once per page load, on first use

export function setupPalette() {
  const form = document.getElementById("search");
  const input = document.getElementById("search-input");
  const list = h("ul", { id: "palette", class: "palette", role: "listbox", "aria-label": "Suggestions" });
  const note = h("p", { id: "palette-note", class: "palette-note muted", role: "status" });
  const box = h("div", { class: "palette-box", hidden: true }, note, list);
  form.append(box);
  input.setAttribute("role", "combobox");
  input.setAttribute("aria-controls", "palette");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-expanded", "false");

  let timer = null;
  let inflight = null; // the AbortController of the recall being asked
  let asked = 0; // the newest question: an older answer arriving late is dropped
  let options = [];
  let active = -1;

  function close() {
    box.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    active = -1;
  }

  function choose(index) {
    active = index;
    options.forEach((option, i) => option.element.setAttribute("aria-selected", String(i === index)));
    if (index >= 0) {
      input.setAttribute("aria-activedescendant", options[index].element.id);
      options[index].element.scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
  }

  function go(option) {
    close();
    input.blur();
    location.hash = option.href;
  }

  function show(text, found, said) {
    options = found.map((option, i) => ({
      ...option,
      element: h("li", { id: `palette-${i}`, role: "option", "aria-selected": "false", class: "palette-option",
                         onmousedown: (event) => { event.preventDefault(); go(option); } },
        h("span", { class: "palette-kind" }, option.kind), " ", option.label),
    }));
    clear(list, options.map((option) => option.element));
    clear(note, said ?? (options.length ? "" : `Nothing matches “${text}”. Enter searches everything.`));
    box.hidden = false;
    input.setAttribute("aria-expanded", "true");
    choose(-1);
  }

  async function suggest(text) {
    const turn = ++asked;
    if (inflight) inflight.abort();
    inflight = new AbortController();
    const words = text.toLowerCase().split(/\s+/).filter(Boolean);
    const found = actions(words);
    let said = null;
    try {
      const [answer, known] = await Promise.all([
        api.get("/recall", { query: text, topK: MEMORIES }, { signal: inflight.signal }),
        knownProjects(),
      ]);
      if (turn !== asked) return;
      // Projects are matched on the words recall read ("pricng" finds the pricing project too).
      const read = answer.did_you_mean ? answer.did_you_mean.toLowerCase().split(/\s+/).filter(Boolean) : words;
      found.unshift(...known.filter((p) => mentions(read, `${p.name} ${p.id}`)).slice(0, 3).map((p) => ({
        kind: "Project", label: p.name, href: link("memories", { project: p.id }),
      })));
      // A result another ranked above it may update is said to be maybe outdated (recall ranks the newer first).
      const rank = new Map(answer.results.map((r, index) => [r.id, index]));
      const outdated = (r) => (r.conflicts_with || []).some((other) => rank.get(other) < rank.get(r.id));
      found.unshift(...answer.results.map((r) => ({
        kind: r.superseded_by ? "Replaced" : outdated(r) ? "May be outdated" : "Memory",
        label: snippet(r.content), href: link("entry", { id: r.id }),
      })));
      if (answer.did_you_mean) said = `Showing results for “${answer.did_you_mean}”: no memory holds “${text}” as typed.`;
    } catch (error) {
      if (error.name === "AbortError" || turn !== asked) return;
      said = `Memories could not be searched: ${error.message}`;
    }
    show(text, found, said);
  }

  input.addEventListener("input", () => {
    clearTimeout(timer);
    const text = input.value.trim();
    if (text.length < 2) {
      asked++;
      if (inflight) inflight.abort();
      close();
      return;
    }
    timer = setTimeout(() => suggest(text), DELAY_MS);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (box.hidden || !options.length) return;
      event.preventDefault();
      // Down from the box goes to the first option, past the last back to the box; up the other way.
      let next = active + (event.key === "ArrowDown" ? 1 : -1);
      if (next >= options.length) next = -1;
      if (next < -1) next = options.length - 1;
      choose(next);
    } else if (event.key === "Enter" && active >= 0) {
      event.preventDefault();
      go(options[active]);
    } else if (event.key === "Enter") {
      clearTimeout(timer);
      asked++;
      close(); // the form's submit opens the Recall view
    } else if (event.key === "Escape" && !box.hidden) {
      event.preventDefault();
      event.stopPropagation();
      close();
    }
  });
  input.addEventListener("blur", () => setTimeout(close, 0));
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "k" && session.me) {
      event.preventDefault();
      input.focus();
      input.select();
    }
  });
}

function actions(words) {
  const all = [["capture", "Capture a memory"], ...NAV.filter(([view]) => view !== "capture")
    .map(([view, label]) => [view, `Go to ${label}`])];
  return all.filter(([, label]) => matches(words, label)).slice(0, 4)
    .map(([view, label]) => ({ kind: "Action", label, href: link(view) }));
}

/** Whether every word typed begins a word of the text ("rem" finds "Reminders"). */
function matches(words, text) {
  const has = text.toLowerCase().split(/[^\p{L}\p{N}]+/u);
  return words.length > 0 && words.every((word) => has.some((w) => w.startsWith(word)));
}

/** Whether a word typed (three letters or more) begins a word of the text: a query names a project among others. */
function mentions(words, text) {
  return words.some((word) => word.length >= 3 && matches([word], text));
}

async function knownProjects() {
  if (projects === null) {
    projects = api.get("/projects").then((answer) => answer.projects ?? [], () => []);
  }
  return projects;
}

function snippet(text) {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 90 ? line.slice(0, 89) + "…" : line;
}
