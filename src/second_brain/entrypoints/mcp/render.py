"""MCP output: text written for a model, bounded so a long memory or a long result list cannot flood its context."""

import json
import re
from contextvars import ContextVar
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any

from ...domain.staleness import STALE_TAG
from ...domain.text import shorten

# The brain's time zone, for the tool call being answered (server.py's `call` sets it): every time an answer shows
# is said in it, as ISO 8601 with its offset, never as Unix ms.
ZONE: ContextVar[tzinfo] = ContextVar("zone", default=UTC)
# What the tool call's operation answered (server.py's `call` sets it), sent beside the text as structured content.
ANSWERED: ContextVar[Any] = ContextVar("answered", default=None)
# What an answer says in REST's words, said as a tool call an agent can make instead.
FOR_AGENTS = (
    (re.compile(r"POST /due/clear with (\{[^}]*\})"), r"call clear_reminder with \1"),
    (re.compile(r"POST /due/snooze with (\{[^}]*\})"), r"call snooze with \1"),
    (re.compile(r"To undo, POST /conflicts/answer with (\{[^}]*\}) \(MCP: answer_conflict\)"),
     r"To undo, call answer_conflict with \1"),
    (re.compile(r"POST /conflicts/answer"), "answer_conflict"),
    (re.compile(r"an item of GET /conflicts"), "an item of the conflicts tool"),
    (re.compile(r"\(GET /conflicts\)"), "(see the conflicts tool)"),
    (re.compile(r"\(POST /team/me/token, or Settings in the dashboard\)"), "(Settings in the dashboard)"),
)
TIMES = ("at", "as_of", "since", "deadline", "snoozed_until")  # and every key ending in _at or At (linkedAt)


def for_agents(text: str) -> str:
    """A sentence of the brain's as an agent acts on it: the tool to call where REST's route was named."""
    for pattern, replacement in FOR_AGENTS:
        text = pattern.sub(replacement, text)
    return text


def moment(ms: int) -> str:
    """A time as ISO 8601 in the brain's time zone, with its offset (2026-12-11T09:00:00+01:00)."""
    return datetime.fromtimestamp(ms / 1000, ZONE.get()).isoformat(timespec="seconds")

LIST_SNIPPET_CHARS = 400
PAGE_MARKER_CHARS = 160  # kept free for the line saying what was left out and how to ask for it
MIN_PAGE_CHARS = 1_000  # of a memory's text per answer, however small the budget is set
DUE_WORDS = 120  # characters of a memory's text a due reminder shows, an ellipsis past them


def render_recall(response: dict[str, Any], budget: int) -> str:
    results = response["results"]
    notice = f"Notice: {response['notice']}\n\n" if response.get("notice") else ""
    if not results:
        return notice + response.get("message", "Nothing found matching that query.")
    head = f"{len(results)} memor{'y' if len(results) == 1 else 'ies'} for \"{response['query_used']}\", best first"
    if response.get("did_you_mean"):
        head += f" (no memory holds a word as typed: searched as \"{response['did_you_mean']}\")"
    if response.get("semantic_unavailable"):
        head += " (semantic search is unavailable: exact words only)"
    said = f"{response['message']}\n" if response.get("message") else ""  # nothing strong: before the list
    head = notice + said + head
    shown = {r["id"]: (n, r["created_at"]) for n, r in enumerate(results, 1)}
    blocks = [_block(n, r, f"score {r['score']}, {r['match']} match", r["content"], r["truncated"], r["full_length"],
                     _history(r, shown)) for n, r in enumerate(results, 1)]
    return _bounded(head + ":", blocks, budget)


def _history(result: dict[str, Any], shown: dict[str, tuple[int, int]]) -> str:
    """What a result's history asks of a model before it quotes it: a replaced memory names what replaced it, a
    memory that may conflict with others names them (by their number when they are in this answer)."""

    def name(other: str) -> str:
        if other not in shown:
            return other
        number, created = shown[other]
        return f"[{number}] ({'newer' if created > result['created_at'] else 'older'})"

    lines = []
    tags = result.get("tags", [])
    if "status:draft" in tags:
        lines.append("Draft: not confirmed; it may disagree with a confirmed memory (see below).")
    elif "status:canonical" in tags:
        lines.append("Confirmed (canonical): a person marked it as the source of truth.")
    if result.get("superseded_by"):
        lines.append(f"Superseded by {name(result['superseded_by'])}: a newer memory replaced this one; prefer it.")
    if result.get("conflicts_with"):
        lines.append(f"May conflict with {', '.join(name(o) for o in result['conflicts_with'])}: check which is "
                     "current before asserting either.")
    for item in result.get("review", []):
        lines.append(f'To settle it: call answer_conflict with {{"conflict": "{item}", "keep": "both" | "newer" | '
                     '"older"}.')
    if result.get("match") == "weak":
        lines.append("Weak match: little of the query is in it; do not rely on it as an answer.")
    return "\n".join(lines)


def render_list(entries: list[dict[str, Any]], budget: int) -> str:
    if not entries:
        return "No memories match."
    blocks = []
    for n, entry in enumerate(entries, 1):
        content = entry["content"]
        cut = len(content) > LIST_SNIPPET_CHARS + 90
        changed = entry.get("updated_at", entry["created_at"]) != entry["created_at"]
        blocks.append(_block(n, entry, f"updated {_date(entry['updated_at'])}" if changed else "",
                             content[:LIST_SNIPPET_CHARS] if cut else content, cut, len(content)))
    return _bounded(f"{len(entries)} most recent, newest first:", blocks, budget, ("memory", "memories"),
                    "use a smaller n")


def render_entry(entry: dict[str, Any], budget: int, offset: int = 0) -> str:
    """The memory's details and its text from character `offset`, within the budget: a longer text stops at a
    line or word break with a marker saying which characters were shown and the offset to ask for next."""
    lines = [
        f"id: {entry['id']}",
        f"tags: {', '.join(entry['tags']) or '(none)'}",
        f"source: {entry['source']} · saved {_date(entry['created_at'])} · updated {_date(entry['updated_at'])}",
        f"importance: {entry['importance_score']} · recalled {entry['recall_count']} times · contradictions won "
        f"{entry['contradiction_wins']}, lost {entry['contradiction_losses']}",
    ]
    if entry.get("when_at") is not None:
        lines.append(f"{entry['when_kind']}: {_date(entry['when_at'], with_time=True)}")
    head, content = "\n".join(lines), entry["content"]
    if offset >= len(content) > 0:
        return f"{head}\n\n[offset {offset} is past the end: the text has {len(content)} characters]"
    room = max(budget - len(head) - PAGE_MARKER_CHARS, MIN_PAGE_CHARS)
    end = len(content) if len(content) - offset <= room else _break_before(content, offset + room, offset)
    text = content[offset:end]
    if offset or end < len(content):
        text = (f"[characters {offset + 1}-{end} of {len(content)}"
                + (f" · get(\"{entry['id']}\", offset={end}) for the rest]\n" if end < len(content) else "]\n")
                + text)
    return f"{head}\n\n{text}"


def _break_before(content: str, limit: int, start: int) -> int:
    """Where to cut `content` at or before `limit`: after the last line break, else space, in the window's last
    fifth; else at the limit."""
    floor = start + (limit - start) * 4 // 5
    for mark in ("\n", " "):
        at = content.rfind(mark, floor, limit)
        if at > start:
            return at + 1
    return limit


def render_timeline(page: dict[str, Any], budget: int | None = None) -> str:
    """The audit feed, one event a line, newest first, within the budget (a model's; a terminal has none), and how
    to go on."""
    items = page["timeline"]
    if not items:
        return "No events match." + (f"\nMore before this: cursor={page['next_cursor']}." if page["next_cursor"]
                                     is not None else "")
    lines: list[str] = []
    used = 0
    for item in items:
        stream = item["stream"]
        about = f"{stream['kind']} {stream['id']}" if stream["id"] else stream["kind"]
        line = (f"{_date(item['at'], with_time=True)} · {item['actor_name']} · {item['type']} · {about}"
                + (f" · {item['description']}" if item["description"] else ""))
        if budget is not None and lines and used + len(line) + 1 > budget - PAGE_MARKER_CHARS:
            shown = items[len(lines) - 1]
            return "\n".join([f"{len(lines)} of {len(items)} events, newest first (the rest did not fit this reply):",
                              *lines, f"More before this: cursor={shown['position']}."])
        lines.append(line)
        used += len(line) + 1
    head = f"{len(items)} event{'s' if len(items) > 1 else ''}, newest first:"
    tail = [f"More before this: cursor={page['next_cursor']}."] if page["next_cursor"] is not None else []
    return "\n".join([head, *lines, *tail])


def render_changes(page: dict[str, Any], budget: int) -> str:
    """What changed, newest first, one sentence a change: when, who, what, and the first words of the memory it is
    about (a memory since forgotten, or one the caller may no longer read, by its id alone)."""
    items, words = page["timeline"], page["first_words"]
    if not items:
        return "Nothing changed in that time."
    lines = []
    for item in items:
        stream = item["stream"]
        if stream["kind"] == "memory" and stream["id"] in words:  # its first words, shortened by the operation
            about = f" \u201c{words[stream['id']]}\u201d (memory {stream['id']})"
        elif stream["kind"] == "memory":
            about = f" memory {stream['id']}, since forgotten or out of your reach"
        elif stream["kind"] == "edge":
            about = ""  # the description names both memories
        else:
            about = f" {stream['kind']}" + (f" {stream['id']}" if stream["id"] else "")
        what = item["description"] or item["type"].replace("_", " ")
        lines.append(f"{moment(item['at'])}: {item['actor_name']}, {what}" + (f", on{about}." if about else "."))
    more = "" if page["next_cursor"] is None else "\n(more before these: call timeline with a cursor)"
    return _bounded(f"{len(items)} change{'s' if len(items) > 1 else ''}, newest first:", lines, budget,
                    ("change", "changes"), "call timeline for them") + more


def _block(number: int, item: dict[str, Any], label: str, content: str, truncated: bool, full_length: int,
           notes: str = "") -> str:
    tags = ", ".join(item["tags"])
    text = (f"[{number}] id: {item['id']}" + (f" · {label}" if label else "") + f" · {_date(item['created_at'])}"
            + (f" · tags: {tags}" if tags else ""))
    if STALE_TAG in item["tags"]:  # flagged by the nightly staleness pass: say so where a model reads it
        text += f" · true as of {_date(item.get('updated_at', item['created_at']))}, verify before asserting"
    text += ("\n" + notes if notes else "") + "\n" + content
    if truncated:
        text += f"\n[truncated · {full_length} chars total · get(\"{item['id']}\") for full text]"
    return text


def _bounded(head: str, blocks: list[str], budget: int, what: tuple[str, str] = ("match", "matches"),
             then: str = "narrow the query or use a smaller topK") -> str:
    """The head and as many whole blocks as fit the budget (always at least one), and a count of the rest (`what`
    they are, one and several, and what to do `then`)."""
    out, used = [head], len(head)
    for block in blocks:
        if len(out) > 1 and used + len(block) + 2 > budget:
            break
        out.append(block)
        used += len(block) + 2
    omitted = len(blocks) - (len(out) - 1)
    if omitted:
        out.append(f"{omitted} more {what[1] if omitted > 1 else what[0]} omitted to keep this reply short: {then}.")
    return "\n\n".join(out)


def _date(ms: int, with_time: bool = False) -> str:
    """A day (2026-12-11), or with its time: ISO 8601 in the brain's time zone."""
    return moment(ms) if with_time else datetime.fromtimestamp(ms / 1000, ZONE.get()).strftime("%Y-%m-%d")


def render_due(answer: dict[str, Any], budget: int) -> str:
    """What is due, one reminder a line: overdue first, then what comes up, soonest first."""
    zone = getattr(ZONE.get(), "key", str(ZONE.get()))
    groups = [("Overdue", answer["overdue"]), ("Coming up", answer["upcoming"])]
    if not any(items for _, items in groups):
        return f"Nothing is due or overdue in that window (times in {zone})."
    blocks = []
    for label, items in groups:
        for entry in sorted(items, key=lambda e: e["when_at"]):
            first = shorten(" ".join(entry["content"].split()), DUE_WORDS)
            blocks.append(f"{label}: {moment(entry['when_at'])} · {entry['when_kind']} · id: {entry['id']}\n{first}")
    counts = answer["counts"]
    return _bounded(f"{counts['overdue']} overdue, {counts['upcoming']} coming up (times in {zone}):", blocks,
                    budget, ("reminder", "reminders"), "ask for fewer days")


def agents_view(value: Any, key: str = "") -> Any:
    """An operation's answer as an agent reads it: times as ISO 8601 in the brain's time zone (never Unix ms), and
    REST's routes said as the tools to call."""
    if isinstance(value, dict):
        return {k: agents_view(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [agents_view(v, key) for v in value]
    if isinstance(value, str):
        return for_agents(value)
    timed = key in TIMES or key.endswith(("_at", "At"))
    if timed and isinstance(value, int) and not isinstance(value, bool) and value > 10**11:
        return moment(value)
    if key == "day" and isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**6:
        return (date(1970, 1, 1) + timedelta(days=value)).isoformat()  # the brief's days since 1970
    return value


def as_json(value: Any) -> str:
    return json.dumps(agents_view(value), ensure_ascii=False)
