"""The MCP function over the AWS composition root (issue 40, item 2): the brain and the app are built once per
container, not per invocation, and a memory captured through the API is recalled through /mcp."""

import copy
import json

from tests.aws.test_lambda_paths import CONTEXT, EVENTS, TOKEN, aws, call, load, project  # noqa: F401 (fixture)


def tool(mcp, name: str, arguments: dict) -> dict:
    event = json.loads((EVENTS / "function-url-mcp.json").read_text())
    event["headers"]["authorization"] = f"Bearer {TOKEN}"
    event["body"] = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                "params": {"name": name, "arguments": arguments}})
    response = mcp.handler(copy.deepcopy(event), CONTEXT)
    assert response["statusCode"] == 200, response
    return json.loads(response["body"])["result"]


def test_the_mcp_function_builds_its_brain_and_app_once_per_container(aws):  # noqa: F811
    call(aws.api, "POST", "/capture", {"content": "The kayak club meets on Thursdays at the boathouse"})
    project(aws)
    mcp = load("mcp")
    for _ in range(3):
        found = tool(mcp, "recall", {"query": "when does the kayak club meet"})
        assert "Thursdays at the boathouse" in found["content"][0]["text"]
    assert (mcp.brain.cache_info().misses, mcp.app.cache_info().misses, mcp.app.cache_info().hits) == (1, 1, 2)
