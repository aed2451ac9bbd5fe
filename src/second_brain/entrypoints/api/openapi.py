"""What FastAPI cannot see for itself, written into the published schema: the JSON bodies json_body parses,
the query parameters read by hand, and the error envelope under each documented status."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class ErrorBody(BaseModel):
    """The envelope of every failure; some carry more fields (`code`, `known_projects`)."""

    model_config = ConfigDict(extra="allow")
    ok: Literal[False]
    error: str


ERRORS = {400: "Missing or invalid input, or an invalid JSON body", 401: "Missing or unknown bearer token",
          403: "The identity lacks the required role", 404: "No such entry or project in scope",
          409: "Conflicts with what exists", 413: "Request body too large",
          503: "A backing store or model is unavailable"}


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI responses: the error envelope under each status a route documents, 401 always."""
    return {status: {"model": ErrorBody, "description": ERRORS[status]} for status in (401, *statuses)}


def documented(body: type[BaseModel] | None = None, *params: dict[str, Any]) -> dict[str, Any]:
    """openapi_extra for what FastAPI cannot see: the JSON body json_body parses, the query parameters read by hand."""
    extra: dict[str, Any] = {"parameters": list(params)} if params else {}
    if body is not None:
        schema = inline(body.model_json_schema())
        extra["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
    return extra


def inline(schema: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON Schema with its `$defs` written in place: an OpenAPI document has no room for them."""
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            return resolve(defs[node["$ref"].rsplit("/", 1)[1]]) if "$ref" in node else {
                key: resolve(value) for key, value in node.items()}
        return [resolve(item) for item in node] if isinstance(node, list) else node

    return resolve(schema)


def query(name: str, description: str, kind: str = "string", required: bool = False, **limits: Any) -> dict[str, Any]:
    """One query parameter; `limits` are JSON Schema keywords (minimum, maximum, default, enum)."""
    return {"name": name, "in": "query", "required": required, "description": description,
            "schema": {"type": kind, **limits}}


FILTERS = (query("workspace", "Restrict to one layer", enum=["personal", "company"]),
           query("team", "With workspace=company, one team (an id from GET /team/workspaces)"),
           query("tag", "Only entries carrying this exact tag"),
           query("after", "Only entries created at/after this Unix ms timestamp", "integer"),
           query("before", "Only entries created at/before this Unix ms timestamp", "integer"),
           query("kind", "`episodic` or `semantic`"),
           query("actor", "A roster name, user id, or `me`"),
           query("project", "A project slug; unknown: 404 with `known_projects`"))
AS_OF = query("as_of", "Answer as the brain would have at this moment: ISO 8601 (without an offset: the brain's "
              "TIMEZONE) or Unix ms; a future moment is now. Built from the event log; forgotten memories never "
              "appear")
FLAG = {"enum": ["0", "1", "true", "false", "yes", "no"]}
