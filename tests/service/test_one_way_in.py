"""One way in (issue 40, item 2), read from the source: every entry point (REST routes, MCP tools, the CLI, the
Lambda functions) translates its protocol and calls the application's operations; none imports an adapter, and
none reaches into the brain for one of its services."""

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from second_brain.app.brain import Brain

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src"
EDGES = [*sorted((SOURCE / "second_brain" / "entrypoints").rglob("*.py")), *sorted((ROOT / "functions").rglob("*.py"))]
# What an entry point may read off a brain: its settings, and what starts, stops and yields to it. Everything else
# on it is a service, reached through an operation.
NOT_SERVICES = {"settings", "foreground", "start", "close"}
SERVICES = {f.name for f in dataclasses.fields(Brain)} - NOT_SERVICES
# The REST app's bearer checks are made over the brain's log and team (authentication, before any operation).
COMPOSED_OVER_THE_BRAIN = {("entrypoints/api/app.py", "create_app")}
ROUTE_DECORATORS = {"get", "post", "patch", "delete", "put", "tool", "prompt", "resource"}
# Routes that are no operation: the dashboard's static files, and where to upload a backup too large for a request.
NOT_OPERATIONS = {("entrypoints/api/dashboard.py", "shell"), ("entrypoints/api/dashboard.py", "asset"),
                  ("entrypoints/api/transfer.py", "import_upload")}


def name(path: Path) -> str:
    return str(path.relative_to(SOURCE / "second_brain" if path.is_relative_to(SOURCE) else ROOT))


def module_of(path: Path) -> str:
    if not path.is_relative_to(SOURCE):
        return ""  # functions/*/app.py import the package by its absolute name
    return ".".join(path.relative_to(SOURCE).with_suffix("").parts)


def imported(path: Path, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every module a file imports, relative imports resolved against its package."""
    package = module_of(path).rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            yield node.lineno, base
            yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)


def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def is_brain(node: ast.AST) -> bool:
    """`brain`, `<anything>.brain` (request.app.state.brain, aws.brain) or `brain()` (a function's cached one)."""
    if isinstance(node, ast.Call):
        node = node.func
    return (isinstance(node, ast.Name) and node.id == "brain") or (isinstance(node, ast.Attribute)
                                                                    and node.attr == "brain")


def functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    yield from (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def test_the_guards_read_every_entry_point():
    names = {name(path) for path in EDGES}
    assert {"entrypoints/cli.py", "entrypoints/mcp/server.py", "entrypoints/api/team.py",
            "functions/mcp/app.py", "functions/maintenance/app.py"} <= names
    assert {"memories", "team", "push", "config", "transfer", "store"} <= SERVICES
    # The MCP tools sit one module per capability, as the REST routes do: the guard below reads each of them.
    assert {f"entrypoints/mcp/{capability}.py" for capability in MCP_TOOL_MODULES} <= {name(p) for p in ROUTE_MODULES}


@pytest.mark.parametrize("path", EDGES, ids=name)
def test_no_entry_point_imports_an_adapter(path):
    found = [f"line {line}: {module}" for line, module in imported(path, parsed(path))
             if module == "second_brain.adapters" or module.startswith("second_brain.adapters.")]
    assert not found, f"{name(path)} imports an adapter: ask the composition root (bootstrap.py, " \
                      f"aws/composition.py) or the application instead: {found}"


@pytest.mark.parametrize("path", EDGES, ids=name)
def test_no_entry_point_reaches_into_the_brain_for_a_service(path):
    found = []
    for function in functions(parsed(path)):
        if (name(path), function.name) in COMPOSED_OVER_THE_BRAIN:
            continue
        found += [f"line {node.lineno}: .{node.attr}" for node in ast.walk(function)
                  if isinstance(node, ast.Attribute) and node.attr in SERVICES and is_brain(node.value)]
    assert not found, f"{name(path)} calls a service of the brain directly: call an operation " \
                      f"(app/operations/) instead: {sorted(set(found))}"


def handlers(path: Path) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The REST routes and MCP tools a module declares (functions decorated `@<router>.get(...)`, `@mcp.tool(...)`)."""
    for function in functions(parsed(path)):
        for decorator in function.decorator_list:
            call = decorator.func if isinstance(decorator, ast.Call) else decorator
            if isinstance(call, ast.Attribute) and call.attr in ROUTE_DECORATORS:
                yield function
                break


def operations_named(function: ast.AST) -> set[str]:
    """The operations a function names: `ops.<name>`."""
    return {node.attr for node in ast.walk(function)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ops"}


def other_application_names(path: Path) -> set[str]:
    """The names a module imports from the application other than its operations and constants (`as_of_ops`,
    `run_now`, ...)."""
    names = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.ImportFrom):
            base = next(module for _, module in imported(path, ast.Module([node], [])))
            names |= {alias.asname or alias.name for alias in node.names
                      if not (alias.asname or alias.name).isupper()  # constants: limits a schema names
                      and f"{base}.{alias.name}".startswith("second_brain.app.")
                      and not f"{base}.{alias.name}".startswith("second_brain.app.operations")}
    return names


def called_around_operations(function: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str]) -> set[str]:
    """Application functions a route uses itself (`as_of_ops.recall`, `answer`), not through an operation."""
    used = (node for statement in function.body for node in ast.walk(statement))
    return {ast.unparse(node) for node in used
            if (isinstance(node, ast.Name) and node.id in names) or (
                isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names)}


ROUTE_MODULES = [p for p in EDGES if any(True for _ in handlers(p))]
# The MCP modules that declare tools, each named as the REST module holding the routes that do the same.
MCP_TOOL_MODULES = ("memories", "timeline", "conflicts", "team", "projects", "links")


@pytest.mark.parametrize("path", ROUTE_MODULES, ids=name)
def test_every_route_and_tool_calls_exactly_one_operation(path):
    others = other_application_names(path)
    wrong = {}
    for function in handlers(path):
        called = operations_named(function)
        around = called_around_operations(function, others)
        if (name(path), function.name) not in NOT_OPERATIONS and (len(called) != 1 or around):
            wrong[function.name] = sorted(f"ops.{op}" for op in called) + sorted(around)
    assert not wrong, f"{name(path)}: each route or tool calls one operation (ops.<name>), these do not: {wrong}"
