// Team (admins only): the members with their email, role and whether they are suspended; add a member and rotate a
// token (each token shown this once, with a copy button); suspend, restore, remove and change roles; the company
// workspaces (and a new one); and the activity feed, 25 a page. Members who are not admins get a sentence instead.
import { act, api, ask, clear, failure, h, heading, isAdmin, link, pager, toast, when } from "../app.js";

const PAGE = 25;
const ROLES = ["member", "admin"];

// ---------------------------------------------------------------------------------------------------------------
// A token shown once

async function copy(text, pre) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API (an insecure page, or permission refused): select the text and copy it the old way.
    const range = document.createRange();
    range.selectNodeContents(pre);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    if (!document.execCommand("copy")) {
      throw new Error("The browser would not copy: the token is selected, copy it with Ctrl+C or ⌘C.");
    }
  }
  toast("Token copied.");
}

function secret(box, answer, what) {
  const pre = h("pre", { class: "secret", id: "new-token" }, answer.token);
  const copyButton = h("button", { type: "button", onclick: () => act(copyButton, () => copy(answer.token, pre)) },
    "Copy token");
  const done = h("button", { type: "button", class: "secondary", onclick: () => clear(box) }, "I have stored it");
  clear(box, h("section", { class: "card token-once", role: "alert", "aria-labelledby": "token-title" },
    h("h2", { id: "token-title" }, `${what} for ${answer.member.name}`),
    h("p", { class: "warn" }, "Copy this token now and give it to ", answer.member.name,
      ". It will not be shown again: only its hash is kept."),
    pre, h("div", { class: "actions" }, copyButton, done)));
  copyButton.focus();
}

// ---------------------------------------------------------------------------------------------------------------
// Members

function memberCard(member, me, names, refresh, tokenBox) {
  const self = member.id === me;
  const button = (label, className, action) => {
    const b = h("button", { type: "button", class: className, onclick: () => act(b, action) }, label);
    return b;
  };
  // What cannot be undone asks first, in place of its button (app.ask).
  const asking = (label, className, question, answer, action) => {
    const b = h("button", { type: "button", class: className, onclick: () => ask(b, question, answer,
      (yes) => act(yes, action)) }, label);
    return b;
  };
  const roleId = "role-" + member.id;
  const role = member.owner ? null : h("select", { id: roleId, onchange: () => act(role, async () => {
    try {
      const answer = await api.post("/team/profile", { id: member.id, role: role.value });
      toast(`${answer.member.name} is now ${answer.member.role === "admin" ? "an admin" : "a member"}.`);
    } finally {
      await refresh();
    }
  }) }, ROLES.map((r) => h("option", { value: r, selected: r === member.role }, r)));
  const controls = member.owner || self ? null : h("div", { class: "actions" },
    asking("New token", "secondary", `Replace ${member.name}'s token? The current one stops working at once.`,
      "Replace the token", async () => {
        secret(tokenBox, await api.post("/team/members/token", { id: member.id }), "New token");
      }),
    button(member.suspended ? "Restore access" : "Suspend", "secondary", async () => {
      const answer = await api.post("/team/members/suspend", { id: member.id, suspended: !member.suspended });
      toast(answer.member.suspended ? `${member.name} is suspended.` : `${member.name} has access again.`);
      await refresh();
    }),
    asking("Remove", "danger", `Remove ${member.name}? Their personal memories are erased; what they shared with the `
      + "company stays, under their name. This cannot be undone.", `Remove ${member.name}`, async () => {
      await api.post("/team/members/remove", { id: member.id });
      toast(`${member.name} was removed.`);
      await refresh();
    }));
  const teams = (member.teams || []).map((id) => names[id] || id);
  // Not a j/k "item": a member has no page of their own to open with Enter; their controls are reached with Tab.
  return h("article", { class: "card member", dataset: { id: member.id } },
    h("div", { class: "member-head" },
      h("strong", { class: "member-name" }, member.name),
      member.owner ? h("span", { class: "badge" }, "owner") : null,
      self ? h("span", { class: "badge" }, "you") : null,
      h("span", { class: member.suspended ? "badge suspended" : "badge active" },
        member.suspended ? "suspended" : "active")),
    h("div", { class: "meta" },
      h("span", null, member.email || h("span", { class: "muted" }, "no email")),
      role ? h("span", { class: "role-field" }, h("label", { for: roleId }, "Role "), role)
        : h("span", null, "Role: ", member.role),
      teams.length ? h("span", { class: "muted" }, "Workspaces: ", teams.join(", ")) : null,
      member.created_at ? h("span", { class: "muted" }, "added ", when(member.created_at)) : null),
    controls);
}

function addMemberForm(workspaces, done, tokenBox) {
  const name = h("input", { id: "member-name", name: "name", required: true, autocomplete: "off" });
  const email = h("input", { id: "member-email", name: "email", type: "email", autocomplete: "off" });
  const role = h("select", { id: "member-role", name: "role" }, ROLES.map((r) => h("option", { value: r }, r)));
  const boxes = workspaces.map((w) => h("input", { type: "checkbox", id: "member-team-" + w.id, value: w.id,
    checked: w.primary, defaultChecked: w.primary })); // the primary team stays ticked after a reset
  const submit = h("button", { type: "submit" }, "Add member");
  const form = h("form", { class: "stack card", id: "add-member", onsubmit: (event) => {
    event.preventDefault();
    act(submit, async () => {
      const answer = await api.post("/team/members", { name: name.value.trim(), email: email.value.trim() || undefined,
        role: role.value, teams: boxes.filter((b) => b.checked).map((b) => b.value) });
      form.reset();
      secret(tokenBox, answer, "Token");
      await done();
    });
  } },
  h("h2", { id: "add-title" }, "Add a member"),
  h("div", { class: "row" }, h("label", { for: "member-name" }, "Name", name),
    h("label", { for: "member-email" }, "Email (optional)", email), h("label", { for: "member-role" }, "Role", role)),
  workspaces.length ? h("fieldset", { class: "choices" }, h("legend", null, "Company workspaces to join"),
    workspaces.map((w, i) => h("span", { class: "choice" }, boxes[i],
      h("label", { for: "member-team-" + w.id }, w.name)))) : null,
  h("div", null, submit));
  return form;
}

// ---------------------------------------------------------------------------------------------------------------
// Workspaces

function workspaceForm(members, refresh) {
  const others = members.filter((m) => !m.owner);
  const name = h("input", { id: "workspace-name", name: "name", required: true, autocomplete: "off" });
  const boxes = others.map((m) => h("input", { type: "checkbox", id: "workspace-member-" + m.id, value: m.id }));
  const submit = h("button", { type: "submit" }, "Create workspace");
  const form = h("form", { class: "stack", id: "add-workspace", onsubmit: (event) => {
    event.preventDefault();
    act(submit, async () => {
      const answer = await api.post("/team/workspaces", { name: name.value.trim(),
        members: boxes.filter((b) => b.checked).map((b) => b.value) });
      toast(`Workspace ${answer.workspace.name} created.`);
      form.reset();
      await refresh();
    });
  } },
  h("label", { for: "workspace-name" }, "New company workspace"), name,
  others.length ? h("fieldset", { class: "choices" }, h("legend", null, "Members (the owner is in every one)"),
    others.map((m, i) => h("span", { class: "choice" }, boxes[i],
      h("label", { for: "workspace-member-" + m.id }, m.name)))) : null,
  h("div", null, submit));
  return form;
}

// The section stays; its title and list are redrawn, and its form only when the members it offers change, so
// a workspace half typed in while the view refreshes (after a role change, say) is not lost.
function workspaceSection() {
  const title = h("h2", { id: "workspaces-title" }, "Company workspaces");
  const list = h("ul", { class: "list plain workspace-list" });
  const formBox = h("div");
  const section = h("section", { id: "workspaces", "aria-labelledby": "workspaces-title" }, title, list, formBox);
  let offered = null;
  function draw(workspaces, members, refresh) {
    clear(title, `Company workspaces (${workspaces.length})`);
    clear(list, workspaces.map((w) => h("li", { class: "card" },
      h("strong", null, w.name), w.primary ? h("span", { class: "badge" }, "primary") : null,
      h("span", { class: "muted" }, ` ${w.id}`))));
    const choices = members.filter((m) => !m.owner).map((m) => `${m.id}:${m.name}`).join(" ");
    if (choices !== offered) {
      clear(formBox, workspaceForm(members, refresh));
      offered = choices;
    }
  }
  return { section, draw };
}

// ---------------------------------------------------------------------------------------------------------------
// Activity

function described(item) {
  const who = item.actor_name || "Someone";
  const member = item.member_name || "a member";
  const memory = item.memory_id ? h("a", { href: link("entry", { id: item.memory_id }) }, "a memory") : "a memory";
  switch (item.type) {
    case "member_added": return `${who} added ${member} as ${item.role || "member"}.`;
    case "token_rotated": return `${who} replaced ${member}'s token.`;
    case "profile_changed": return `${who} changed ${member}'s profile${item.role ? ` (role: ${item.role})` : ""}.`;
    case "member_suspended": return item.suspended ? `${who} suspended ${member}.`
      : `${who} restored ${member}'s access.`;
    case "member_removed": return `${who} removed ${member}` + (item.erased_memories !== undefined
      ? ` and erased ${item.erased_memories} personal memories.` : ".");
    case "default_share_set": return `${who} set ${item.member_name ? member + "'s" : "the"} capture default to `
      + `${item.default_share}.`;
    case "workspace_renamed": return `${who} renamed a company workspace to ${item.workspace_name}.`;
    case "team_created": return `${who} created the company workspace ${item.workspace_name}.`;
    case "membership_changed": return item.joined ? `${who} added ${member} to ${item.workspace_name}.`
      : `${who} took ${member} out of ${item.workspace_name}.`;
    case "pattern_confirmed": return [`${who} confirmed a pattern: `, memory, "."];
    case "pattern_dismissed": return [`${who} dismissed a pattern: `, memory, "."];
    case "memory_shared": return [`${who} shared `, memory, item.author_name ? ` by ${item.author_name}` : "",
      " with the company."];
    case "memory_unshared": return [`${who} took `, memory, item.author_name ? ` by ${item.author_name}` : "",
      " back from the company."];
    default: return `${who}: ${String(item.type).replaceAll("_", " ")}.`;
  }
}

function activitySection() {
  let offset = 0;
  const body = h("div", null, h("p", { class: "muted" }, "Loading…"));
  const section = h("section", { id: "activity", "aria-labelledby": "activity-title" },
    h("h2", { id: "activity-title" }, "Activity"), body);
  async function refresh() {
    try {
      const feed = await api.get("/team/activity", { limit: PAGE, offset });
      if (!feed.activity.length) {
        clear(body, h("p", { class: "muted" }, "Nothing has happened yet."));
        return;
      }
      clear(body, h("ol", { class: "timeline activity" }, feed.activity.map((item) => h("li", null,
        h("span", null, described(item)), " ", h("span", { class: "muted" }, when(item.at))))),
      pager({ label: "Activity pages", offset, shown: feed.activity.length, total: feed.total, size: PAGE,
        back: "← Newer", forward: "Older →", next: feed.next_offset ?? null, go: (to) => {
          offset = to;
          refresh();
        } }));
    } catch (error) {
      clear(body, failure(error));
    }
  }
  return { section, refresh };
}

// ---------------------------------------------------------------------------------------------------------------

export default {
  title: "Team",
  async render(main) {
    if (!isAdmin()) {
      main.append(heading("Team"), h("p", { class: "muted", id: "admins-only" },
        "This view is for admins: it manages the members of this brain, their tokens and roles. Ask an admin if "
        + "something about your access needs to change."));
      return;
    }
    const tokenBox = h("div", { id: "token-box" });
    const membersBody = h("div", null, h("p", { class: "muted" }, "Loading…"));
    const membersTitle = h("h2", { id: "members-title" }, "Members");
    const addBox = h("div");
    const workspaces = workspaceSection();
    const activity = activitySection();
    main.append(heading("Team"), tokenBox,
      h("section", { id: "members", "aria-labelledby": "members-title" }, membersTitle, membersBody), addBox,
      workspaces.section, activity.section);
    let drawnFor = null; // the workspaces the add form offers: redrawn only when they change
    const refresh = async () => {
      try {
        const [list, spaces] = await Promise.all([api.get("/team/members"), api.get("/team/workspaces")]);
        const names = Object.fromEntries(spaces.workspaces.map((w) => [w.id, w.name]));
        clear(membersTitle, `Members (${list.members.length})`);
        clear(membersBody, h("div", { class: "list" }, list.members.map((m) =>
          memberCard(m, list.caller_id, names, refresh, tokenBox))));
        const offered = spaces.workspaces.map((w) => w.id).join(" ");
        if (drawnFor !== offered) { // so a half-typed member is not lost when the list redraws
          clear(addBox, addMemberForm(spaces.workspaces, refresh, tokenBox));
          drawnFor = offered;
        }
        workspaces.draw(spaces.workspaces, list.members, refresh);
      } catch (error) {
        clear(membersBody, failure(error));
      }
      await activity.refresh();
    };
    await refresh();
  },
};
