// Backup: export every memory, link and project you can read as one JSON file (GET /export, optionally as the
// brain stood at a past moment), and import such a file (POST /import, page by page: the same payload resent
// with the next offset and edge_offset until nothing remains) with a progress bar and the counts. Where the brain
// offers POST /import/upload (on AWS, whose requests are capped at 6 MB) a large backup is uploaded there first
// and imported from it page by page.
import { api, ApiError, clear, failure, h, heading, localDate, localTime, plural } from "../app.js";

const PAGE = 100; // rows per POST /import: small enough for a Lambda's time limit, large enough to be quick
const INLINE_BYTES = 5 * 1024 * 1024; // past this, use the upload URL where the brain offers one

function size(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function exporter() {
  const asOf = h("input", { id: "export-as-of", name: "as_of", type: "datetime-local" });
  const status = h("div", { id: "export-status", "aria-live": "polite" });
  const button = h("button", { type: "submit" }, "Download backup");
  const form = h("form", { class: "stack", onsubmit: async (event) => {
    event.preventDefault();
    button.disabled = true;
    clear(status, h("p", { class: "muted" }, "Preparing the backup…"));
    try {
      const moment = asOf.value ? localTime(asOf.value) : null;
      const response = await api.raw("GET", "/export", { params: { as_of: moment ? moment.toISOString() : "" }, timeout: 0 });
      const text = await response.text();
      let backup;
      try {
        backup = JSON.parse(text);
      } catch {
        throw new Error("The server's backup is not valid JSON, so it was not saved. Try again.");
      }
      const name = `second-brain-${localDate(moment || new Date())}.json`;
      const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
      const anchor = h("a", { href: url, download: name, class: "visually-hidden" }, name);
      document.body.append(anchor);
      anchor.click();
      anchor.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      const counts = [plural((backup.entries || []).length, "memory", "memories"),
        plural((backup.edges || []).length, "link"), plural((backup.projects || []).length, "project")];
      clear(status, h("p", { class: "ok", role: "status" }, `Saved ${name} (${size(text.length)}): `
        + counts.join(", ") + (moment ? `, as the brain stood on ${moment.toLocaleString()}` : "") + "."));
    } catch (error) {
      clear(status, failure(error));
    } finally {
      button.disabled = false;
    }
  } },
  h("p", { class: "muted" }, "Every memory, link and project you can read, as one JSON file. Vectors are not "
    + "included: an import indexes the memories again."),
  h("label", { for: "export-as-of" }, "As of (optional: the brain as it stood then)"), asOf,
  h("div", { class: "row" }, button));
  return h("section", { class: "card backup-part", "aria-labelledby": "export-title" },
    h("h2", { id: "export-title" }, "Export"), form, status);
}

/** Uploads the file where the brain offers an upload URL; the key to import from, or null to send it inline. */
async function uploaded(file, say) {
  let offer;
  try {
    offer = await api.post("/import/upload");
  } catch (error) {
    if (error.status === 404 || error.status === 405) return null; // this brain takes backups in the request
    throw error;
  }
  if (offer.max_bytes && file.size > offer.max_bytes) {
    throw new Error(`This backup is ${size(file.size)}; this brain imports at most ${size(offer.max_bytes)} at once.`);
  }
  say(`Uploading ${size(file.size)}…`);
  let response;
  try {
    if (offer.method === "POST") { // a presigned form: its fields, then the file last (S3 caps its size)
      const form = new FormData();
      for (const [name, value] of Object.entries(offer.fields || {})) form.append(name, value);
      form.append(offer.file_field || "file", file);
      response = await fetch(offer.url, { method: "POST", body: form });
    } else {
      response = await fetch(offer.url, { method: offer.method || "PUT", body: file,
        headers: { "Content-Type": offer.content_type || "application/json" } });
    }
  } catch {
    throw new Error("The backup could not be uploaded to this brain's storage: the browser refused or lost the "
      + "connection. Import it with the command line instead (brain import).");
  }
  if (!response.ok) throw new Error(`The storage refused the upload (status ${response.status}).`);
  return offer.upload;
}

function importer() {
  const file = h("input", { id: "import-file", name: "file", type: "file", accept: ".json,application/json",
    required: true });
  const progress = h("progress", { id: "import-progress", max: 1, value: 0,
    "aria-labelledby": "import-progress-label" });
  const progressLabel = h("span", { id: "import-progress-label" }, "Import progress");
  const percent = h("span", { class: "muted", id: "import-percent" }, "");
  const meter = h("div", { class: "backup-progress", hidden: true }, h("div", { class: "row backup-progress-head" },
    progressLabel, percent), progress);
  const counts = h("p", { id: "import-counts", "aria-live": "polite" });
  const status = h("div", { id: "import-status" });
  const button = h("button", { type: "submit" }, "Import");
  let stopping = false;
  const stop = h("button", { type: "button", class: "secondary", hidden: true, onclick: () => {
    stopping = true;
    stop.disabled = true;
  } }, "Stop");

  const say = (text, kind = "muted") => clear(status, h("p", { class: kind }, text));
  const run = async () => {
    const chosen = file.files && file.files[0];
    if (!chosen) {
      clear(status, h("p", { class: "error", role: "alert" }, "Choose a backup file first."));
      return;
    }
    say(`Reading ${chosen.name}…`);
    let payload;
    try {
      payload = JSON.parse(await chosen.text());
    } catch (error) {
      throw new Error(`${chosen.name} is not a JSON backup: ${error.message}.`);
    }
    if (!payload || typeof payload !== "object" || Array.isArray(payload)) {
      throw new Error(`${chosen.name} is not a backup: it holds no object with entries.`);
    }
    const entries = Array.isArray(payload.entries) ? payload.entries.length : 0;
    const edges = Array.isArray(payload.edges) ? payload.edges.length : 0;
    const total = Math.max(1, entries + edges);
    const key = chosen.size > INLINE_BYTES ? await uploaded(chosen, say) : null;
    const totals = {};
    const problems = [];
    let offset = 0;
    let edgeOffset = 0;
    meter.hidden = false;
    progress.max = total;
    progress.value = 0;
    percent.textContent = "0%";
    say(`Importing ${plural(entries, "memory", "memories")} and ${plural(edges, "link")}…`);
    const show = () => {
      const memories = `${totals.imported || 0} imported, ${totals.skipped || 0} already here, `
        + `${totals.failed || 0} failed`;
      const links = `${totals.edges_imported || 0} imported, ${totals.edges_skipped || 0} already here, `
        + `${totals.edges_failed || 0} failed`;
      clear(counts, `Memories: ${memories}. Links: ${links}.`,
        totals.projects_imported || totals.projects_skipped ? ` Projects: ${totals.projects_imported || 0} `
          + `imported, ${totals.projects_skipped || 0} already here.` : "");
    };
    for (;;) {
      if (stopping) {
        say("Stopped. Import the same file again to go on: what is already here is skipped.", "warn");
        return;
      }
      const params = { limit: PAGE, offset, edge_offset: edgeOffset, upload: key || undefined };
      const page = await api.post("/import", key ? {} : payload, params, { timeout: 0 });
      for (const [name, value] of Object.entries(page)) {
        if (typeof value === "number" && /(imported|skipped|failed)$/.test(name)) {
          totals[name] = (totals[name] || 0) + value;
        }
      }
      problems.push(...(page.results || []).filter((item) => item && item.error));
      const remaining = (page.remaining_entries || 0) + (page.remaining_edges || 0);
      progress.value = Math.max(0, Math.min(total, total - remaining));
      percent.textContent = `${Math.floor((progress.value / total) * 100)}%`;
      show();
      if (!remaining) break;
      if (page.next_offset === offset && page.next_edge_offset === edgeOffset) {
        throw new ApiError(0, "The import stopped advancing: the server answered the same page twice.");
      }
      offset = page.next_offset;
      edgeOffset = page.next_edge_offset;
    }
    progress.value = total;
    percent.textContent = "100%";
    const added = (totals.imported || 0) + (totals.edges_imported || 0) + (totals.projects_imported || 0) > 0;
    const memoriesAdded = (totals.imported || 0) > 0; // only new memories have anything to index
    clear(status,
      h("p", { class: problems.length ? "warn" : "ok", role: "status" }, problems.length
        ? `Imported, but ${plural(problems.length, "item")} could not be restored:` : added ? "Import complete. The "
          + "memories are in your personal workspace and found by their words at once; they are found by meaning "
          + "once indexed." : "Nothing new: everything in this file is already here."),
      problems.length ? h("ul", { class: "backup-problems" }, problems.slice(0, 50).map((item) => h("li", null,
        item.id ? `Memory ${item.id}: ` : item.project ? `Project ${item.project}: ` : item.source_id
          ? `Link ${item.source_id} → ${item.target_id}: ` : "", item.error))) : null,
      problems.length > 50 ? h("p", { class: "muted" }, `…and ${problems.length - 50} more.`) : null,
      memoriesAdded ? indexer() : null);
  };

  const form = h("form", { class: "stack", novalidate: true, onsubmit: async (event) => {
    event.preventDefault();
    button.disabled = true;
    file.disabled = true;
    stopping = false;
    stop.disabled = false;
    stop.hidden = false;
    clear(counts);
    try {
      await run();
    } catch (error) {
      clear(status, failure(error));
    } finally {
      button.disabled = false;
      file.disabled = false;
      stop.hidden = true;
    }
  } },
  h("p", { class: "muted" }, "Restores a backup from this or another brain into your personal workspace. "
    + "Memories and links already here are skipped, so importing the same file twice is safe."),
  h("label", { for: "import-file" }, "Backup file (JSON)"), file,
  h("div", { class: "row" }, button, stop));
  return h("section", { class: "card backup-part", "aria-labelledby": "import-title" },
    h("h2", { id: "import-title" }, "Import"), form, meter, counts, status);
}

/** A button that indexes imported memories for search by meaning (POST /vectorize-pending until none remain). */
function indexer() {
  const note = h("span", { class: "muted", "aria-live": "polite" });
  const button = h("button", { type: "button", class: "secondary", onclick: async () => {
    button.disabled = true;
    try {
      let indexed = 0;
      let left = 0;
      for (let round = 0; round < 200; round++) {
        const result = await api.post("/vectorize-pending", {}, { limit: 200 }, { timeout: 0 });
        indexed += result.vectorized || 0;
        left = result.remaining || 0;
        note.textContent = ` ${indexed} indexed, ${left} left.`;
        if (!left || !result.vectorized) break;
      }
      note.textContent = left ? ` ${indexed} indexed; ${left} could not be indexed now. Try again later.`
        : indexed ? ` Done: ${plural(indexed, "memory", "memories")} indexed, all found by meaning now.`
        : " Nothing was waiting: every memory is already found by meaning.";
    } catch (error) {
      note.replaceWith(failure(error));
    } finally {
      button.disabled = false;
    }
  } }, "Index them now");
  return h("p", null, button, note);
}

export default {
  title: "Backup",
  async render(main) {
    main.append(heading("Backup"), h("div", { class: "backup" }, exporter(), importer()));
  },
};
