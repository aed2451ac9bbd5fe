"""How an event shows to people, one row per event type, registered beside the event's class (`shows(...)` right
after it): its name in the /entry timeline, the payload shown there, the few words of the audit feed, the revision
a change of a memory's text makes, and its item in the team's activity feed.

So everything about an event type sits in one place, and a new event is presented by adding its row, not by
visiting each presenter. The presenters in app/ read these rows; they add only who may see what (a memory the
reader cannot read, an event written before it was shared). A row never shows a memory's text, a token, a key or
a setting's value.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

E = TypeVar("E")
Lookup = Callable[[str], str]  # an id as the reader sees it: another memory's (its id, or "another memory"), a name


@dataclass(frozen=True)
class Shown(Generic[E]):
    """How events of one type show (see the module docstring); whatever a row leaves out shows the default."""

    name: str | None = None  # the /entry timeline's name, also the audit feed's (default: the type in snake_case)
    payload: Callable[[E], dict[str, Any]] | None = None  # what the /entry timeline shows of it (default: {})
    line: Callable[[E, Lookup], str] | None = None  # the audit feed's words, given how another memory reads
    revision: Callable[[E], str] | None = None  # a change of the memory's text: the reason its revision gives
    moves: bool = False  # a move between layers: a revision ("shared") for the reader it brings the memory to
    feed_name: str | None = None  # the team activity feed's type
    feed: Callable[[E, Lookup, Lookup], dict[str, Any]] | None = None  # its item there, given person and team names


ROWS: dict[type[Any], Shown[Any]] = {}
NAMES: dict[str, Shown[Any]] = {}  # the same rows by stored type name (what an erased event still has)
NOTHING: Shown[Any] = Shown()


def shows(cls: type[E], name: str | None = None, *, payload: Callable[[E], dict[str, Any]] | None = None,
          line: Callable[[E, Lookup], str] | None = None, revision: Callable[[E], str] | None = None,
          moves: bool = False, feed_name: str | None = None,
          feed: Callable[[E, Lookup, Lookup], dict[str, Any]] | None = None) -> None:
    """Register how events of `cls` show; once per type."""
    if cls in ROWS:
        raise ValueError(f"{cls.__name__} already says how it shows")
    ROWS[cls] = NAMES[cls.__name__] = Shown(name, payload, line, revision, moves, feed_name, feed)


def row(event: object) -> Shown[Any]:
    """The row of this event's type (an erased event has none: it shows nothing of what it was)."""
    return ROWS.get(type(event), NOTHING)


def named(type_name: str) -> Shown[Any]:
    """The row of a stored type name, whether or not the event is erased."""
    return NAMES.get(type_name, NOTHING)


def payload(event: object) -> dict[str, Any]:
    shown = row(event)
    return shown.payload(event) if shown.payload else {}


def line(event: object, other: Lookup) -> str | None:
    """The audit feed's words for the event, None where its row has none."""
    shown = row(event)
    return shown.line(event, other) if shown.line else None


def revision(event: object) -> str | None:
    """The reason of the revision this event makes of a memory's text; None for an event that leaves the text."""
    shown = row(event)
    return shown.revision(event) if shown.revision else None


def feed(event: object, person: Lookup, team: Lookup) -> dict[str, Any]:
    shown = row(event)
    return shown.feed(event, person, team) if shown.feed else {}
