"""The rules on a caller's plain inputs that the live operations (app/operations/) and the answers as of a past
moment (app/past/as_of.py) both apply: required values, ids, 64-bit numbers, clamped limits, the workspaces a caller
may name, the filters of a read and what a recall asks. Here, below both, so that neither imports the other for
them: the operations dispatch to the past, and the past reads its inputs as the operations do."""

import re
from typing import Any, overload

from ..domain.errors import InvalidInput, NotFound
from ..domain.text import INT64, MAX_ID_CHARS, shorten
from ..ports.read_model import Filters
from .brain import Brain
from .handling import Context
from .recall.pipeline import RecallRequest
from .reminders.time_anchors import parse_moment


def required(value: str | None, name: str) -> str:
    if value is None or not value.strip():
        raise InvalidInput(f"Missing or empty {name}")
    return value


def identifier(value: str | None, name: str = "id") -> str:
    """A required memory id; one longer than any id can be is not found, and not echoed whole."""
    value = required(value, name)
    if len(value.strip()) > MAX_ID_CHARS:
        raise NotFound(f"No entry found with ID: {shorten(value.strip())}")
    return value


@overload
def int64(value: int, name: str) -> int: ...
@overload
def int64(value: int | None, name: str) -> int | None: ...
def int64(value: int | None, name: str) -> int | None:
    """A value no store can hold (past signed 64 bits) is refused by name; limits within it are clamped."""
    if value is not None and not INT64[0] <= value <= INT64[1]:
        raise InvalidInput(f"{name} must fit in a signed 64-bit integer")
    return value


@overload
def when_text(value: str | int, name: str) -> str: ...
@overload
def when_text(value: str | int | None, name: str) -> str | None: ...
def when_text(value: str | int | None, name: str) -> str | None:
    """A `when` or `until` as parse_when reads it: ISO 8601, or Unix ms as a number (within 64 bits) or digits."""
    if isinstance(value, int):
        int64(value, name)
    return None if value is None else str(value)


INTEGER = re.compile(r"-?[0-9]{1,19}")


@overload
def moment_of(brain: Brain, value: str | int, name: str, ahead: bool, any_integer: bool = False) -> int: ...
@overload
def moment_of(brain: Brain, value: str | int | None, name: str, ahead: bool,
              any_integer: bool = False) -> int | None: ...
def moment_of(brain: Brain, value: str | int | None, name: str, ahead: bool, any_integer: bool = False) -> int | None:
    """A time parameter as Unix ms, however it was said (time_anchors.parse_moment: ISO 8601, Unix ms, or words
    such as "tomorrow at 10" or "7d", in the brain's time zone). `ahead`: a time to come (a reminder), else a bound
    on the past (after, before, as_of). `any_integer`: any whole number is Unix ms, as the reference's after and
    before take it (elsewhere ten digits are refused as Unix seconds)."""
    if value is None:
        return None
    text = when_text(value, name).strip()
    if any_integer and INTEGER.fullmatch(text):
        return int64(int(text), name)
    return parse_moment(text, brain.memories.timezone, brain.queries.clock.now_ms(), name, ahead)


def clamp(value: int, low: int, high: int) -> int:
    """Out-of-range limits are clamped, as the reference does, not refused."""
    return max(low, min(high, value))


def workspaces_for(ctx: Context, layer: str | None, team: str | None = None) -> tuple[str, ...]:
    """The readable workspaces, narrowed to one layer (and, for the company layer, one team) when asked."""
    if layer is None and team is None:
        return ctx.identity.readable
    if layer == "personal" and team is None:
        return (ctx.identity.personal_workspace,)
    if layer == "company" or (layer is None and team is not None):
        if team is None:
            return ctx.identity.company_workspaces
        if team.strip() not in ctx.identity.company_workspaces:
            raise NotFound(f"No team found with ID: {shorten(team.strip())}")
        return (team.strip(),)
    if layer == "personal":
        raise InvalidInput("team goes with workspace company")
    raise InvalidInput("workspace must be personal or company")


def filters(brain: Brain, ctx: Context, *, workspace: str | None = None, tag: str | None = None,
            after: str | int | None = None, before: str | int | None = None, kind: str | None = None,
            actor: str | None = None, project: str | None = None, team: str | None = None) -> Filters:
    if actor is not None:
        actor = actor_id(ctx, actor)
    return Filters(
        workspaces=workspaces_for(ctx, workspace, team),
        tag=tag.lower() if tag else None,
        after=moment_of(brain, after, "after", ahead=False, any_integer=True),
        before=moment_of(brain, before, "before", ahead=False, any_integer=True),
        kind=kind if kind in ("episodic", "semantic") else None,  # the spec: an unrecognised kind is ignored
        actor=actor,
        any_tags=brain.projects.tags_for(ctx, project) if project else (),
    )


def actor_id(ctx: Context, actor: str) -> str:
    """`me`, an id or a roster name (any case) as the author's id; an unknown one matches nobody."""
    wanted = actor.strip().lower()
    if wanted in ("me", ctx.identity.actor_id.lower(), ctx.identity.name.lower()):
        return ctx.identity.actor_id
    return next((key for key, name in ctx.identity.roster.items() if wanted in (key.lower(), name.lower())), actor)


def recall_request(brain: Brain, ctx: Context, query: str | None, top_k: int, hops: int | None, full: bool,
                   **filter_args: Any) -> RecallRequest:
    """What a recall asks, live or as of a moment: the query, clamped limits and the filters."""
    chosen = filters(brain, ctx, **filter_args)
    return RecallRequest(required(query, "query"), clamp(top_k, 1, 20), chosen, full,
                         None if hops is None else clamp(hops, 0, 3))
