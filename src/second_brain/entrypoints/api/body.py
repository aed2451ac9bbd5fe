"""JSON bodies parsed whatever the Content-Type says (curl -d sends form encoding), into pydantic models."""

import json
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ConfigDict, ValidationError

from ...domain.errors import InvalidInput, TooLarge
from ...domain.text import MAX_CONTENT_CHARS

# Room for the largest allowed content, JSON-escaped, plus its tags and fields.
MAX_BODY_BYTES = 8 * MAX_CONTENT_CHARS + 64 * 1024


Model = TypeVar("Model", bound=BaseModel)


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


async def json_object(request: Request, max_bytes: int = MAX_BODY_BYTES) -> dict[str, Any]:
    """The request body as a JSON object, whatever the Content-Type; 400 if it is not one, 413 if too big."""
    raw = bytearray()
    async for chunk in request.stream():
        raw.extend(chunk)
        if len(raw) > max_bytes:
            raise TooLarge(f"Request body too large: at most {max_bytes} bytes")
    try:
        data = json.loads(raw) if raw.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InvalidInput("Invalid JSON body") from None
    if not isinstance(data, dict):
        raise InvalidInput("Invalid JSON body: expected a JSON object")
    return data


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
