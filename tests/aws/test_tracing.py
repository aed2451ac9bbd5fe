"""X-Ray keeps no URL or body of an outbound call (issue 66 item 3): every function's Tracer patches the AWS SDK
only. Powertools' default patches httpx and requests too, whose subsegments keep each call's URL for 30 days: a
calendar's secret feed address, a Notion page, a push endpoint."""

import ast
from pathlib import Path

import pytest

from second_brain.aws.tracing import TRACED

FUNCTIONS = sorted((Path(__file__).resolve().parents[2] / "functions").glob("*/app.py"))


def tracers(path: Path) -> list[ast.Call]:
    return [node for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Tracer"]


def test_the_traced_libraries_are_the_aws_sdk_alone():
    assert TRACED == ("botocore",)


@pytest.mark.parametrize("path", FUNCTIONS, ids=lambda path: path.parent.name)
def test_each_function_traces_only_the_aws_sdk(path):
    found = tracers(path)
    assert found, f"{path} makes no Tracer"
    for call in found:
        patched = {k.arg: k.value for k in call.keywords}.get("patch_modules")
        assert isinstance(patched, ast.Name) and patched.id == "TRACED", ast.unparse(call)
