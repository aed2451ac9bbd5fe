"""A tool's rejected arguments as one sentence an agent can act on: which argument, what rule, what it sent.

The SDK checks arguments against the tool's schema with pydantic and would answer with pydantic's own report
("1 validation error for rememberArguments ... For further information visit https://errors.pydantic.dev").
"""

import json
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
