"""Imports go down, everywhere (issue 59, item 5), read from the source: no module reaches, by any chain of
imports, back to itself. A circle of imports means no module in it can be understood, tested or moved without the
others, and in Python it turns into an ImportError the day one of them is imported first from a new place.

The graph is file to file. Python (src/second_brain, functions/, bench/, tools/) is parsed, not imported: every
`import` and `from ... import`, relative ones resolved against their package, the ones inside functions and
`if TYPE_CHECKING:` too (a lazy import hides a circle from the interpreter, not from the design). `from p import x`
is an import of the module p.x when there is one, else of p; a package stands for its __init__. The dashboard's
ES modules (dashboard/**/*.js) are read with regular expressions: `import ... from`, bare `import`, `export ...
from` and `import()` of a literal path, relative paths resolved against the importing file; an `import()` of a
template (the router's `import(`./views/${name}.js`)`) imports every file its pattern matches.

A strongly connected component of more than one module is a circle; the failure names each one as a path of
imports (with the line of each) and the modules caught up in it.
"""

import ast
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON_ROOTS = (ROOT / "src", ROOT)  # where module names start: src/ for the package, the repository for the rest
PYTHON_TREES = (ROOT / "src" / "second_brain", ROOT / "functions", ROOT / "bench", ROOT / "tools")
DASHBOARD = ROOT / "dashboard"

Graph = Mapping[str, Mapping[str, int | str]]  # module -> {imported module: first line importing it (or where)}

JS_FROM = re.compile(r"""\b(?:import|export)\s+[^'"`;()]*?\bfrom\s*(['"])([^'"\n]+)\1""")
JS_BARE = re.compile(r"""\bimport\s*(['"])([^'"\n]+)\1""")
JS_DYNAMIC = re.compile(r"""\bimport\s*\(\s*(['"`])([^'"`$\n]+)\1\s*\)""")
JS_TEMPLATE = re.compile(r"""\bimport\s*\(\s*`([^`$\n]*)\$\{[^}`]*\}([^`$\n]*)`\s*\)""")  # one ${}: a glob


# -- Python -------------------------------------------------------------------------------------------------------

def python_modules() -> dict[str, Path]:
    """Every Python file of the trees by its module name (a package's __init__ by the package's name)."""
    found: dict[str, Path] = {}
    for tree in PYTHON_TREES:
        for path in sorted(tree.rglob("*.py")) if tree.is_dir() else ():
            base = next(root for root in PYTHON_ROOTS if path.is_relative_to(root))
            parts = path.relative_to(base).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def python_imports(module: str, path: Path, modules: Mapping[str, Path]) -> Iterator[tuple[str, int]]:
    """Each of our modules the file imports, with its line: for `from p import x`, the module p.x when there is
    one, else p (x is a name p defines); outside modules (the standard library, packages) are left out."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            named = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            named = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for name in named:
            if (target := _known(name, modules)) is not None:
                yield target, node.lineno


def python_graph() -> dict[str, dict[str, int]]:
    modules = python_modules()
    graph: dict[str, dict[str, int]] = {module: {} for module in modules}
    for module, path in modules.items():
        for target, line in python_imports(module, path, modules):
            if target != module:
                graph[module].setdefault(target, line)
    return graph


def _known(name: str, modules: Mapping[str, Path]) -> str | None:
    """The module `name` is, or the innermost one it is inside (`p.x` for a function x of p: p)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


# -- The dashboard's ES modules -------------------------------------------------------------------------------------

def dashboard_graph() -> dict[str, dict[str, int]]:
    files = {path for path in DASHBOARD.rglob("*.js") if "vendor" not in path.relative_to(DASHBOARD).parts}
    names = {path: path.relative_to(ROOT).as_posix() for path in files}
    graph: dict[str, dict[str, int]] = {names[path]: {} for path in files}
    for path in sorted(files):
        text = path.read_text()
        for pattern in (JS_FROM, JS_BARE, JS_DYNAMIC):
            for match in pattern.finditer(text):
                target = _relative(names[path], match.group(2))
                if target is not None and target in graph and target != names[path]:
                    graph[names[path]].setdefault(target, text.count("\n", 0, match.start(2)) + 1)
        for match in JS_TEMPLATE.finditer(text):  # `./views/${name}.js`: every file of views/ ending .js
            head, tail = _relative(names[path], match.group(1) + "x"), match.group(2)
            for target in sorted(graph) if head is not None else ():
                if target.startswith(head[:-1]) and target.endswith(tail) and target != names[path]:
                    graph[names[path]].setdefault(target, text.count("\n", 0, match.start(1)) + 1)
    return graph


def _relative(importer: str, specifier: str) -> str | None:
    """`./x.js` or `../x.js` against the importing file; anything else (a URL, a bare name) is not ours."""
    if not specifier.startswith(("./", "../")):
        return None
    parts: list[str] = []
    for part in (PurePosixPath(importer).parent / specifier.split("?")[0].split("#")[0]).parts:
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


# -- Circles --------------------------------------------------------------------------------------------------------

def components(graph: Graph) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (a deep chain of imports must not hit the recursion
    limit); only those of more than one module, each sorted, in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in graph:
                    continue
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        found.append(sorted(members))
    return sorted(found)


def shortest_circle(graph: Graph, members: Iterable[str]) -> list[str]:
    """The shortest path of imports from the component's first module back to itself, inside the component."""
    inside = set(members)
    start = min(inside)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph[node]):
            if successor == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if successor in inside and successor not in came_from:
                came_from[successor] = node
                queue.append(successor)
    raise AssertionError(f"no circle through {start}")  # a component of more than one module always has one


def describe(graph: Graph) -> str:
    """Each circle as `a → b (line n of a) → a`, with the other modules caught up in the same component."""
    lines = []
    for members in components(graph):
        circle = shortest_circle(graph, members)
        steps = " → ".join(f"{b} ({where(graph, a, b)})" for a, b in zip(circle, circle[1:], strict=False))
        lines.append(f"  {circle[0]} → {steps}")
        if len(members) > len(circle) - 1:
            lines.append(f"    and, in the same circle: {', '.join(m for m in members if m not in circle)}")
    return "\n".join(lines)


def where(graph: Graph, a: str, b: str) -> str:
    at = graph[a][b]
    return at if isinstance(at, str) else f"line {at} of {a}"


def _fails_on_circles(graph: Graph, what: str) -> None:
    if circles := describe(graph):
        pytest.fail(f"{what} import each other in a circle; move what both need into a module below them "
                    f"(imports go down):\n{circles}", pytrace=False)


# -- The tests ------------------------------------------------------------------------------------------------------

def test_python_modules_import_in_no_circle():
    _fails_on_circles(python_graph(), "These Python modules")


def test_dashboard_modules_import_in_no_circle():
    _fails_on_circles(dashboard_graph(), "These dashboard modules")


def test_the_graphs_are_read():
    """The checks above pass on an empty graph too: this one proves the imports are found and resolved."""
    python = python_graph()
    assert "second_brain.app.brain" in python["second_brain.app.operations.recall"]  # `from ..brain import Brain`
    assert "second_brain.app.past.as_of" in python["second_brain.app.operations.recall"]  # `from ..past import as_of`
    assert "second_brain.entrypoints.api.app" in python["functions.api.app"]
    assert "second_brain" not in python["second_brain.app.operations.recall"]  # not every parent package
    dashboard = dashboard_graph()
    assert "dashboard/app.js" in dashboard["dashboard/views/home.js"]
    assert "dashboard/views/home.js" in dashboard["dashboard/shell.js"]  # the router's import(`./views/${name}.js`)


def test_a_circle_is_named_with_its_lines():
    graph = {"a": {"b": 3}, "b": {"c": 5}, "c": {"a": 7, "d": 1}, "d": {}, "e": {"f": 2}, "f": {"e": 9}}
    assert components(graph) == [["a", "b", "c"], ["e", "f"]]
    assert describe(graph).splitlines() == [
        "  a → b (line 3 of a) → c (line 5 of b) → a (line 7 of c)",
        "  e → f (line 2 of e) → e (line 9 of f)",
    ]
    assert components({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) == []
    assert _relative("dashboard/views/home.js", "../app.js?v=2") == "dashboard/app.js"


def package_graph(graph: Graph) -> dict[str, dict[str, int | str]]:
    """The module graph folded into folders (packages): a module stands for the folder it is in, and an import
    between a folder and one inside it (app/brain.py of app/memories/, app/memories/ of app/handling.py) is a
    package's own business, left out; two sibling folders importing each other are a circle."""
    def folder(module: str, is_package: bool) -> str:
        return module if is_package else module.rpartition(".")[0]

    packages = {m for m, path in python_modules().items() if path.name == "__init__.py"}
    folded: dict[str, dict[str, int | str]] = {}
    for module, imported in graph.items():
        source = folder(module, module in packages)
        folded.setdefault(source, {})
        for target, line in imported.items():
            into = folder(target, target in packages)
            if not (into == source or into.startswith(f"{source}.") or source.startswith(f"{into}.")):
                folded[source].setdefault(into, f"{module} imports {target}, line {line}")
    return folded


def test_python_packages_import_in_no_circle():
    _fails_on_circles(package_graph(python_graph()), "These Python packages (folders)")
