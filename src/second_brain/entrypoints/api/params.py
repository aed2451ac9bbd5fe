"""Query-string parameters parsed the reference's way: strict integers, clamped ranges."""

import re
from typing import overload

from starlette.datastructures import QueryParams

from ...app.operations import int64
from ...domain.errors import InvalidInput
from ...domain.text import read_int

INTEGER = re.compile(r"^[+-]?\d+$")
TRUTHY = ("1", "true", "yes")


@overload
def int_param(params: QueryParams, name: str, default: int, low: int | None = None,
              high: int | None = None) -> int: ...
@overload
def int_param(params: QueryParams, name: str, default: None, low: int | None = None,
              high: int | None = None) -> int | None: ...
def int_param(params: QueryParams, name: str, default: int | None, low: int | None = None,
              high: int | None = None) -> int | None:
    """Malformed integers are rejected (400); out-of-range ones are clamped, unless past 64 bits (400 too)."""
    raw = (params.get(name) or "").strip()
    if not raw:
        return default
    if not INTEGER.match(raw):
        raise InvalidInput(f"{name} must be an integer")
    value = int64(read_int(raw), name)
    if low is not None:
        value = max(low, value)
    if high is not None:
        value = min(high, value)
    return value


def flag_param(params: QueryParams, name: str) -> bool:
    return params.get(name, "").strip().lower() in TRUTHY


def text_param(params: QueryParams, name: str) -> str | None:
    value = params.get(name)
    return value.strip() if value and value.strip() else None
