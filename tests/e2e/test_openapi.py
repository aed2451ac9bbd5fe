"""GET /openapi.json: public, and it describes the bodies, parameters and error responses the routes really take."""

import re

import httpx
import jsonschema_rs
import pytest


@pytest.fixture
def schema(server) -> dict:
    answer = httpx.get(server.url + "/openapi.json")  # no token: like GET /
    assert answer.status_code == 200
    return answer.json()


def operation(schema: dict, method: str, path: str) -> dict:
    return schema["paths"][path][method]


def test_every_route_is_described_with_its_auth_and_errors(schema):
    operations = [(m, p, op) for p, ops in schema["paths"].items() for m, op in ops.items()]
    assert len(operations) >= 30
    assert schema["components"]["securitySchemes"]["bearer"] == {
        "type": "http", "scheme": "bearer",
        "description": "The owner's token (BRAIN_AUTH_TOKEN) or a member's token (POST /team/members)."}
    envelope = {"$ref": "#/components/schemas/ErrorBody"}
    for method, path, op in operations:
        assert op["security"] == [{"bearer": []}], (method, path)
        assert op["responses"]["401"]["content"]["application/json"]["schema"] == envelope, (method, path)
        assert "422" not in op["responses"], (method, path)  # invalid input is a 400 here
    assert set(schema["components"]["schemas"]["ErrorBody"]["required"]) == {"ok", "error"}


def test_json_bodies_are_declared(schema):
    capture = operation(schema, "post", "/capture")["requestBody"]["content"]["application/json"]["schema"]
    assert {"content", "tags", "source", "workspace", "volatility", "project", "when", "when_kind"} <= set(
        capture["properties"])
    imported = operation(schema, "post", "/import")["requestBody"]["content"]["application/json"]["schema"]
    assert "$ref" not in str(imported) and "entries" in imported["properties"]
    for method, path in [("post", "/append"), ("post", "/link"), ("patch", "/projects/{slug}"), ("post", "/chat"),
                         ("patch", "/config")]:
        assert "application/json" in operation(schema, method, path)["requestBody"]["content"], (method, path)
    assert "text/event-stream" in operation(schema, "post", "/chat")["responses"]["200"]["content"]


def test_query_parameters_carry_their_limits(schema):
    def params(path: str, method: str = "get") -> dict:
        return {p["name"]: p for p in operation(schema, method, path)["parameters"]}

    assert params("/list")["n"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
    recall = params("/recall")
    assert recall["query"]["required"] and recall["topK"]["schema"]["maximum"] == 20
    assert recall["hops"]["schema"] == {"type": "integer", "minimum": 0, "maximum": 3}
    assert params("/import", "post")["limit"]["schema"]["maximum"] == 1000
    assert params("/loops")["offset"]["schema"]["minimum"] == 0
    assert params("/connections")["id"]["required"]


def body_schema(schema: dict, method: str, path: str) -> dict:
    return operation(schema, method, path)["requestBody"]["content"]["application/json"]["schema"]


def test_bodies_carry_the_rules_the_api_enforces(schema):
    capture = body_schema(schema, "post", "/capture")
    assert capture["required"] == ["content"]
    assert capture["properties"]["content"] == {"type": "string", "pattern": r"\S", "maxLength": 200_000,
                                                "title": "Content"}
    tags = capture["properties"]["tags"]["anyOf"][0]
    assert tags["maxItems"] == 64 and tags["items"]["maxLength"] == 128
    assert capture["properties"]["volatility"]["anyOf"][0] == {"enum": ["durable", "state", "volatile"]}
    status = body_schema(schema, "post", "/status")
    assert status["required"] == ["id", "status"] and status["properties"]["status"]["enum"] == [
        "canonical", "draft", "deprecated"]
    memory_id = status["properties"]["id"]
    assert memory_id["maxLength"] == 128 and re.fullmatch(memory_id["pattern"], "5b0c7a52-3f1e-4d7a-9a61-0d2f4c1e8b10")
    assert not re.search(memory_id["pattern"], " padded") and not re.search(memory_id["pattern"], "")
    slug = {p["name"]: p for p in operation(schema, "patch", "/projects/{slug}")["parameters"]}["slug"]
    assert slug["schema"]["pattern"] == "^[a-z0-9][a-z0-9_-]{0,63}$"
    settings = body_schema(schema, "patch", "/config")
    assert settings["additionalProperties"] is False
    assert settings["properties"]["DEFAULT_HOPS"] | {"description": ""} == {
        "type": "integer", "minimum": 0, "maximum": 3, "description": ""}
    assert "Europe/Berlin" in settings["properties"]["TIMEZONE"]["enum"]


def test_moments_are_the_ones_the_api_reads(schema):
    """`when`, `until`, `as_of`, `after`, `before`: Unix ms, an ISO date or datetime that exists, or the words every
    time parameter reads (issue 63)."""
    moment = {p["name"]: p for p in operation(schema, "get", "/entry")["parameters"]}["as_of"]["schema"]["pattern"]
    for read in ("2026-12-03", "2024-02-29", "2026-12-03T09:30", "2026-12-03 09:30:15.25+01:00", "2026-12-03T09Z",
                 "1733000000000", "tomorrow", "tomorrow at 10", "friday at 9", "friday at 9:30 pm", "7d", "3 days ago",
                 "in 2 weeks", "last week", "this month", "now"):
        assert re.fullmatch(moment, read), read
    for refused in ("2026-02-29", "2026-02-30", "1900-02-29", "0000-01-01", "2026-12-03t09:30", "2026-12-03T24:00",
                    "2026-12-03T09:30:60", "1733000000", "soon", "tomorrow at 25", "friday at 13pm", "7 parsecs"):
        assert not re.fullmatch(moment, refused), refused


def test_links_lead_from_answers_to_the_operations_that_take_their_ids(schema):
    captured = operation(schema, "post", "/capture")["responses"]["200"]["links"]
    assert captured["Entry"] == {"operationRef": "#/paths/~1entry/get", "description": "The memory at /entry",
                                 "parameters": {"id": "$response.body#/id"}}
    assert {"Append", "Update", "Forget", "Status", "Share", "Connections", "Timeline", "LinkFrom"} <= set(captured)
    created = operation(schema, "post", "/projects")["responses"]["201"]["links"]
    assert created["Update"]["operationRef"] == "#/paths/~1projects~1{slug}/patch"
    assert created["Update"]["parameters"] == {"slug": "$response.body#/project/id"}
    for path, method, op in ((p, m, o) for p, ops in schema["paths"].items() for m, o in ops.items()):
        for status, response in op["responses"].items():
            for name, found in response.get("links", {}).items():
                where = (method, path, status, name)
                target_path, target_method = found["operationRef"].removeprefix("#/paths/").rsplit("/", 1)
                target = operation(schema, target_method, target_path.replace("~1", "/").replace("~0", "~"))
                assert set(found.get("parameters", {})) <= {p["name"] for p in target.get("parameters", [])}, where
                fields = target.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
                assert set(found.get("requestBody", {})) <= set(fields.get("properties", {})), where


@pytest.mark.parametrize(("path", "body", "valid"), [
    ("/capture", {"content": "Planning #offsite", "tags": ["PROJECT:Offsite-2027"]}, True),
    ("/capture", {"content": "x", "tags": ["project:not a slug"]}, False),
    ("/capture", {"content": "  \n "}, False),
    ("/capture", {"content": "x", "workspace": "personal", "team": "company"}, False),
    ("/capture", {"content": "x", "workspace": "personal", "team": None}, True),
    ("/capture", {"content": "x", "when_kind": "due"}, False),
    ("/capture", {"content": "Dentist", "when": "2027-03-01", "when_kind": "event"}, True),
    ("/capture", {"content": "x", "when": 1_733_000_000}, False),  # Unix seconds
    ("/capture", {"content": "x", "when": 1_733_000_000_000.0}, True),  # JSON's 5.0 is 5
    ("/projects", {"name": "!!!"}, False),  # no slug can be made from it
    ("/projects", {"name": "!!!", "id": "bangs"}, True),
    ("/projects", {"name": "Offsite", "aliases": ["Status:done"]}, False),
    ("/team/members", {"name": "Zoë Ärger"}, True),
    ("/team/members", {"name": "Zero\u200bWidth"}, False),
    ("/team/members", {"name": "ME"}, False),
    ("/team/members/default-share", {"id": "owner", "default": "inherit"}, False),
    ("/team/members/default-share", {"id": "m-0123456789abcdef", "default": "inherit"}, True),  # no such member
])
def test_the_schema_and_the_api_agree_on_what_is_valid(schema, api, path, body, valid):
    validator = jsonschema_rs.validator_for(body_schema(schema, "post", path))
    assert validator.is_valid(body) == valid
    answer = api.post(path, json=body)
    assert (answer.status_code != 400) == valid, answer.text
