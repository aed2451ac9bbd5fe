// Chat: a question answered by the language model from your own memories. The question is recalled first
// (GET /recall), the memories found are shown and sent along as the grounding text, and the answer streams in
// from POST /chat (server-sent events read with fetch's reader). Without a model the API says so (503): that
// sentence is shown plainly and the memories found stay useful on their own.
import { api, clear, failure, h, heading, link, localDate, memoryCard, navigate } from "../app.js";

const TOP_K = 8;

/** The memories as the grounding text POST /chat takes: one numbered line each, with its date and tags, and
 * what recall knows of its history: replaced by a newer memory, or maybe updated by another of these. */
function grounding(results) {
  const number = new Map(results.map((item, index) => [item.id, index + 1]));
  return results.map((item, index) => {
    const date = item.created_at ? localDate(new Date(item.created_at)) : "";
    const tags = (item.tags || []).filter((tag) => !/^(kind|status|volatility):/.test(tag));
    const others = (item.conflicts_with || []).map((id) => number.has(id) ? `[${number.get(id)}]` : "another note");
    const history = item.superseded_by ? " (replaced by a newer note: outdated)"
      : others.length ? ` (may disagree with ${others.join(", ")}: the newer one is more likely current)` : "";
    return `[${index + 1}] (${date}${tags.length ? "; #" + tags.join(" #") : ""})${history} ${item.content}`;
  }).join("\n");
}

/** Reads a server-sent event stream: calls onData with each event's data and name, until [DONE] or the end. */
async function readEvents(response, onData) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const flush = (block) => {
    let name = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (!data.length) return false;
    const text = data.join("\n");
    if (text === "[DONE]") return true;
    onData(text, name);
    return false;
  };
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    buffer = buffer.replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (flush(block)) {
        reader.cancel().catch(() => {});
        return;
      }
    }
    if (done) {
      if (buffer.trim()) flush(buffer);
      return;
    }
  }
}

export default {
  title: "Chat",
  async render(main, params) {
    const question = params.q || "";
    const input = h("textarea", { id: "chat-query", name: "query", rows: 3, required: true,
      placeholder: "Ask something your memories can answer" }, question);
    const form = h("form", { class: "stack chat-form", onsubmit: (event) => {
      event.preventDefault();
      const q = input.value.trim();
      if (!q) return;
      if (q === question) window.dispatchEvent(new HashChangeEvent("hashchange")); // ask again
      else navigate("chat", { q });
    } },
    h("label", { for: "chat-query" }, "Question"), input,
    h("div", { class: "row" }, h("button", { type: "submit" }, "Ask")));
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    // Without a language model Chat can only show what recall finds: said before anyone asks, not after.
    const modelless = h("p", { class: "warn", id: "chat-no-model", hidden: true }, "No language model is set up on "
      + "this brain, so Chat shows the memories recall finds for a question but writes no answer. An admin sets one "
      + "up (README, Configuration).");
    api.get("/stats").then((stats) => { modelless.hidden = Boolean(stats.models?.language_model); }, () => {});
    main.append(heading("Chat"), modelless, form);
    if (!question) {
      main.append(h("p", { class: "muted" }, "The answer is written from the memories recall finds for your "
        + "question, and names what it used. Enter asks; Shift+Enter starts a new line."));
      input.focus();
      return undefined;
    }

    const controller = new AbortController();
    const answer = h("div", { class: "chat-answer card", id: "chat-answer", "aria-live": "polite",
      "aria-busy": "true" }, h("span", { class: "muted" }, "Looking through your memories…"));
    const used = h("div", { class: "list", id: "chat-memories" });
    main.append(
      h("section", { "aria-labelledby": "answer-title" }, h("h2", { id: "answer-title" }, "Answer"), answer),
      h("section", { "aria-labelledby": "used-title" }, h("h2", { id: "used-title" }, "Memories used"), used));

    const run = async () => {
      let results = [];
      try {
        const recalled = await api.get("/recall", { query: question, topK: TOP_K }, { signal: controller.signal });
        results = recalled.results || [];
      } catch (error) {
        if (error.name === "AbortError") return;
        clear(used, failure(error));
      }
      if (results.length) {
        clear(used, results.map((item, index) => memoryCard(item, { extra: h("span", { class: "badge",
          title: "How the answer may cite it" }, `[${index + 1}]`) })),
          h("p", null, h("a", { href: link("recall", { q: question }) }, "See these in Recall, with scores")));
      } else if (!used.firstChild) {
        clear(used, h("p", { class: "muted" }, "Recall found nothing for this question, so the answer has "
          + "nothing to go on."));
      }
      clear(answer, h("span", { class: "muted" }, "Writing…"));
      let response;
      try {
        response = await api.raw("POST", "/chat", { body: { query: question, memories: grounding(results) },
          signal: controller.signal, timeout: 0 }); // streamed as written: "Writing…" says it is under way
      } catch (error) {
        if (error.name === "AbortError") return;
        answer.setAttribute("aria-busy", "false");
        answer.dataset.done = "true";
        const noModel = error.status === 503;
        clear(answer, noModel ? h("div", { class: "warn chat-unavailable", role: "alert" },
          h("p", null, "Chat needs a language model, and none is connected to this brain. Whoever runs it can "
            + "connect one (a local server such as Ollama, or Bedrock on AWS); until then, recall still finds your "
            + "memories."), h("details", null, h("summary", null, "Details for whoever runs it"), h("p", null,
            error.message)))
          : h("p", { class: "error", role: "alert" }, error.message),
        results.length ? h("p", { class: "muted" }, "The memories recall found are below.") : null);
        return;
      }
      const text = h("p", { class: "chat-text" });
      let written = "";
      let failed = null;
      clear(answer, text);
      try {
        await readEvents(response, (data, name) => {
          let piece;
          try {
            piece = JSON.parse(data);
          } catch {
            piece = { response: data };
          }
          if (name === "error" || (piece && piece.ok === false)) {
            failed = piece.error || "The language model failed while answering.";
          } else if (piece && typeof piece.response === "string") {
            written += piece.response;
            text.textContent = written;
          }
        });
      } catch (error) {
        if (error.name === "AbortError") return;
        failed = "The answer was cut off: " + (error.message || "the connection closed") + ".";
      }
      answer.setAttribute("aria-busy", "false");
      answer.dataset.done = "true";
      if (!written.trim()) text.replaceWith(h("p", { class: "muted" }, "The model wrote no answer."));
      else text.textContent = written.trim();
      if (failed) answer.append(h("p", { class: "error", role: "alert" }, failed));
    };
    run().catch((error) => answer.append(failure(error)));
    return () => controller.abort();
  },
};
