"""GET /openapi.json: public, and it describes the bodies, parameters and error responses the routes really take."""

import httpx
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
