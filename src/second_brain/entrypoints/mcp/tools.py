"""What the capability modules' tools share: how a brain error reads, the ranges and annotations their schemas
state, and the parameters more than one capability takes. The capability modules import this one; it imports none
of them (nor server.py)."""

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from ...app import operations as ops
from ...domain.errors import BrainError

# How a capability module reaches the brain: `call(operation, *args, **kwargs)` runs an operation for the tool's
# caller (server.py's `build_mcp`), `budget()` is the characters an answer may take. Each module's
# `register(mcp, call, budget)` declares its tools (and its resources and prompts) on the server.
Call = Callable[..., Any]
Budget = Callable[[], int]
Register = Callable[[MCPServer, Call, Budget], None]

MemoryId = Annotated[str, Field(description="The memory's id (a UUID from remember, recall or list_recent).")]
Workspace = Annotated[Literal["personal", "company"] | None, Field(
    description="\"personal\" or \"company\". Leave unset for the default.")]
Team = Annotated[str | None, Field(description="A team id from list_teams, with workspace \"company\".")]
# How every time parameter may be said (app/reminders/time_anchors.py reads them all the same way).
TIME_WORDS = ("an ISO date or date-time, Unix ms, or words such as \"tomorrow at 10\", \"Friday at 9\", "
              "\"in 3 days\", \"7d\" or \"last week\" (in the brain's time zone)")
# The range of the audit feed's and conflicts' limits, stated in their schemas and told when a value was clamped.
EVENTS = (1, 100)


def said(error: BrainError) -> str:
    """A brain error as the tool's error text: its message, and what REST sends beside it that helps the caller
    recover (an unknown project's `known_projects`)."""
    if "known_projects" not in error.details:
        return error.message
    known = list(error.details["known_projects"])  # type: ignore[call-overload]
    return f"{error.message}. " + (f"Known projects: {', '.join(known)}." if known else "There are no projects yet.")


def ranged(description: str, bounds: tuple[int, int]) -> Any:
    """A whole-number parameter whose schema states its range. A value outside it is not refused (the reference's
    tools clamp, and its clients rely on that): the operation clamps it and the answer begins by saying so."""
    return Field(description=description, json_schema_extra={"minimum": bounds[0], "maximum": bounds[1]})


def clamped(name: str, value: int | None, bounds: tuple[int, int]) -> str:
    """The line telling the caller a value of theirs was clamped (as the operation clamps it), or ""."""
    low, high = bounds
    if value is None or low <= value <= high:
        return ""
    return f"Note: {name} {value} is outside {low}-{high}, so {ops.clamp(value, low, high)} was used.\n\n"


# What each tool does to the brain, for clients that ask before calling (the brain is a closed world: no tool
# reaches anything outside it).
READS = ToolAnnotations(readOnlyHint=True, openWorldHint=False)


def changes(destructive: bool = False, idempotent: bool = False) -> ToolAnnotations:
    return ToolAnnotations(readOnlyHint=False, destructiveHint=destructive, idempotentHint=idempotent,
                           openWorldHint=False)
