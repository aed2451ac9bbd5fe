"""A tool's rejected arguments as one sentence an agent can act on: which argument, what rule, what it sent.

The SDK checks arguments against the tool's schema with pydantic and would answer with pydantic's own report
("1 validation error for rememberArguments ... For further information visit https://errors.pydantic.dev").
"""

import difflib
import json
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

TYPES = {"string_type": "a string", "int_type": "a whole number", "int_parsing": "a whole number",
         "int_from_float": "a whole number", "bool_type": "true or false", "bool_parsing": "true or false",
         "list_type": "a list of strings", "float_type": "a number", "float_parsing": "a number",
         "dict_type": "an object"}


def argument_errors(tool: str, error: ValidationError) -> str:
    """`<tool>: <argument> <rule> (got <value>).`, one clause per argument, in the order they were checked."""
    clauses: dict[str, str] = {}
    for item in error.errors():
        if not item["loc"]:
            continue
        name = str(item["loc"][0])
        clause = _clause(item)
        if name in clauses:  # an argument of several accepted types fails each: say them together
            clauses[name] = _either(clauses[name], clause)
        else:
            clauses[name] = clause
    said = " ".join(f"{name} {clause}." for name, clause in clauses.items())
    return f"{tool}: {said}" if said else f"{tool}: the arguments do not match the tool's schema."


def _clause(item: Any) -> str:
    kind, context, given = item["type"], item.get("ctx") or {}, item.get("input")
    if kind == "missing":
        return "is required"
    if kind == "literal_error":
        allowed = ", ".join(json.dumps(value) for value in _expected(context.get("expected", "")))
        return f"must be one of {allowed} (got {_shown(given)})"
    if kind in ("greater_than_equal", "greater_than"):
        return f"must be at least {context.get('ge', context.get('gt'))} (got {_shown(given)})"
    if kind in ("less_than_equal", "less_than"):
        return f"must be at most {context.get('le', context.get('lt'))} (got {_shown(given)})"
    if kind in TYPES:
        return f"must be {TYPES[kind]} (got {_shown(given)})"
    return f"is not valid: {item['msg'][:1].lower()}{item['msg'][1:]} (got {_shown(given)})"


def _either(first: str, second: str) -> str:
    """Two "must be X (got v)" clauses for one argument as "must be X or Y (got v)"."""
    head, _, got = first.partition(" (got ")
    other = second.partition(" (got ")[0].removeprefix("must be ")
    return f"{head} or {other} (got {got}" if got and other not in head else first


def _expected(text: str) -> list[str]:
    """pydantic's "'episodic' or 'semantic'" / "'a', 'b' or 'c'" as the values."""
    return [part.strip().strip("'") for part in text.replace(" or ", ", ").split(",") if part.strip()]


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


# What agents call an argument under another tool's or API's name, and the one it means here (the first of each
# list the tool takes): recall's `limit` is its `topK`, list_recent's is its `n`.
SYNONYMS = {
    "limit": ("topK", "n"), "top_k": ("topK", "n"), "k": ("topK", "n"), "count": ("topK", "n"),
    "max_results": ("topK", "n", "limit"), "size": ("topK", "n", "limit"), "num_results": ("topK", "n"),
    "text": ("content", "query", "addition"), "note": ("content", "addition"), "memory": ("content", "id"),
    "body": ("content",), "q": ("query",), "search": ("query",), "question": ("query",),
    "memory_id": ("id", "source_id"), "memoryId": ("id", "source_id"), "uuid": ("id",),
    "from_id": ("source_id",), "to_id": ("target_id",), "source": ("source_id", "source"),
    "target": ("target_id",), "relation": ("type",), "link_type": ("type",),
    "tag_list": ("tags",), "labels": ("tags",), "label": ("tag",),
    "due": ("when",), "date": ("when", "until"), "remind_at": ("when",), "time": ("when", "until"),
    "since": ("after",), "from": ("after",), "until": ("before", "until"), "to": ("before",),
    "at": ("as_of", "when"), "asof": ("as_of",), "snooze_until": ("until",), "days_ahead": ("days",),
    "priority": ("importance",), "status_value": ("status",),
}


def unknown_arguments(tool: str, sent: Iterable[str], known: Iterable[str]) -> str | None:
    """`<tool>: unknown argument <name> (did you mean <closest>?).` for each argument the tool does not take, or
    None when it takes them all."""
    known = list(known)
    clauses = []
    for name in (n for n in sent if n not in known):
        meant = next((k for k in SYNONYMS.get(name, ()) if k in known), None)
        if meant is None:
            folded = {k.lower().replace("_", ""): k for k in known}
            close = difflib.get_close_matches(name.lower().replace("_", ""), list(folded), n=1, cutoff=0.6)
            meant = folded[close[0]] if close else None
        shown = _shown(name)[1:-1] if len(name) <= 40 else _shown(name[:37] + "...")[1:-1]
        clauses.append(f"unknown argument {shown} (did you mean {meant}?)" if meant else
                       f"unknown argument {shown} (it takes: {', '.join(known) or 'no arguments'})")
    return f"{tool}: {'; '.join(clauses)}." if clauses else None
