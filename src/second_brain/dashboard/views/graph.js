// Graph: GET /graph drawn as SVG with a small force-directed layout computed here (repulsion, springs along the
// links, a pull to the centre), from deterministic start positions so the same brain draws the same picture. Each
// node is a link to its memory (Tab reaches it, Enter opens it); focusing or hovering one lights up its neighbours
// and says how it is linked. Under the picture the same graph as plain lists, for keyboards and screen readers.
import { api, append, clear, failure, h, heading, link, navigate, session, workspaceName } from "../app.js";

const SVG = "http://www.w3.org/2000/svg";
const LABEL_CHARS = 28;

/** An SVG element: h() makes HTML elements, which an <svg> does not draw. */
function s(tag, attrs, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function shorten(text, size = LABEL_CHARS) {
  const flat = (text || "").replace(/\s+/g, " ").trim();
  return flat.length > size ? flat.slice(0, size - 1).trimEnd() + "…" : flat || "(empty)";
}

const typeName = (type) => (type || "link").replaceAll("_", " ");

/** Positions for the nodes in a width x height box: Fruchterman-Reingold with a pull to the centre. The start is a
 * golden-angle spiral in the order the API gave (the seed first, at the centre), so nothing random is involved. */
export function layout(nodes, edges, width, height) {
  const n = nodes.length;
  const index = new Map(nodes.map((node, i) => [node.id, i]));
  const springs = edges.map((e) => [index.get(e.source_id), index.get(e.target_id)])
    .filter(([a, b]) => a !== undefined && b !== undefined && a !== b);
  const cx = width / 2;
  const cy = height / 2;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  const step = Math.min(width, height) / 2 / Math.sqrt(n + 1);
  for (let i = 0; i < n; i += 1) {
    const angle = i * 2.399963229728653;
    const radius = step * Math.sqrt(i);
    x[i] = cx + radius * Math.cos(angle);
    y[i] = cy + radius * Math.sin(angle);
  }
  if (n < 2) return { x, y };
  const k = Math.min(Math.sqrt((width * height) / n) * 0.55, 140);
  const k2 = k * k;
  // Repulsion is n² per round: fewer rounds for big graphs keeps the view interactive within a second.
  const rounds = Math.max(60, Math.min(300, Math.floor(4e6 / (n * n))));
  const dx = new Float64Array(n);
  const dy = new Float64Array(n);
  let heat = Math.min(width, height) / 8;
  const cooling = heat / (rounds + 1);
  for (let round = 0; round < rounds; round += 1) {
    dx.fill(0);
    dy.fill(0);
    for (let i = 0; i < n; i += 1) {
      for (let j = i + 1; j < n; j += 1) {
        let ex = x[i] - x[j];
        let ey = y[i] - y[j];
        let d2 = ex * ex + ey * ey;
        if (d2 < 0.01) {
          ex = 0.1 * ((i % 3) - 1 || 1);
          ey = 0.1 * ((j % 3) - 1 || 1);
          d2 = ex * ex + ey * ey;
        }
        const f = k2 / d2; // (k²/d) along the unit vector (ex/d, ey/d)
        dx[i] += ex * f;
        dy[i] += ey * f;
        dx[j] -= ex * f;
        dy[j] -= ey * f;
      }
    }
    for (const [a, b] of springs) {
      const ex = x[a] - x[b];
      const ey = y[a] - y[b];
      const d = Math.sqrt(ex * ex + ey * ey) || 0.01;
      const f = d / k; // (d²/k) along the unit vector
      dx[a] -= ex * f;
      dy[a] -= ey * f;
      dx[b] += ex * f;
      dy[b] += ey * f;
    }
    for (let i = 0; i < n; i += 1) {
      dx[i] += (cx - x[i]) * 0.06 * (k / 10);
      dy[i] += (cy - y[i]) * 0.06 * (k / 10);
      const d = Math.sqrt(dx[i] * dx[i] + dy[i] * dy[i]) || 1;
      const move = Math.min(d, heat);
      x[i] += (dx[i] / d) * move;
      y[i] += (dy[i] / d) * move;
    }
    heat = Math.max(heat - cooling, 0.5);
  }
  return { x, y };
}

/** The positions scaled into the box, leaving a margin for the circles and their labels. */
function fit({ x, y }, width, height, margin) {
  const n = x.length;
  if (!n) return { x, y };
  let [minX, maxX, minY, maxY] = [Infinity, -Infinity, Infinity, -Infinity];
  for (let i = 0; i < n; i += 1) {
    minX = Math.min(minX, x[i]);
    maxX = Math.max(maxX, x[i]);
    minY = Math.min(minY, y[i]);
    maxY = Math.max(maxY, y[i]);
  }
  const spanX = maxX - minX || 1;
  const spanY = maxY - minY || 1;
  const fillX = (width - 2 * margin.x) / spanX;
  const fillY = (height - 2 * margin.y) / spanY;
  // Scaled to fit (a small graph only a little larger, so it stays compact), then stretched to the box's shape by
  // at most half again one way.
  const scale = Math.min(fillX, fillY, 1.6);
  const scaleX = Math.min(fillX, scale * 1.5, 1.6);
  const scaleY = Math.min(fillY, scale * 1.5, 1.6);
  const offX = (width - spanX * scaleX) / 2;
  const offY = (height - spanY * scaleY) / 2;
  return {
    x: x.map((v) => n === 1 ? width / 2 : offX + (v - minX) * scaleX),
    y: y.map((v) => n === 1 ? height / 2 : offY + (v - minY) * scaleY),
  };
}

const radius = (node) => Math.min(20, 6 + 3 * Math.sqrt(node.degree || 0));

function picture(answer, width, height, describe) {
  const { nodes, edges } = answer;
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const shown = edges.filter((e) => byId.has(e.source_id) && byId.has(e.target_id));
  const narrow = width < 600;
  const place = fit(layout(nodes, shown, width, height), width, height, narrow ? { x: 24, y: 24 } : { x: 90, y: 30 });
  const at = new Map(nodes.map((node, i) => [node.id, [place.x[i], place.y[i]]]));
  const neighbours = new Map(nodes.map((node) => [node.id, []]));
  for (const e of shown) {
    neighbours.get(e.source_id).push([e, e.target_id, "to"]);
    neighbours.get(e.target_id).push([e, e.source_id, "from"]);
  }
  // With many nodes only the best connected (and the seed) keep a label; the others show theirs on hover/focus.
  const top = new Set([...nodes].sort((a, b) => b.degree - a.degree).slice(0, narrow ? 8 : 20)
    .map((node) => node.id));
  const labelled = (node) => top.has(node.id) || node.id === answer.seed;
  const lines = shown.map((e) => {
    const [x1, y1] = at.get(e.source_id);
    const [x2, y2] = at.get(e.target_id);
    const from = shorten(byId.get(e.source_id).label, 40);
    const to = shorten(byId.get(e.target_id).label, 40);
    return s("g", { class: `edge ${e.provenance === "system" ? "system" : ""}`, "data-source": e.source_id,
      "data-target": e.target_id, "data-type": e.type },
    s("title", null, `${from} ${typeName(e.type)} ${to} (${e.provenance || "explicit"}, weight ${e.weight})`),
    s("line", { x1, y1, x2, y2, class: "hit" }), s("line", { x1, y1, x2, y2, class: "stroke" }));
  });
  const svg = s("svg", { class: "graph graph-canvas", viewBox: `0 0 ${width} ${height}`, role: "group",
    "aria-label": `Graph of ${nodes.length} memories and ${shown.length} links` });
  const highlight = (id) => {
    svg.classList.toggle("focusing", Boolean(id));
    for (const g of svg.querySelectorAll(".edge")) {
      g.classList.toggle("near", Boolean(id) && (g.dataset.source === id || g.dataset.target === id));
    }
    const near = new Set(id ? neighbours.get(id).map(([, other]) => other) : []);
    for (const a of svg.querySelectorAll(".node")) {
      a.classList.toggle("near", near.has(a.dataset.id) || a.dataset.id === id);
    }
    describe(id ? byId.get(id) : null, id ? neighbours.get(id).map(([e, other, way]) => [e, byId.get(other), way])
      : []);
  };
  // The seed first, then the best connected: the order Tab follows.
  const order = [...nodes].sort((a, b) => (b.id === answer.seed) - (a.id === answer.seed) || b.degree - a.degree);
  const circles = order.map((node) => {
    const [cx, cy] = at.get(node.id);
    const r = radius(node);
    const label = shorten(node.label, narrow ? 18 : LABEL_CHARS);
    const left = cx > (narrow ? width / 2 : width - 150);
    return s("a", { href: link("entry", { id: node.id }), class: `node ${node.id === answer.seed ? "seed" : ""} ${
      node.workspace === "company" ? "company" : ""}`, tabindex: "0", role: "link", "data-id": node.id,
    "aria-label": `${shorten(node.label, 80)} (${node.degree} link${node.degree === 1 ? "" : "s"})`,
    onfocus: () => highlight(node.id), onblur: () => highlight(null),
    onmouseenter: () => highlight(node.id), onmouseleave: () => highlight(null) },
    s("title", null, node.label), s("circle", { cx, cy, r }),
    s("text", { x: left ? cx - r - 4 : cx + r + 4, y: cy + 4, "text-anchor": left ? "end" : "start",
      class: labelled(node) ? "label" : "label minor", "aria-hidden": "true" }, label));
  });
  svg.append(s("g", { class: "edges" }, lines), s("g", { class: "nodes" }, circles));
  return svg;
}

function lists(answer) {
  const byId = new Map(answer.nodes.map((node) => [node.id, node]));
  const shown = answer.edges.filter((e) => byId.has(e.source_id) && byId.has(e.target_id));
  const entry = (node, size = 60) => h("a", { href: link("entry", { id: node.id }) }, shorten(node.label, size));
  return h("div", { class: "graph-lists" },
    h("section", { "aria-labelledby": "graph-nodes-title" }, h("h2", { id: "graph-nodes-title" }, "Nodes"),
      h("ul", { class: "graph-list nodes-list" }, answer.nodes.map((node) => h("li", { class: "item", tabindex: "-1",
        dataset: { href: link("entry", { id: node.id }) } }, entry(node), " ",
      h("span", { class: "muted" }, `${node.degree} link${node.degree === 1 ? "" : "s"}`,
        node.workspace === "company" ? ` · ${workspaceName(node.workspace)}` : "",
        node.id === answer.seed ? " · centre" : ""), " ",
      node.id === answer.seed ? null : h("a", { href: link("graph", { seed: node.id }),
        "aria-label": `Centre the graph on ${shorten(node.label, 60)}` }, "centre here"))))),
    h("section", { "aria-labelledby": "graph-links-title" }, h("h2", { id: "graph-links-title" }, "Links"),
      shown.length ? h("ul", { class: "graph-list" }, shown.map((e) => h("li", null, entry(byId.get(e.source_id), 36),
        " ", h("strong", null, typeName(e.type)), " ", entry(byId.get(e.target_id), 36),
        e.provenance === "system" ? h("span", { class: "muted" }, " (found by the system)") : null)))
        : h("p", { class: "muted" }, "No links between these memories.")));
}

function controls(params, projects) {
  const field = (id, label, control) => h("label", { for: id }, label, control);
  const teams = session.me?.teams || [];
  const form = h("form", { class: "filters", "aria-label": "What to draw", onsubmit: (event) => {
    event.preventDefault();
    navigate("graph", Object.fromEntries([...new FormData(form)].map(([k, v]) => [k, v.trim()]).filter(([, v]) => v)));
  } },
  field("graph-seed", "Centre on (memory id)", h("input", { id: "graph-seed", name: "seed", value: params.seed || "",
    autocomplete: "off", spellcheck: "false" })),
  field("graph-project", "Project", h("input", { id: "graph-project", name: "project", value: params.project || "",
    list: "graph-projects", autocomplete: "off" })),
  projects,
  field("graph-workspace", "Workspace", h("select", { id: "graph-workspace", name: "workspace" },
    ["", "personal", "company"].map((w) => h("option", { value: w, selected: w === (params.workspace || "") },
      w || "any")))),
  teams.length > 1 ? field("graph-team", "Team", h("select", { id: "graph-team", name: "team" },
    h("option", { value: "" }, "primary"), teams.map((t) => h("option", { value: t.id, selected: t.id === params.team },
      t.name)))) : null,
  field("graph-limit", "Most nodes", h("input", { id: "graph-limit", name: "limit", type: "number", min: "1",
    max: "500", value: params.limit || "", placeholder: "100" })),
  h("button", { type: "submit" }, "Draw"), h("a", { href: link("graph") }, "Reset"));
  return form;
}

export default {
  title: "Graph",
  async render(main, params) {
    const datalist = h("datalist", { id: "graph-projects" });
    const status = h("div", { "aria-live": "polite" }, h("p", { class: "muted" }, "Loading…"));
    const stage = h("div", { class: "graph-stage" });
    const below = h("div");
    main.append(heading("Graph"), controls(params, datalist), status, stage, below);
    const query = { seed: params.seed, limit: params.limit, workspace: params.workspace, team: params.team,
      project: params.project };
    const [answer, projects] = await Promise.allSettled([api.get("/graph", query),
      api.get("/projects", { include_archived: 1 })]);
    if (projects.status === "fulfilled") {
      datalist.append(...projects.value.projects.map((p) => h("option", { value: p.id }, p.name)));
    }
    if (answer.status === "rejected") {
      const error = answer.reason;
      const known = error.body?.known_projects;
      clear(status, failure(error), known?.length ? h("p", null, "Known projects: ", known.map((slug, i) =>
        [i ? ", " : "", h("a", { href: link("graph", { ...params, project: slug }) }, slug)])) : null);
      return;
    }
    const graph = answer.value;
    const problems = projects.status === "rejected" ? failure(projects.reason) : null;
    if (!graph.nodes.length) {
      clear(status, problems, h("p", { class: "muted" }, params.project || params.workspace
        ? "No memories match these choices. "
        : "Nothing to draw yet: capture a few memories and link them, and they appear here. ",
      h("a", { href: link("capture") }, "Capture a memory")));
      return;
    }
    const seed = graph.seed ? graph.nodes.find((node) => node.id === graph.seed) : null;
    const edgeCount = graph.edges.length;
    const details = h("p", { class: "graph-details muted", "aria-live": "polite" },
      "Hover over or Tab to a memory to see its links; click it or press Enter to open it.");
    const describe = (node, links) => {
      if (!node) {
        clear(details, "Hover over or Tab to a memory to see its links; click it or press Enter to open it.");
        return;
      }
      clear(details, h("strong", null, shorten(node.label, 80)), links.length ? ": " : ": no links shown.",
        links.map(([e, other, way], i) => [i ? "; " : "", way === "to" ? `${typeName(e.type)} → ` : `← ${
          typeName(e.type)} from `, shorten(other.label, 40)]));
    };
    clear(status, problems, h("p", { class: "muted" }, `${graph.nodes.length} memor${graph.nodes.length === 1 ? "y"
      : "ies"}, ${edgeCount} link${edgeCount === 1 ? "" : "s"}`, seed ? [", centred on ",
      h("a", { href: link("entry", { id: seed.id }) }, shorten(seed.label, 60))] : null,
    params.project ? `, project ${params.project}` : null, "."));
    const width = Math.max(320, Math.min(1100, Math.floor(stage.clientWidth || main.clientWidth || 800)));
    const tall = Math.round(width < 600 ? width * 1.15 : Math.max(420, width * 0.6));
    const height = graph.nodes.length <= 12 ? Math.min(tall, 360) : tall;
    stage.append(picture(graph, width, height, describe), details);
    below.append(lists(graph));
  },
};
