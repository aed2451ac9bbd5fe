// A memory's text as a note: its title line and its Markdown (headings, paragraphs, lists, quotes, code, emphasis,
// links). Safe by construction: every node is made with `h` and every piece of the text goes in as text, so raw HTML
// is shown as the characters it is and nothing runs; links go only to http(s), mailto and the dashboard's own
// routes, open without an opener, and an image is a link to it, never fetched (a remote image would tell its host
// who read the note, and when).
import { h } from "./app.js";

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d{1,9}[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;
const FENCE = /^\s*(```|~~~)/;
const TITLE_MAX = 100; // a longer first line is a paragraph, not a title

/** The title line and the rest: a first line that is a heading, or a short first line with more below it. A note
 * of one line has no title: it is all body. */
export function noteParts(content) {
  const lines = content.replace(/\r\n?/g, "\n").split("\n");
  const first = lines[0].trim();
  const heading = HEADING.exec(first);
  if (heading || (lines.length > 1 && first && first.length <= TITLE_MAX && !startsBlock(first))) {
    const rest = lines.slice(1);
    while (rest.length && !rest[0].trim()) rest.shift();
    return { title: heading ? heading[2] : first, body: rest.join("\n") };
  }
  return { title: null, body: lines.join("\n") };
}

/** The body's blocks as elements. */
export function markdown(text) {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i += 1;
    } else if (FENCE.test(line)) {
      const fence = FENCE.exec(line)[1];
      const code = [];
      for (i += 1; i < lines.length && !lines[i].trim().startsWith(fence); i += 1) code.push(lines[i]);
      i += 1; // the closing fence (or the end of the note)
      blocks.push(h("pre", null, h("code", null, code.join("\n"))));
    } else if (HEADING.test(line)) {
      const [, marks, words] = HEADING.exec(line);
      blocks.push(h(`h${Math.min(6, marks.length + 2)}`, null, inline(words))); // under the view's h1, the title's h2
      i += 1;
    } else if (BULLET.test(line) || NUMBERED.test(line)) {
      const pattern = BULLET.test(line) ? BULLET : NUMBERED;
      const items = [];
      for (; i < lines.length && pattern.test(lines[i]); i += 1) items.push(h("li", null, inline(pattern.exec(lines[i])[1])));
      blocks.push(h(pattern === BULLET ? "ul" : "ol", null, items));
    } else if (QUOTE.test(line)) {
      const quoted = [];
      for (; i < lines.length && QUOTE.test(lines[i]); i += 1) quoted.push(QUOTE.exec(lines[i])[1]);
      blocks.push(h("blockquote", null, h("p", null, inline(quoted.join("\n")))));
    } else {
      const paragraph = [];
      for (; i < lines.length && lines[i].trim() && !startsBlock(lines[i]); i += 1) paragraph.push(lines[i]);
      blocks.push(h("p", null, inline(paragraph.join("\n")))); // its line breaks kept (white-space: pre-wrap)
    }
  }
  return blocks;
}

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || BULLET.test(line) || NUMBERED.test(line) || QUOTE.test(line);
}

// Code, an image, a link, strong, emphasis, a bare web address: the first that matches at each place wins.
const INLINE = new RegExp([
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/.source, // 1, 2: code
  /!\[([^\]]*)\]\(\s*([^)\s]+)\s*\)/.source, // 3, 4: image
  /\[([^\]]+)\]\(\s*([^)\s]+)\s*\)/.source, // 5, 6: link
  /\*\*(?=\S)([\s\S]+?)\*\*|__(?=\S)([\s\S]+?)__/.source, // 7, 8: strong
  /\*(?=[^\s*])([\s\S]+?)\*|(?<![\w])_(?=[^\s_])([\s\S]+?)_(?![\w])/.source, // 9, 10: emphasis
  /(https?:\/\/[^\s<>()[\]]+[^\s<>()[\].,;:!?'"])/.source, // 11: a bare address
].join("|"), "g");

/** A URL a note may link to, or null: the web, mail, and the dashboard's own routes. */
export function safeHref(url) {
  if (url.startsWith("#/")) return url;
  try {
    const parsed = new URL(url);
    return ["http:", "https:", "mailto:"].includes(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

function anchor(url, children) {
  const href = safeHref(url);
  if (!href) return children; // a javascript: or data: link reads as its words
  return href.startsWith("#/") ? h("a", { href }, children)
    : h("a", { href, rel: "noopener noreferrer", target: "_blank" }, children);
}

/** A line's inline Markdown as nodes (strings are text nodes: nothing in them is markup to the browser). */
export function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[2] !== undefined) out.push(h("code", null, m[2]));
    else if (m[4] !== undefined) out.push(anchor(m[4], `${m[3] || "image"} (image)`));
    else if (m[6] !== undefined) out.push(anchor(m[6], inline(m[5])));
    else if (m[7] !== undefined || m[8] !== undefined) out.push(h("strong", null, inline(m[7] ?? m[8])));
    else if (m[9] !== undefined || m[10] !== undefined) out.push(h("em", null, inline(m[9] ?? m[10])));
    else out.push(anchor(m[11], m[11]));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
