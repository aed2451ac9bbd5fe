"""The published shape of each value the API takes, read from the rule that enforces it (the domain's constants and
patterns), so /openapi.json admits what the routes accept and a client or a fuzzer can know the rules.

Descriptive only: the rules themselves run where they live (domain, app/operations.py); nothing here validates."""

from typing import Any, TypedDict

from pydantic import WithJsonSchema

from ...app.insights.patterns import ACTIONS as PATTERN_ACTIONS
from ...app.past.timeline import NAMES as TIMELINE_NAMES
from ...app.reminders import time_anchors
from ...app.transfer import ExportedEntry
from ...domain import projects, team
from ...domain.conflicts import KEEPS
from ...domain.events import REGISTRY
from ...domain.links import LABELS
from ...domain.memory import WHEN_KINDS
from ...domain.push import LOCAL_SUFFIXES, MAX_ENDPOINT_CHARS, METADATA_NAMES
from ...domain.text import (
    INT64,
    MAX_CONTENT_CHARS,
    MAX_ID_CHARS,
    MAX_SOURCE_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    RESERVED_PREFIXES,
    STATUSES,
    VOLATILITIES,
)


class Range(TypedDict):
    """An integer's bounds, as JSON Schema keywords."""

    minimum: int
    exclusiveMaximum: int


NOT_BLANK = r"\S"  # required text is refused when it is only whitespace
# Signed 64 bits. Exclusive above: FastAPI's schema model reads bounds as floats, and 2**63 - 1 is no float.
INT64_RANGE: Range = {"minimum": INT64[0], "exclusiveMaximum": INT64[1] + 1}
COUNT_RANGE: Range = {**INT64_RANGE, "minimum": 0}  # an offset or a cursor
POSITIVE_RANGE: Range = {**INT64_RANGE, "minimum": 1}
# Every memory id: a UUID for a captured memory; a restored one keeps its backup's id, which has this shape.
MEMORY_ID = {"type": "string", "maxLength": MAX_ID_CHARS,
             "pattern": ExportedEntry.model_json_schema()["properties"]["id"]["pattern"],
             "description": "A memory id: a UUID, or the id a restored backup gave it"}
# Made in app/team/service.py: the primary team is `company`, others `company-` and 12 hex digits; members `m-` and 16.
TEAM_ID = {"type": "string", "pattern": f"^{team.COMPANY}(-[0-9a-f]{{12}})?$",
           "description": "A company workspace (team) id, as GET /team/workspaces lists them"}
MEMBER = "m-[0-9a-f]{16}"
MEMBER_ID = {"type": "string", "pattern": f"^{MEMBER}$", "description": "A member id, as POST /team/members made it"}
PERSON_ID = {"type": "string", "pattern": f"^({team.OWNER_ID}|{MEMBER})$", "description": "A member id, or `owner`"}
SLUG = {"type": "string", "pattern": projects.SLUG.pattern, "description": "A project slug"}
LAYER = {"enum": ["personal", "company"]}
# Where a body names a layer and a team: a team is in the company layer, so never with `workspace: personal`.
TEAM_IN_COMPANY = {"anyOf": [{"properties": {"workspace": {"enum": ["company", None]}}},
                             {"properties": {"team": {"type": "null"}}}]}
CONTENT = {"type": "string", "pattern": NOT_BLANK, "maxLength": MAX_CONTENT_CHARS}
TAG = {"type": "string", "maxLength": MAX_TAG_CHARS}
TAGS = {"type": "array", "items": TAG, "maxItems": MAX_TAGS,
        "description": f"At most {MAX_TAGS} tags (hashtags in the text count too), each at most {MAX_TAG_CHARS} "
                       "characters; trimmed and lowercased"}
SOURCE = {"type": "string", "maxLength": MAX_SOURCE_CHARS}
VOLATILITY = {"enum": list(VOLATILITIES)}
STATUS = {"enum": list(STATUSES)}
WHEN_KIND = {"enum": list(WHEN_KINDS)}
LINK_TYPE = {"enum": list(LABELS)}
TIMELINE_TYPE = {"enum": sorted({*TIMELINE_NAMES, *REGISTRY})}
TEXT = {"type": "string", "pattern": NOT_BLANK}
LOOP_ACTION = {"enum": ["done", "not-task"]}  # app/memories/service.py resolve_loop
FORCE = {"type": "boolean", "description": "Store the note as new whatever it resembles (after a refused repeat)"}
# domain/conflicts.py: an item is named `<memory id>@<version>` (the event that made it)
CONFLICT = {"type": "string", "pattern": MEMORY_ID["pattern"].removesuffix("$") + "@[1-9][0-9]{0,8}$",
            "description": "An item of GET /conflicts: <memory id>@<version>"}
KEEP = {"enum": list(KEEPS)}
PATTERN_ACTION = {"enum": list(PATTERN_ACTIONS)}


def _anycase(text: str) -> str:
    """A regex for `text` (letters, digits, `.`, `:`, `-`, spaces) in any letter case: JSON Schema's regexes have no
    case-insensitive flag."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else "\\." if c == "." else c for c in text)


# A tag that names a project on capture (`project:<slug>`, in any case) must carry a valid slug.
PROJECT_TAG = _anycase("project:")
CAPTURE_TAGS = {**TAGS, "items": {**TAG, "anyOf": [
    {"not": {"pattern": rf"^\s*{PROJECT_TAG}"}},
    {"pattern": rf"^\s*{PROJECT_TAG}[A-Za-z0-9][A-Za-z0-9_-]{{0,63}}\s*$"}]}}
CAPTURE_PROJECT = {"type": "string", "pattern": r"^\s*[A-Za-z0-9][A-Za-z0-9_-]{0,63}\s*$",
                   "description": "A project slug, in any case; a new one creates the project"}
PROJECT_NAME = {"type": "string", "pattern": NOT_BLANK, "maxLength": projects.MAX_NAME}
PROJECT_STATUS = {"enum": list(projects.STATUSES)}
DESCRIPTION = {"type": "string", "maxLength": projects.MAX_DESCRIPTION}
# Aliases are plain topic tags: none may start with a reserved prefix such as `status:`.
ALIASES = {"type": "array", "maxItems": projects.MAX_ALIASES, "items": {**TAG, "not": {
    "pattern": rf"^\s*({'|'.join(_anycase(p) for p in RESERVED_PREFIXES)})"}}}

# A moment as app/reminders/time_anchors.py reads it: Unix ms (11 to 13 digits), an ISO date, or an ISO datetime
# (without an offset: the brain's TIMEZONE). Spelled out, because JSON Schema's date formats admit what Python's parser
# refuses (leap seconds, year 0, a lowercase `t`) and the dates must exist (no 30 February).
_YEAR = "(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP_YEAR = "([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)"
_DATE = (f"({_YEAR}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
         f"|02-(0[1-9]|1[0-9]|2[0-8]))|{_LEAP_YEAR}-02-29)")
_TIME = r"([01][0-9]|2[0-3])(:[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?"
UNIX_MS = (10**10, 10**13 - 1)
MOMENT = {"type": "string", "pattern": f"^([0-9]{{11,13}}|{_DATE}([T ]{_TIME})?|{time_anchors.PHRASE})$",
          "description": "Unix ms, an ISO 8601 date (2026-12-03) or datetime (2026-12-03T09:30, offset optional: "
                         "without one, the brain's TIMEZONE), or words such as \"tomorrow at 10\", \"Friday at 9\", "
                         "\"in 3 days\", \"7d\" or \"last week\" (read in the brain's TIMEZONE)"}
WHEN = {"anyOf": [MOMENT, {"type": "integer", "minimum": UNIX_MS[0], "maximum": UNIX_MS[1],
                           "description": "Unix ms"}]}

# A push service's URL (domain/push.py): https, a dotted ASCII host name that is not one of a private network's or a
# metadata service's, no credentials, no whitespace. Its host must also resolve to addresses on the internet,
# which no schema can say.
_LOCAL_HOSTS = "|".join([*(rf"[A-Za-z0-9.-]*{_anycase(suffix)}" for suffix in LOCAL_SUFFIXES),
                         *(_anycase(name) for name in sorted(METADATA_NAMES))])
ENDPOINT = {"type": "string", "maxLength": MAX_ENDPOINT_CHARS,
            "pattern": r"^https://([A-Za-z0-9-]+\.)+[A-Za-z][A-Za-z0-9-]*\.?(:[0-9]{1,4})?([/?#][!-~]*)?$",
            "not": {"pattern": rf"^https://({_LOCAL_HOSTS})\.?([:/?#]|$)"},
            "description": "The push service's https URL, from the browser's PushSubscription"}
BASE64URL = "[A-Za-z0-9_+/-]"
P256DH = {"type": "string", "pattern": f"^B[A-P]{BASE64URL}{{85}}={{0,2}}$",
          "description": "base64url: the device's P-256 public key, uncompressed (65 bytes; a point on the curve)"}
AUTH = {"type": "string", "pattern": f"^{BASE64URL}{{22}}={{0,2}}$", "description": "base64url: 16 bytes"}

# What domain/team.py check_name lets into a name: visible characters only, i.e. letters, marks, numbers, punctuation,
# symbols and spaces (Unicode's L, M, N, P, S and Zs), never control, format (zero-width and bidirectional marks
# among them), separator, private-use or unassigned ones.
VISIBLE = r"^[\p{L}\p{M}\p{N}\p{P}\p{S}\u0020\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]*$"
NAME = {"type": "string", "maxLength": team.MAX_NAME_CHARS, "allOf": [{"pattern": NOT_BLANK}, {"pattern": VISIBLE}],
        "description": "Visible text: no control, zero-width or bidirectional characters"}
# A person's name is also never one the API reads as someone else ("me") or the brain's own.
PERSON_NAME = {**NAME, "not": {"pattern": rf"^\s*({'|'.join(_anycase(n) for n in team.RESERVED_NAMES)})\s*$"},
               "description": "Visible text, unique in the brain (in any case), not `me`, `system`, `Owner` or "
                              "the owner's name"}
EMAIL = {"anyOf": [{"const": ""}, {"type": "string", "maxLength": team.MAX_EMAIL_CHARS, "pattern": team.EMAIL.pattern}]}
ROLE = {"enum": list(team.ROLES)}
SHARE = {"enum": list(team.SHARES)}
# Unknown fields are ignored, but every body is checked whole: no integer past 64 bits, in them either.
IGNORED = {"type": ["string", "number", "boolean", "null"], **INT64_RANGE}


def schema(value: dict[str, Any]) -> WithJsonSchema:
    """A required field's published schema (the pydantic type beside it only parses)."""
    return WithJsonSchema(value)


def optional(value: dict[str, Any]) -> WithJsonSchema:
    """An optional field's published schema: the value, or null (the same as leaving it out)."""
    return WithJsonSchema({"anyOf": [value, {"type": "null"}]})
