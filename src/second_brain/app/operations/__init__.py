"""The one way in: one function per operation, for every entry point. REST routes, MCP tools, CLI commands and
Lambda handlers call these with the Brain, the caller's Context and plain values (already read from a query
string, a JSON body, tool arguments or a command line), and only translate their protocol's input and output.

Each applies the rules the contract sets (required fields, workspaces, project slugs, `when`, limits, idempotency
keys, `as_of`) and calls the service that does the work. One module per capability, as under app/: `memories`,
`projects`, `recall`, `graph`, `past`, `team`, `reminders` (time anchors, loops, push), `insights`, `transfer`,
`config`, `maintenance`, `conflicts` (the review list), `integrations`; `inputs` holds the rules they share. Every
operation is importable from here.
"""

from .config import get_config, output_budget, patch_config, reset_config, time_zone
from .conflicts import answer_conflict, conflicts
from .graph import connections, graph, link, unlink
from .inputs import (
    actor_id,
    capture_workspace,
    clamp,
    filters,
    identifier,
    int64,
    narrowed,
    recall_request,
    required,
    when_text,
    workspaces_for,
)
from .insights import brief, digest, resolve_patterns
from .integrations import (
    connect_integration,
    connector_specs,
    disconnect_integration,
    integration_kinds,
    integrations,
    sync_integration,
)
from .maintenance import extract_dry_run, maintenance_status, run_jobs, run_maintenance, run_scheduled
from .memories import (
    append,
    capture,
    capture_response,
    count,
    embed_pending,
    forget,
    get,
    landed,
    list_recent,
    retag,
    set_status,
    share,
    stats,
    tags,
    update,
    vectorize_pending,
)
from .past import changes, entry_revisions, timeline
from .projects import create_project, delete_project, list_projects, update_project
from .recall import chat, moments, recall
from .reminders import (
    clear_anchor,
    due,
    loops,
    push_public_key,
    push_run,
    push_subscribe,
    push_test,
    push_unsubscribe,
    resolve_loop,
    snooze,
)
from .team import (
    add_member,
    create_team,
    list_teams,
    me,
    members,
    owner_identity,
    remove_member,
    rename_team,
    roster,
    rotate_member_token,
    rotate_own_token,
    set_member_default,
    set_membership,
    set_own_default,
    suspend_member,
    team_activity,
    team_workspaces,
    update_profile,
)
from .transfer import export, import_page, import_uploaded_page, read_backup

__all__ = [
    "actor_id", "add_member", "answer_conflict", "append", "brief", "capture", "capture_response",
    "capture_workspace", "chat", "clamp", "clear_anchor", "conflicts", "connect_integration", "connections",
    "connector_specs", "count", "create_project", "create_team", "delete_project", "digest", "disconnect_integration",
    "due", "embed_pending", "entry_revisions", "export", "extract_dry_run", "filters", "forget", "get", "get_config",
    "graph", "identifier", "import_page", "import_uploaded_page", "int64", "integration_kinds", "integrations",
    "landed", "link", "list_projects", "list_recent",
    "list_teams", "loops", "maintenance_status", "me", "members", "narrowed", "output_budget", "owner_identity",
    "time_zone", "moments", "changes",
    "patch_config", "push_public_key", "push_run", "push_subscribe", "push_test", "push_unsubscribe", "read_backup",
    "recall", "recall_request", "remove_member", "rename_team", "required", "reset_config", "resolve_loop",
    "resolve_patterns", "retag", "roster", "rotate_member_token", "rotate_own_token", "run_jobs", "run_maintenance",
    "run_scheduled", "set_member_default", "set_membership", "set_own_default", "set_status", "share", "snooze",
    "stats", "suspend_member", "sync_integration", "tags", "team_activity", "team_workspaces", "timeline", "unlink",
    "update", "update_profile", "update_project", "vectorize_pending", "when_text", "workspaces_for",
]
