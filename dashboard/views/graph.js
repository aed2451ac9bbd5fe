// Graph: GET /graph drawn as SVG with a small force-directed layout computed here (repulsion, springs along the
// links, a pull to the centre), from deterministic start positions so the same brain draws the same picture.
// It can be explored: the wheel, a drag, a pinch or the zoom buttons move the view; labels are placed on screen
// after each move so none overlaps another (the hovered memory and its neighbours first, then the best connected)
// and never take the pointer; nodes are coloured by project, kind or workspace with a legend; hovering or Tab on a
// memory or a link says how it is linked. "Centre on" takes words. Each node is a link to its memory. On a phone
// the view opens as lists (the same graph, also under the picture on wider screens); drawGraph is also the small
// local graph on each memory's page (views/entry.js).
import { api, append, clear, failure, h, heading, link, navigate, plural, session, strength, TAG_WORDS, word,
  workspaceName } from "../app.js";

const SVG = "http://www.w3.org/2000/svg";
const LABEL_CHARS = 28;
const LABEL_FONT_PX = 12;
const ZOOM = { min: 0.5, max: 4, step: 1.5 }; // past 4x a picture of a few memories is an empty box
const DRAG_PX = 4; // a pointer that moves less than this is a click, not a drag
const NARROW_PX = 600;
const COLOUR_KEY = "secondBrain.graphColour";
// Okabe-Ito's colours (told apart with the common colour blindnesses), readable on the light and the dark panel.
const COLOURS = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#a89800"];
const OTHER = "#8a8f99";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An SVG element: h() makes HTML elements, which an <svg> does not draw. */
function s(tag, attrs, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") element.addEventListener(key.slice(2), value);
    else if (key === "style") element.style.cssText = value; // CSSOM: the content security policy forbids style=""
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function shorten(text, size = LABEL_CHARS) {
  const flat = (text || "").replace(/\s+/g, " ").trim();
  return flat.length > size ? flat.slice(0, size - 1).trimEnd() + "…" : flat || "(empty)";
}

/** Each node's short label, none the same as another's: where shortening makes two alike ("The Atlas weekly…"),
 * each keeps its start and adds the words where it differs from the others ("The Atlas… budget review"); labels
 * of the same words are numbered. */
export function distinctLabels(nodes, size) {
  const texts = new Map(nodes.map((node) => [node.id, shorten(node.label, size)]));
  const alike = new Map();
  for (const node of nodes) alike.set(texts.get(node.id), [...(alike.get(texts.get(node.id)) || []), node]);
  for (const group of alike.values()) {
    if (group.length < 2) continue;
    const flat = group.map((node) => (node.label || "").replace(/\s+/g, " ").trim());
    let common = 0; // the characters every label of the group shares at its start
    while (flat.every((text) => common < text.length && text[common] === flat[0][common])) common += 1;
    const keep = Math.max(4, Math.floor(size / 2) - 1);
    group.forEach((node, i) => {
      const tail = flat[i].slice(common).replace(/^\S*\s*/, (word) => (common ? "" : word)).trim();
      texts.set(node.id, tail ? `${flat[i].slice(0, keep).trimEnd()}… ${shorten(tail, size - keep - 2)}`
        : `${shorten(flat[i], size - 4)} (${i + 1})`);
    });
  }
  return texts;
}

const typeName = (type) => (type || "link").replaceAll("_", " ");
const tagAfter = (node, prefix) => (node.tags || []).find((tag) => tag.startsWith(prefix))?.slice(prefix.length);

/** What the nodes can be coloured by: each node's group, and what a node without one is called. */
export const GROUPINGS = {
  project: { label: "Project", of: (node) => tagAfter(node, "project:") ?? null, none: "no project" },
  kind: { label: "Kind", of: (node) => {
    const kind = tagAfter(node, "kind:");
    return kind ? TAG_WORDS[`kind:${kind}`] ?? kind : null;
  }, none: "not classified yet" },
  workspace: { label: "Workspace", of: (node) => workspaceName(node.workspace), none: "" },
};

/** A colour per group, the biggest groups first; past the palette's size the rest share grey with the nodes that
 * have no group. Returns the colour of a node and the legend's entries. */
export function colouring(nodes, by) {
  const grouping = GROUPINGS[by] ?? GROUPINGS.project;
  const counts = new Map();
  for (const node of nodes) {
    const group = grouping.of(node);
    counts.set(group, (counts.get(group) ?? 0) + 1);
  }
  const named = [...counts].filter(([group]) => group !== null)
    .sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])));
  const coloured = named.slice(0, COLOURS.length);
  const colour = new Map(coloured.map(([group], i) => [group, COLOURS[i]]));
  const legend = coloured.map(([group, count]) => ({ name: group, count, colour: colour.get(group) }));
  const rest = nodes.length - legend.reduce((sum, entry) => sum + entry.count, 0);
  if (rest) {
    const others = named.length > COLOURS.length;
    const name = others ? (counts.has(null) ? `other, or ${grouping.none}` : "other") : grouping.none;
    legend.push({ name, count: rest, colour: OTHER });
  }
  return { of: (node) => colour.get(grouping.of(node)) ?? OTHER, legend };
}

let measure = null;
/** A label's width in pixels, measured with the page's font (bold for the focused memory's). */
function textWidth(text, bold = false) {
  measure ??= document.createElement("canvas").getContext("2d");
  measure.font = `${bold ? "700 " : ""}${LABEL_FONT_PX}px ${getComputedStyle(document.body).fontFamily}`;
  return measure.measureText(text).width;
}

/** Labels that never collide: in priority order, each label goes right of its circle, else left of it, where it
 * overlaps no circle but its own and no label already placed and stays inside the width x height box; a label with
 * no such place is not shown (zooming in makes room). `items` are {x, y, r, width, first} on screen, `first` (the
 * hovered memory, offered first) placed whatever it covers; returns, per item shown, its index and the x its text
 * starts at. */
export function placeLabels(items, width, height) {
  const overlap = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
  const circles = items.map((item) => [item.x - item.r, item.y - item.r, item.x + item.r, item.y + item.r]);
  const taken = [];
  const placed = [];
  items.forEach((item, i) => {
    if (item.first) { // the hovered or focused memory's label: always shown, over circles if need be, in the box
      const x0 = Math.max(0, Math.min(width - item.width, item.x + item.r + 3 <= width - item.width
        ? item.x + item.r + 3 : item.x - item.r - 3 - item.width));
      taken.push([x0 - 1, item.y - LABEL_FONT_PX * 0.7, x0 + item.width + 1, item.y + LABEL_FONT_PX * 0.45]);
      placed.push({ index: i, x: x0 });
      return;
    }
    for (const side of [1, -1]) {
      const x0 = side > 0 ? item.x + item.r + 3 : item.x - item.r - 3 - item.width;
      const box = [x0 - 2, item.y - LABEL_FONT_PX * 0.75, x0 + item.width + 2, item.y + LABEL_FONT_PX * 0.5];
      if (box[0] < 0 || box[2] > width || box[1] < 0 || box[3] > height) continue;
      if (taken.some((other) => overlap(box, other))) continue;
      if (circles.some((circle, j) => j !== i && overlap(box, circle))) continue;
      taken.push(box);
      placed.push({ index: i, x: x0 });
      return;
    }
  });
  return placed;
}

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

/** The graph as an explorable picture: {svg, tools (the zoom buttons), legend}. `describe(node, links)` and
 * `describe(null, [], edge)` are told what is hovered or focused; `compact` is the small local graph. */
export function drawGraph(answer, { width, height, describe = () => {}, colourBy = "project", compact = false }) {
  const { nodes, edges } = answer;
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const shown = edges.filter((e) => byId.has(e.source_id) && byId.has(e.target_id));
  const narrow = compact || width < NARROW_PX;
  const place = fit(layout(nodes, shown, width, height), width, height, narrow ? { x: 24, y: 24 } : { x: 60, y: 30 });
  const index = new Map(nodes.map((node, i) => [node.id, i]));
  const neighbours = new Map(nodes.map((node) => [node.id, []]));
  for (const e of shown) {
    neighbours.get(e.source_id).push([e, e.target_id, "to"]);
    neighbours.get(e.target_id).push([e, e.source_id, "from"]);
  }
  const colours = colouring(nodes, colourBy);
  // The order labels are offered a place (after the hovered memory and its neighbours) and Tab follows: the seed,
  // then the best connected, then the most important.
  const order = [...nodes].sort((a, b) => (b.id === answer.seed) - (a.id === answer.seed) || b.degree - a.degree
    || b.importance_score - a.importance_score);
  const texts = distinctLabels(nodes, narrow ? 18 : LABEL_CHARS);
  const widths = new Map();
  const view = { k: 1, x: 0, y: 0 }; // screen = k * layout + (x, y), in the viewBox's units
  let focused = null;

  const svg = s("svg", { class: `graph graph-canvas${compact ? " compact" : ""}`, viewBox: `0 0 ${width} ${height}`,
    role: "group", "aria-label": `Graph of ${nodes.length} memories and ${shown.length} links. Plus and minus zoom,`
      + " the arrow keys move the view, 0 fits it." });
  const viewport = s("g", { class: "viewport" });
  const labels = s("g", { class: "labels", "aria-hidden": "true" });

  const highlight = (id) => {
    focused = id;
    svg.classList.toggle("focusing", Boolean(id));
    for (const g of viewport.querySelectorAll(".edge")) {
      g.classList.toggle("near", Boolean(id) && (g.dataset.source === id || g.dataset.target === id));
    }
    const near = new Set(id ? neighbours.get(id).map(([, other]) => other) : []);
    for (const a of viewport.querySelectorAll(".node")) {
      a.classList.toggle("near", near.has(a.dataset.id) || a.dataset.id === id);
    }
    describe(id ? byId.get(id) : null, id ? neighbours.get(id).map(([e, other, way]) => [e, byId.get(other), way])
      : []);
    relabel();
  };
  const lines = shown.map((e) => {
    const [a, b] = [index.get(e.source_id), index.get(e.target_id)];
    const [x1, y1, x2, y2] = [place.x[a], place.y[a], place.x[b], place.y[b]];
    const from = shorten(byId.get(e.source_id).label, 40);
    const to = shorten(byId.get(e.target_id).label, 40);
    return s("g", { class: `edge${e.provenance === "explicit" ? "" : " found"}`, "data-source": e.source_id,
      "data-target": e.target_id, "data-type": e.type,
      onmouseenter: () => { svg.classList.add("focusing"); describe(null, [], e, byId); },
      onmouseleave: () => highlight(focused) },
    s("title", null, `${from} ${typeName(e.type)} ${to} (${word("provenance", e.provenance || "explicit")}, `
      + `strength ${strength(e.weight)})`),
    s("line", { x1, y1, x2, y2, class: "hit", "vector-effect": "non-scaling-stroke" }),
    s("line", { x1, y1, x2, y2, class: "stroke", "vector-effect": "non-scaling-stroke" }));
  });
  const circles = order.map((node) => {
    const i = index.get(node.id);
    return s("a", { href: link("entry", { id: node.id }), class: `node ${node.id === answer.seed ? "seed" : ""} ${
      node.workspace === "company" ? "company" : ""}`, tabindex: "0", role: "link", "data-id": node.id,
    "aria-label": `${shorten(node.label, 80)} (${plural(node.degree, "link")})`,
    onfocus: (event) => { // a memory reached by Tab is brought into view; one pressed with the pointer stays put
      if (event.target.matches(":focus-visible")) reveal(i);
      highlight(node.id);
    }, onblur: () => highlight(null),
    onmouseenter: () => highlight(node.id), onmouseleave: () => highlight(null) },
    s("title", null, node.label),
    s("circle", { cx: place.x[i], cy: place.y[i], r: radius(node), style: `fill:${colours.of(node)}`,
      "vector-effect": "non-scaling-stroke" }));
  });
  viewport.append(s("g", { class: "edges" }, lines), s("g", { class: "nodes" }, circles));
  svg.append(viewport, labels);

  /** The labels for the current view: placed on screen so that none collides (see placeLabels). */
  function relabel() {
    const first = focused ? [focused, ...neighbours.get(focused).map(([, other]) => other)] : [];
    const ids = [...new Set([...first, ...order.map((node) => node.id)])];
    const items = [];
    const shownIds = [];
    for (const id of ids) {
      const i = index.get(id);
      const x = view.k * place.x[i] + view.x;
      const y = view.k * place.y[i] + view.y;
      if (x < 0 || x > width || y < 0 || y > height) continue;
      const text = id === focused ? shorten(byId.get(id).label, narrow ? 36 : 60) : texts.get(id);
      const key = id === focused ? `b:${text}` : text;
      if (!widths.has(key)) widths.set(key, textWidth(text, id === focused));
      items.push({ x, y, r: radius(byId.get(id)), width: widths.get(key), text, first: id === focused });
      shownIds.push(id);
    }
    const placed = placeLabels(items, width, height);
    labels.replaceChildren(...placed.map(({ index: i, x }) => s("text", { x, y: items[i].y + 4,
      class: `label${shownIds[i] === focused ? " focused" : ""}`, "data-id": shownIds[i] }, items[i].text)));
  }
  let pending = false;
  const schedule = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; relabel(); });
  };
  let drawnK = 1;
  const extent = { minX: Math.min(...place.x), maxX: Math.max(...place.x), minY: Math.min(...place.y),
    maxY: Math.max(...place.y) };
  /** The view's centre stays over the drawing: a wheel turned over empty space or a long drag never leaves an
   * empty box with no way back but Fit. */
  function bound() {
    const clamp = (v, low, high) => Math.min(high, Math.max(low, v));
    view.x = clamp(view.x, width / 2 - view.k * extent.maxX, width / 2 - view.k * extent.minX);
    view.y = clamp(view.y, height / 2 - view.k * extent.maxY, height / 2 - view.k * extent.minY);
  }
  function apply() {
    bound();
    viewport.setAttribute("transform", `translate(${view.x} ${view.y}) scale(${view.k})`);
    if (view.k !== drawnK) { // circles keep their size on screen as the view zooms
      drawnK = view.k;
      for (const a of circles) a.querySelector("circle").setAttribute("r", radius(byId.get(a.dataset.id)) / view.k);
    }
    schedule();
  }
  function zoomAt(px, py, factor) {
    const k = Math.min(ZOOM.max, Math.max(ZOOM.min, view.k * factor));
    view.x = px - (px - view.x) * (k / view.k);
    view.y = py - (py - view.y) * (k / view.k);
    view.k = k;
    apply();
  }
  function reset() {
    Object.assign(view, { k: 1, x: 0, y: 0 });
    apply();
  }
  /** A node reached by Tab is brought into view. */
  function reveal(i) {
    const x = view.k * place.x[i] + view.x;
    const y = view.k * place.y[i] + view.y;
    if (x < 20 || x > width - 20 || y < 20 || y > height - 20) {
      view.x += width / 2 - x;
      view.y += height / 2 - y;
      apply();
    }
  }
  const point = (event) => {
    const box = svg.getBoundingClientRect();
    return [(event.clientX - box.left) * (width / box.width), (event.clientY - box.top) * (height / box.height)];
  };

  svg.addEventListener("wheel", (event) => {
    // The wheel zooms the picture instead of scrolling the page; the small graph on a memory's page zooms only
    // with Ctrl (as a trackpad's pinch sends it), so the page still scrolls past it.
    if (compact && !event.ctrlKey) return;
    event.preventDefault();
    const [x, y] = point(event);
    zoomAt(x, y, Math.exp(-event.deltaY * (event.deltaMode ? 0.05 : 0.002)));
  }, { passive: false });
  // A drag pans, two fingers pinch; a press that hardly moved stays a click on the memory under it.
  const pointers = new Map();
  let dragging = false;
  let swallowClick = false;
  let start = null;
  svg.addEventListener("pointerdown", (event) => {
    if (event.pointerType === "mouse" && event.button !== 0) return; // the main button pans; others are the menu's
    pointers.set(event.pointerId, point(event));
    if (pointers.size === 1) { start = point(event); dragging = false; swallowClick = false; }
  });
  svg.addEventListener("pointermove", (event) => {
    const before = pointers.get(event.pointerId);
    if (!before) return;
    if (event.pointerType === "mouse" && !(event.buttons & 1)) { // its release was lost (a menu opened): let go
      lift(event);
      return;
    }
    const now = point(event);
    if (pointers.size === 1) {
      if (!dragging && Math.hypot(now[0] - start[0], now[1] - start[1]) < DRAG_PX) return;
      if (!dragging) { dragging = true; svg.setPointerCapture(event.pointerId); svg.classList.add("panning"); }
      view.x += now[0] - before[0];
      view.y += now[1] - before[1];
      pointers.set(event.pointerId, now);
      apply();
      return;
    }
    const [other] = [...pointers].filter(([id]) => id !== event.pointerId).map(([, p]) => p);
    const spread = Math.hypot(before[0] - other[0], before[1] - other[1]) || 1;
    dragging = true;
    pointers.set(event.pointerId, now);
    view.x += (now[0] - before[0]) / 2;
    view.y += (now[1] - before[1]) / 2;
    zoomAt((now[0] + other[0]) / 2, (now[1] + other[1]) / 2,
      Math.hypot(now[0] - other[0], now[1] - other[1]) / spread);
  });
  const lift = (event) => {
    pointers.delete(event.pointerId);
    if (!pointers.size && dragging) { swallowClick = true; dragging = false; svg.classList.remove("panning"); }
  };
  svg.addEventListener("pointerup", lift);
  svg.addEventListener("pointercancel", lift);
  svg.addEventListener("click", (event) => {
    if (!swallowClick) return;
    swallowClick = false;
    event.preventDefault();
    event.stopPropagation();
  }, true);
  svg.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return; // the browser's own (zoom, back) stay the browser's
    const moves = { ArrowLeft: [40, 0], ArrowRight: [-40, 0], ArrowUp: [0, 40], ArrowDown: [0, -40] };
    if (event.key === "+" || event.key === "=") zoomAt(width / 2, height / 2, ZOOM.step);
    else if (event.key === "-") zoomAt(width / 2, height / 2, 1 / ZOOM.step);
    else if (event.key === "0") reset();
    else if (moves[event.key]) { view.x += moves[event.key][0]; view.y += moves[event.key][1]; apply(); }
    else return;
    event.preventDefault();
  });

  const button = (label, text, action) => h("button", { type: "button", class: "secondary", "aria-label": label,
    title: label, onclick: action }, text);
  const tools = h("div", { class: "graph-tools", role: "group", "aria-label": "Zoom" },
    button("Zoom in", "+", () => zoomAt(width / 2, height / 2, ZOOM.step)),
    button("Zoom out", "−", () => zoomAt(width / 2, height / 2, 1 / ZOOM.step)),
    button("Fit the whole graph", "Fit", reset));
  const legend = h("ul", { class: "legend", "aria-label": `Colours by ${GROUPINGS[colourBy]?.label.toLowerCase()
    ?? "project"}` }, colours.legend.map((entry) => h("li", null, h("span", { class: "swatch",
    style: `background:${entry.colour}`, "aria-hidden": "true" }), `${entry.name} (${entry.count})`)),
  h("li", { class: "muted" }, h("span", { class: "line-key", "aria-hidden": "true" }), "a link someone made"),
  h("li", { class: "muted" }, h("span", { class: "line-key system", "aria-hidden": "true" }),
    "a link the brain found"));
  relabel();
  return { svg, tools, legend };
}

function lists(answer) {
  const byId = new Map(answer.nodes.map((node) => [node.id, node]));
  const shown = answer.edges.filter((e) => byId.has(e.source_id) && byId.has(e.target_id));
  const entry = (node, size = 60) => h("a", { href: link("entry", { id: node.id }) }, shorten(node.label, size));
  return h("div", { class: "graph-lists" },
    h("section", { "aria-labelledby": "graph-nodes-title" }, h("h2", { id: "graph-nodes-title" }, "Nodes"),
      h("ul", { class: "graph-list nodes-list" }, answer.nodes.map((node) => h("li", { class: "item", tabindex: "-1",
        dataset: { href: link("entry", { id: node.id }) } }, entry(node), " ",
      h("span", { class: "muted" }, plural(node.degree, "link"),
        node.workspace === "company" ? ` · ${workspaceName(node.workspace)}` : "",
        node.id === answer.seed ? " · centre" : ""), " ",
      node.id === answer.seed ? null : h("a", { href: link("graph", { seed: node.id }),
        "aria-label": `Centre the graph on ${shorten(node.label, 60)}` }, "centre here"))))),
    h("section", { "aria-labelledby": "graph-links-title" }, h("h2", { id: "graph-links-title" }, "Links"),
      shown.length ? h("ul", { class: "graph-list" }, shown.map((e) => h("li", null, entry(byId.get(e.source_id), 36),
        " ", h("strong", null, typeName(e.type)), " ", entry(byId.get(e.target_id), 36),
        e.provenance === "explicit" ? null : h("span", { class: "muted" }, " (found by the brain)"))))
        : h("p", { class: "muted" }, "No links between these memories.")));
}

/** "Centre on" takes an id, or words: a memory of the drawing whose label holds them, else what recall finds. */
async function centre(text, drawn, status, params) {
  if (!text || UUID.test(text)) return text || undefined;
  const words = text.toLowerCase();
  const own = drawn.find((node) => node.label.toLowerCase().includes(words));
  if (own) return own.id;
  const answer = await api.get("/recall", { query: text, topK: 5 });
  if (answer.results.length === 1) return answer.results[0].id;
  clear(status, answer.results.length
    ? h("div", { role: "status" }, h("p", null, `Centre on which memory? `, answer.did_you_mean
      ? `(showing results for “${answer.did_you_mean}”)` : ""), h("ul", { class: "graph-list" },
      answer.results.map((r) => h("li", null, h("a", { href: link("graph", { ...params, seed: r.id }) },
        shorten(r.content, 90))))))
    : h("p", { role: "status" }, `No memory matches “${text}”.`));
  return null;
}

function controls(params, projects, state) {
  const field = (id, label, control) => h("label", { for: id }, label, control);
  const teams = session.me?.teams || [];
  const form = h("form", { class: "filters", "aria-label": "What to draw", onsubmit: async (event) => {
    event.preventDefault();
    const chosen = Object.fromEntries([...new FormData(form)].map(([k, v]) => [k, v.trim()]).filter(([, v]) => v));
    if (chosen.seed === state.seedLabel) chosen.seed = params.seed; // the drawn centre, shown by its words
    try {
      const seed = await centre(chosen.seed, state.nodes, state.status, chosen);
      if (seed === null) return;
      navigate("graph", { ...chosen, seed });
    } catch (error) {
      clear(state.status, failure(error));
    }
  } },
  field("graph-seed", "Centre on", h("input", { id: "graph-seed", name: "seed", value: params.seed || "",
    autocomplete: "off", spellcheck: "false", placeholder: "words or an id", list: "graph-labels" })),
  state.labels,
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

/** What the line under a picture says about the hovered or focused memory, or link. */
export function describer(details, idle) {
  return (node, links, edge, byId) => {
    if (edge) {
      clear(details, shorten(byId.get(edge.source_id).label, 50), " ", h("strong", null, typeName(edge.type)), " ",
        shorten(byId.get(edge.target_id).label, 50), edge.provenance === "explicit" ? "" : " (found by the brain)");
      return;
    }
    if (!node) {
      clear(details, idle);
      return;
    }
    clear(details, h("strong", null, shorten(node.label, 80)), links.length ? ": " : ": no links shown.",
      links.map(([e, other, way], i) => [i ? "; " : "", way === "to" ? `${typeName(e.type)} → ` : `← ${
        typeName(e.type)} from `, shorten(other.label, 40)]));
  };
}

const IDLE = "Hover over or Tab to a memory or a link to see how it is linked; click a memory or press Enter to open"
  + " it. The wheel, a drag or a pinch moves the picture.";

export default {
  title: "Graph",
  async render(main, params) {
    const datalist = h("datalist", { id: "graph-projects" });
    const status = h("div", { "aria-live": "polite" }, h("p", { class: "muted" }, "Loading…"));
    const state = { nodes: [], status, seedLabel: null, labels: h("datalist", { id: "graph-labels" }) };
    const stage = h("div", { class: "graph-stage" });
    const below = h("div");
    const form = controls(params, datalist, state);
    // On a phone the form folds away unless something in it is in use, as Memories' filters do.
    const choosing = ["seed", "project", "workspace", "team", "limit"].some((name) => params[name]);
    const folded = h("details", { class: "filters-box", open: choosing || matchMedia("(min-width: 721px)").matches },
      h("summary", null, choosing ? "What to draw (in use)" : "What to draw"), form);
    main.append(heading("Graph"), folded, status, stage, below);
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
    const whole = answer.value;
    // Memories with no link say nothing in a picture of links: left out (and counted) unless asked for, or unless
    // nothing is linked. The centre is always drawn.
    const loose = whole.nodes.filter((node) => !node.degree && node.id !== whole.seed);
    const leaveOut = params.unlinked !== "1" && loose.length > 0 && loose.length < whole.nodes.length;
    const graph = leaveOut ? { ...whole, nodes: whole.nodes.filter((node) => !loose.includes(node)) } : whole;
    state.nodes = graph.nodes;
    state.labels.append(...graph.nodes.slice(0, 200).map((node) => h("option", { value: node.label })));
    const problems = projects.status === "rejected" ? failure(projects.reason) : null;
    if (!graph.nodes.length) {
      clear(status, problems, h("p", { class: "muted" }, params.project || params.workspace
        ? "No memories match these choices. "
        : "Nothing to draw yet: capture a few memories and link them, and they appear here. ",
      h("a", { href: link("capture") }, "Capture a memory")));
      return;
    }
    const seed = graph.seed ? graph.nodes.find((node) => node.id === graph.seed) : null;
    if (seed) { // the centre by its words; submitting them unchanged keeps it
      state.seedLabel = seed.label;
      form.querySelector("#graph-seed").value = seed.label;
    }
    const edgeCount = graph.edges.length;
    clear(status, problems, h("p", { class: "muted" }, `${plural(graph.nodes.length, "memory", "memories")}, ${
      plural(edgeCount, "link")}`, seed ? [", centred on ",
      h("a", { href: link("entry", { id: seed.id }) }, shorten(seed.label, 60))] : null,
    params.project ? `, project ${params.project}` : null, ".", loose.length && loose.length < whole.nodes.length
      ? [" ", leaveOut ? `${plural(loose.length, "memory", "memories")} with no link ${loose.length === 1 ? "is"
        : "are"} left out: ` : `${loose.length === 1 ? "One has" : `${loose.length} have`} no link: `,
      h("a", { href: link("graph", { ...params, unlinked: leaveOut ? "1" : undefined }) },
        leaveOut ? (loose.length === 1 ? "show it" : "show them") : "leave them out"), "."] : null));

    const width = Math.max(320, Math.min(1100, Math.floor(stage.clientWidth || main.clientWidth || 800)));
    const phone = width < NARROW_PX;
    const tall = Math.round(phone ? width * 1.15 : Math.max(420, width * 0.6));
    const height = graph.nodes.length <= 12 ? Math.min(tall, 360) : tall;
    const details = h("p", { class: "graph-details muted", "aria-live": "polite" }, IDLE);
    const picture = h("div", { class: "graph-picture" });
    const colour = h("select", { id: "graph-colour", onchange: () => {
      localStorage.setItem(COLOUR_KEY, colour.value);
      draw();
    } }, Object.entries(GROUPINGS).map(([key, grouping]) => h("option", { value: key,
      selected: key === (localStorage.getItem(COLOUR_KEY) || "project") }, grouping.label.toLowerCase())));
    const draw = () => {
      const drawn = drawGraph(graph, { width, height, describe: describer(details, IDLE), colourBy: colour.value });
      clear(picture, h("div", { class: "graph-bar" }, h("label", { for: "graph-colour", class: "check" }, "Colour by",
        colour), drawn.tools), drawn.svg, drawn.legend, details);
    };
    const listed = lists(graph);
    // On a phone the lists come first (a picture of many memories is hard to read there); either is one press away.
    const choice = (name, pressed, show) => h("button", { type: "button", class: "secondary",
      "aria-pressed": String(pressed), onclick: (event) => {
        for (const b of event.target.parentElement.children) b.setAttribute("aria-pressed", String(b === event.target));
        show();
      } }, name);
    if (phone) {
      const showPicture = () => { listed.hidden = true; picture.hidden = false; if (!picture.firstChild) draw(); };
      const showList = () => { picture.hidden = true; listed.hidden = false; };
      stage.append(h("div", { class: "actions", role: "group", "aria-label": "Show the graph as" },
        choice("List", true, showList), choice("Picture", false, showPicture)), picture);
      picture.hidden = true;
    } else {
      stage.append(picture);
      draw();
    }
    below.append(listed);
  },
};
