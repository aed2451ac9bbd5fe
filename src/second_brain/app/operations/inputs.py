"""The rules every operation applies to its plain inputs: required values, ids, 64-bit numbers, clamped limits,
the workspaces a caller may name, the filters of a read and what a recall asks. Those the answers as of a past
moment apply too live one level down, in app/inputs.py (app/past/ must not import app/operations/, which calls
it), and are re-exported here; the ones only operations apply are below."""

from collections.abc import Callable

from ...domain.errors import InvalidInput
from ..brain import Brain
from ..handling import Context
from ..inputs import actor_id as actor_id
from ..inputs import clamp as clamp
from ..inputs import filters as filters
from ..inputs import identifier as identifier
from ..inputs import int64 as int64
from ..inputs import moment_of as moment_of
from ..inputs import recall_request as recall_request
from ..inputs import required as required
from ..inputs import when_text as when_text
from ..inputs import workspaces_for as workspaces_for


def narrowed(ctx: Context, layer: str | None, team: str | None) -> tuple[str, ...] | None:
    """The workspaces a `workspace` and `team` narrow a name (a project's slug) to; None: every readable one."""
    return None if layer is None and team is None else workspaces_for(ctx, layer, team)


def capture_workspace(brain: Brain, ctx: Context, layer: str | None, team: str | None = None) -> str:
    """Where a capture lands: the layer asked for, else the caller's default (their own, else the team's)."""
    if layer is None and team is None:
        layer = brain.team.default_layer(ctx)
        if not ctx.identity.company_workspaces:  # a company default, for someone in no team
            layer = "personal"
    if layer == "company" and not ctx.identity.company_workspaces:
        raise InvalidInput("You belong to no team: capture to personal")
    return workspaces_for(ctx, layer or "company", team)[0]


def at_once(task: Callable[..., object], *args: object) -> None:
    """Run `task` now: what an operation's `defer` is when the caller cannot answer first."""
    task(*args)
