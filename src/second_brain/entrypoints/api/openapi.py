"""What FastAPI cannot see for itself, written into the published schema: the JSON bodies json_body parses, the
query parameters read by hand, the error envelope under each documented status, and the links from an answer's ids
to the operations that take them."""

from typing import Any, Literal, TypedDict, Unpack

from pydantic import BaseModel, ConfigDict

from .schemas import IGNORED, INT64_RANGE, LAYER, MEMORY_ID, MOMENT, SLUG, TEAM_ID, TEXT


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
        schema = published(inline(body.model_json_schema()))
        extra["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
    return extra


def published(schema: dict[str, Any]) -> dict[str, Any]:
    """A body model's schema as the API reads it, at every level: a required field is never null (the domain
    refuses it as missing), an optional one's `null` is in its schema instead of pydantic's `default`, and unknown
    fields are ignored."""
    for name, field in schema.get("properties", {}).items():
        if field.get("default", ...) is None:
            del field["default"]
        if name in schema.get("required", ()) and "anyOf" in field:
            field["anyOf"] = [branch for branch in field["anyOf"] if branch != {"type": "null"}]
        for branch in (field, *field.get("anyOf", ())):
            published(branch)
    if "properties" in schema:
        schema.setdefault("additionalProperties", IGNORED)
    if isinstance(schema.get("items"), dict):
        published(schema["items"])
    return schema


def requiring(*names: str, **schema: Any) -> ConfigDict:
    """A body's config naming its required fields (the domain refuses them missing; the model parses them as
    optional, so its own message is the one a client sees) and any schema keywords across its fields."""
    return ConfigDict(extra="ignore", json_schema_extra={"required": list(names), **schema})


def inline(schema: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON Schema with its `$defs` written in place: an OpenAPI document has no room for them."""
    defs = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            return resolve(defs[node["$ref"].rsplit("/", 1)[1]]) if "$ref" in node else {
                key: resolve(value) for key, value in node.items()}
        return [resolve(item) for item in node] if isinstance(node, list) else node

    return resolve(schema)


class Limits(TypedDict, total=False):
    """The JSON Schema keywords a query parameter's schema takes here."""

    minimum: int
    maximum: int
    exclusiveMaximum: int
    default: int | str
    enum: list[str]
    pattern: str
    maxLength: int
    items: dict[str, Any]  # an array parameter's items


def query(name: str, description: str, kind: str = "string", required: bool = False,
          **limits: Unpack[Limits]) -> dict[str, Any]:
    """One query parameter; `limits` are JSON Schema keywords (minimum, maximum, default, enum, pattern)."""
    return {"name": name, "in": "query", "required": required, "description": description,
            "schema": {"type": kind, **limits}}


def moment_query(name: str, description: str) -> dict[str, Any]:
    """A time bound as the reference takes it (any whole number is Unix ms) or as every other time parameter of ours
    does (ISO 8601, or words such as "7d", read in the brain's TIMEZONE)."""
    return {"name": name, "in": "query", "required": False,
            "description": f"{description}: Unix ms, ISO 8601 or words such as \"7d\" or \"last week\"",
            "schema": {"anyOf": [{"type": "integer", **INT64_RANGE}, MOMENT]}}


def together(name: str, description: str, properties: dict[str, Any], required: bool = False,
             **rule: Any) -> dict[str, Any]:
    """Query parameters with a rule across them (`rule`: JSON Schema keywords such as anyOf), as one object
    parameter in form style: each property is still its own `name=value` in the query string."""
    return {"name": name, "in": "query", "required": required, "description": description, "style": "form",
            "explode": True, "schema": {"type": "object", "properties": properties, "additionalProperties": False,
                                        **rule}}


def link(path: str, method: str, description: str, parameters: dict[str, str] | None = None,
         body: dict[str, str] | None = None) -> dict[str, Any]:
    """An OpenAPI link to the operation at `path`: its parameters (and body fields) from runtime expressions on
    this answer, such as `$response.body#/id`."""
    ref = "#/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method
    found: dict[str, Any] = {"operationRef": ref, "description": description}
    if parameters:
        found["parameters"] = parameters
    if body:
        found["requestBody"] = body
    return found


def linked(status: int, description: str, links: dict[str, Any]) -> dict[int | str, dict[str, Any]]:
    """OpenAPI responses: the success answer with the links from it."""
    return {status: {"description": description, "links": links}}


def memory_links(pointer: str) -> dict[str, Any]:
    """Links from a memory id in an answer (`pointer`, e.g. `/id`) to every operation that takes one."""
    value = f"$response.body#{pointer}"
    by_query = {"Entry": "/entry", "Connections": "/connections", "Timeline": "/timeline"}
    by_body = {"Append": "/append", "Update": "/update", "Status": "/status", "Share": "/share",
               "Snooze": "/due/snooze", "ClearAnchor": "/due/clear", "ResolveLoop": "/loops/resolve",
               "Forget": "/forget"}  # not /patterns/resolve: only the nightly job makes a pattern
    return {**{name: link(path, "get", f"The memory at {path}", {"id": value}) for name, path in by_query.items()},
            "Graph": link("/graph", "get", "The graph around the memory", {"seed": value}),
            **{name: link(path, "post", f"The memory at {path}", body={"id": value}) for name, path in by_body.items()},
            "LinkFrom": link("/link", "post", "A link from the memory", body={"source_id": value}),
            "UnlinkFrom": link("/unlink", "post", "Its links to another memory", body={"source_id": value})}


AS_OF = query("as_of", "Answer as the brain would have at this moment: ISO 8601 (without an offset: the brain's "
              "TIMEZONE) or Unix ms; a future moment is now. Built from the event log; forgotten memories never "
              "appear", pattern=MOMENT["pattern"])
SCOPE = together("scope", "`workspace` restricts to one layer; `team` (an id from GET /team/workspaces) to one team "
                 "of the company layer, so it never goes with `workspace=personal`",
                 {"workspace": LAYER, "team": TEAM_ID},
                 anyOf=[{"properties": {"workspace": {"const": "company"}}}, {"not": {"required": ["team"]}}])
FILTERS = (SCOPE,
           query("tag", "Only entries carrying this exact tag"),
           moment_query("after", "Only entries created at/after this moment"),
           moment_query("before", "Only entries created at/before this moment"),
           query("kind", "`episodic` or `semantic`; anything else is ignored"),
           query("actor", "A roster name, user id, or `me`"),
           query("project", "A project slug; unknown: 404 with `known_projects`", pattern=SLUG["pattern"]))
FLAG: Limits = {"enum": ["0", "1", "true", "false", "yes", "no"]}
ID: Limits = {"pattern": MEMORY_ID["pattern"], "maxLength": MEMORY_ID["maxLength"]}  # a query parameter naming a memory
TEXT_QUERY: Limits = {"pattern": TEXT["pattern"]}
