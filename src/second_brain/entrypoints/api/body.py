"""JSON bodies parsed whatever the Content-Type says (curl -d sends form encoding), into pydantic models."""

import json
import re
from decimal import Decimal
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ConfigDict, ValidationError

from ...app.operations import int64
from ...domain.errors import InvalidInput, TooLarge
from ...domain.text import INT64, MAX_CONTENT_CHARS, read_int, shorten

# Room for the largest allowed content, JSON-escaped, plus its tags and fields.
MAX_BODY_BYTES = 8 * MAX_CONTENT_CHARS + 64 * 1024
MAX_DEPTH = 32  # no body needs more; json.loads would recurse past Python's limit at about 1,000
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON can escape one ("\ud800"); UTF-8 cannot encode it

Model = TypeVar("Model", bound=BaseModel)


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


async def json_object(request: Request, max_bytes: int = MAX_BODY_BYTES) -> dict[str, Any]:
    """The request body as a JSON object, whatever the Content-Type; 400 if it is not one, 413 if too big."""
    return parse_object(await read_body(request, max_bytes))


async def read_body(request: Request, max_bytes: int) -> bytearray:
    """The raw body; 413 as soon as it passes `max_bytes`."""
    raw = bytearray()
    async for chunk in request.stream():
        raw.extend(chunk)
        if len(raw) > max_bytes:
            raise TooLarge(f"Request body too large: at most {max_bytes} bytes")
    return raw


def parse_object(raw: bytes | bytearray) -> dict[str, Any]:
    """A body as a JSON object (400 if it is not one), every value checked."""
    try:
        data = json.loads(raw, parse_int=read_int, parse_float=read_number,
                          parse_constant=_no_constant) if raw.strip() else {}
    except RecursionError:
        raise InvalidInput(f"Invalid JSON body: nested more than {MAX_DEPTH} levels deep") from None
    except (UnicodeDecodeError, ValueError):
        raise InvalidInput("Invalid JSON body") from None
    if not isinstance(data, dict):
        raise InvalidInput("Invalid JSON body: expected a JSON object")
    check_values(data)
    return data


def read_number(literal: str) -> int | float:
    """A number written with a fraction or an exponent: an integer when its value is one that fits in 64 bits, as
    JSON and the schema's `integer` read it (5.0 is 5), else a float as before."""
    value = Decimal(literal)
    if value.is_zero():
        return 0
    if value.adjusted() < 19 and value == value.to_integral_value() and INT64[0] <= value <= INT64[1]:
        return int(value)
    return float(literal)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def check_values(data: dict[str, Any]) -> None:
    """Refuse, naming the field, what would break further in: deep nesting, lone surrogates, integers past
    64 bits."""
    pending: list[tuple[Any, str, int]] = [(data, "", 0)]
    while pending:
        value, path, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise InvalidInput(f"Invalid JSON body: nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, str) and LONE_SURROGATE.search(value):
            raise InvalidInput(f"Invalid {path}: not valid Unicode text (a lone surrogate)")
        if isinstance(value, int) and not isinstance(value, bool):
            int64(value, path)
        if isinstance(value, dict):
            for key, item in value.items():
                if LONE_SURROGATE.search(key):
                    raise InvalidInput("Invalid JSON body: a field name is not valid Unicode text")
                pending.append((item, f"{path}.{shorten(key)}" if path else shorten(key), depth + 1))
        elif isinstance(value, list):
            pending.extend((item, f"{path}.{index}", depth + 1) for index, item in enumerate(value))


def json_body(model: type[Model]) -> Any:
    """A dependency that reads the request body as a JSON object and validates it as `model`."""

    async def parse(request: Request) -> Model:
        data = await json_object(request)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"])
            raise InvalidInput(f"Invalid {field}: {first['msg']}") from None

    return parse
