// Projects: the registry (GET /projects with counts, archived ones on request), creating one, editing its name,
// description and aliases, archiving and restoring it, deleting it (after asking), and for each one the way to its
// memories, its recall and its graph. A refusal from the API is shown as its sentence next to the form or project
// it concerns (attempt()), never as a toast.
import { api, ask, clear, failure, h, heading, link, navigate, session, toast, when } from "../app.js";

const SLUG = "[a-z0-9][a-z0-9_\\-]{0,63}";

function words(text) {
  return text.split(",").map((t) => t.trim().replace(/^#/, "")).filter(Boolean);
}

/** The query string that names one project's workspace, so a slug kept in two layers is never ambiguous. */
function scope(project) {
  const params = new URLSearchParams({ workspace: project.layer === "company" ? "company" : "personal" });
  if (project.layer === "company") params.set("team", project.workspace_id);
  return "?" + params;
}

function path(project) {
  return `/projects/${encodeURIComponent(project.id)}${scope(project)}`;
}

/** Runs one project action from its button: the button is disabled while it runs, and a refusal is shown as the
 * API's sentence in `status`, next to the form or project it concerns (never as a toast: one place for errors). */
async function attempt(button, status, action) {
  button.disabled = true;
  clear(status);
  try {
    await action();
  } catch (error) {
    if (error.status !== 401) clear(status, failure(error));
  } finally {
    button.disabled = false;
  }
}

function createForm(refresh) {
  const teams = session.me?.teams || [];
  const name = h("input", { id: "project-name", name: "name", required: true, maxlength: "120", autocomplete: "off" });
  const slug = h("input", { id: "project-id", name: "id", pattern: SLUG, maxlength: "64", autocomplete: "off",
    spellcheck: "false", placeholder: "made from the name", "aria-describedby": "project-id-help" });
  const description = h("textarea", { id: "project-description", name: "description", maxlength: "1000",
    class: "short" });
  const aliases = h("input", { id: "project-aliases", name: "aliases", autocomplete: "off",
    "aria-describedby": "project-aliases-help" });
  const workspace = teams.length ? h("select", { id: "project-workspace", name: "workspace" },
    h("option", { value: "" }, "my default"), h("option", { value: "personal" }, "personal"),
    teams.map((t) => h("option", { value: "company:" + t.id }, `company (${t.name})`))) : null;
  const status = h("div", { "aria-live": "polite" });
  const submit = h("button", { type: "submit" }, "Create project");
  const form = h("form", { class: "stack", onsubmit: (event) => {
    event.preventDefault();
    attempt(submit, status, async () => {
      const body = { name: name.value.trim(), description: description.value.trim(), aliases: words(aliases.value) };
      if (slug.value.trim()) body.id = slug.value.trim();
      if (workspace && workspace.value) {
        const [layer, team] = workspace.value.split(":");
        body.workspace = layer;
        if (team && teams.length > 1) body.team = team;
      }
      const { project } = await api.post("/projects", body);
      form.reset();
      toast(`Created project ${project.name} (${project.id}).`);
      await refresh();
    });
  } },
  h("label", { for: "project-name" }, "Name"), name,
  h("label", { for: "project-id" }, "Short name (slug)"), slug,
  h("p", { id: "project-id-help", class: "muted hint" },
    "Lowercase letters, digits, - and _. Memories carry it as the tag project:<slug>."),
  h("label", { for: "project-description" }, "Description"), description,
  h("label", { for: "project-aliases" }, "Aliases"), aliases,
  h("p", { id: "project-aliases-help", class: "muted hint" },
    "Tags this project also claims, separated by commas (memories tagged with them count as the project's in recall)."),
  workspace ? [h("label", { for: "project-workspace" }, "Workspace"), workspace] : null,
  status, h("div", null, submit));
  return form;
}

function editForm(project, status, refresh) {
  const id = (name) => `edit-${name}-${project.layer}-${project.id}`;
  const name = h("input", { id: id("name"), value: project.name, required: true, maxlength: "120" });
  const description = h("textarea", { id: id("description"), value: project.description, maxlength: "1000",
    class: "short" });
  const aliases = h("input", { id: id("aliases"), value: project.aliases.join(", "), autocomplete: "off" });
  const save = h("button", { type: "submit" }, "Save");
  return h("details", { class: "project-edit" }, h("summary", null, "Edit"), h("form", { class: "stack",
    onsubmit: (event) => {
      event.preventDefault();
      attempt(save, status, async () => {
        await api.patch(path(project), { name: name.value.trim(), description: description.value.trim(),
          aliases: words(aliases.value) });
        toast(`Saved ${name.value.trim()}.`);
        await refresh();
      });
    } },
  h("label", { for: id("name") }, "Name"), name, h("label", { for: id("description") }, "Description"), description,
  h("label", { for: id("aliases") }, "Aliases (comma-separated)"), aliases, h("div", null, save)));
}

function card(project, refresh) {
  const status = h("div", { class: "project-status", "aria-live": "polite" });
  const archived = project.status === "archived";
  const titleId = `project-${project.layer}-${project.id}`;
  const archive = h("button", { type: "button", class: "secondary", onclick: () => attempt(archive, status,
    async () => {
      await api.patch(path(project), { status: archived ? "active" : "archived" });
      toast(archived ? `Restored ${project.name}.` : `Archived ${project.name}.`);
      await refresh();
    }) }, archived ? "Unarchive" : "Archive");
  // Asks in place of the button (app.ask), not with the browser's confirm().
  const remove = h("button", { type: "button", class: "danger", onclick: () => ask(remove,
    `Delete the project ${project.name}? Its memories keep their project:${project.id} tag.`, "Delete it",
    (yes) => attempt(yes, status, async () => {
      await api.del(path(project));
      toast(`Deleted ${project.name}.`);
      await refresh();
    })) }, "Delete");
  const count = project.count === undefined ? null
    : `${project.count} memor${project.count === 1 ? "y" : "ies"}`;
  return h("article", { class: "item card project", tabindex: "-1", "aria-labelledby": titleId,
    dataset: { href: link("memories", { project: project.id }), slug: project.id } },
  h("div", { class: "row project-head" }, h("h3", { id: titleId }, project.name),
    h("code", null, project.id), h("span", { class: "badge" }, project.layer),
    archived ? h("span", { class: "badge warn" }, "archived") : null,
    count ? h("span", { class: "project-count" }, count) : null),
  project.description ? h("p", { class: "project-description" }, project.description) : null,
  project.aliases.length ? h("p", { class: "muted" }, "Also claims ", project.aliases.map((a, i) =>
    [i ? ", " : "", h("a", { href: link("memories", { tag: a }) }, "#" + a)])) : null,
  h("p", { class: "muted meta" }, "Created ", project.created_at ? when(project.created_at) : "—",
    project.updated_at ? [" · updated ", when(project.updated_at)] : null),
  h("div", { class: "project-foot" },
    h("nav", { class: "project-links", "aria-label": `${project.name}: go to` },
      h("a", { href: link("memories", { project: project.id }) }, "Memories"),
      h("a", { href: "#/recall?" + new URLSearchParams({ project: project.id, q: "" }) }, "Recall"),
      h("a", { href: link("graph", { project: project.id }) }, "Graph")),
    h("div", { class: "actions" }, archive, remove)),
  editForm(project, status, refresh), status);
}

export default {
  title: "Projects",
  async render(main, params) {
    const archived = params.archived === "1";
    const toggle = h("input", { id: "projects-archived", type: "checkbox", checked: archived,
      onchange: () => navigate("projects", toggle.checked ? { archived: 1 } : {}) });
    const list = h("div", { class: "list" }, h("p", { class: "muted" }, "Loading…"));
    const create = h("details", { class: "card" }, h("summary", null, "New project"));
    const draw = async () => {
      try {
        const answer = await api.get("/projects", { counts: 1, include_archived: archived ? 1 : undefined });
        const projects = answer.projects;
        if (!projects.length) create.open = true;
        clear(list, projects.length ? projects.map((p) => card(p, draw)) : h("p", { class: "muted" }, archived
          ? "No projects yet." : "No active projects. Create one above, or capture a memory with a project."));
      } catch (error) {
        clear(list, failure(error));
      }
    };
    create.append(createForm(draw));
    main.append(heading("Projects", h("label", { for: "projects-archived", class: "check" }, toggle,
      " Show archived")), create,
    h("h2", null, archived ? "All projects" : "Active projects"), list);
    await draw();
  },
};
