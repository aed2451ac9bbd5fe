"""Checks a `sam build` output: every handler imports against the built core layer alone, no unused weight was
installed, every module of the layer has its bytecode (checked by hash, never by time: /opt is read-only, so a
module without it is compiled again at every cold start), the API function does not import `mcp`, the API function
finds the dashboard's files where Lambda merges the two layers, and the core layer's size (unzipped and zipped) is
printed. `bench/aws.py --cold-start` times the imports.

Usage: python3.11 layers/core/check.py .aws-sam/build   (what `make layer` runs after `sam build`)
"""

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

LAYER = "CoreLayer"
DASHBOARD = "DashboardLayer"  # the API function's second layer: python/second_brain/dashboard/
UNUSED = ("grpc", "google.protobuf", "opensearch.protobufs")  # the lock leaves these out: nothing imports them

# Run with -S -E -B (no site-packages, no PYTHON* variables, no bytecode written into the build): only the
# function's code and the layer count, as on Lambda, which puts the layer's python/ folder on the path.
IMPORT = """
import sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import app
assert callable(app.handler), "no handler"
unused = tuple(sys.argv[3:])
loaded = [m for m in sys.modules if m in unused or m.startswith(tuple(u + "." for u in unused))]
assert not loaded, f"imported {loaded}"
assert not (sys.argv[1].endswith("ApiFunction") and "mcp" in sys.modules), "the REST API imported mcp"
"""
# The API function's dashboard, read as entrypoints/api/dashboard.py reads it.
DASHBOARD_FILES = """
import sys
sys.path[:0] = [sys.argv[1]]
from second_brain.entrypoints.api import dashboard
for name in ("index.html", "shell.js", "app.js", "app.css", "views/graph.js"):
    assert dashboard._read(name) is not None, f"{name} is not in the merged layers"
"""


def size(folder: Path) -> tuple[int, int]:
    """Bytes on disk unzipped, and zipped as SAM uploads it."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    unzipped = sum(p.stat().st_size for p in files)
    with tempfile.TemporaryFile() as tmp:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files:
                archive.write(path, path.relative_to(folder.parent))
        zipped = tmp.tell()
    return unzipped, zipped


def bytecode(source: Path) -> bool:
    """Whether CPython 3.11 finds this module's bytecode and trusts it without looking at the source's time: the
    header's flags say hash-based (1) and unchecked (not 2)."""
    compiled = source.parent / "__pycache__" / f"{source.stem}.cpython-311.pyc"
    if not compiled.is_file():
        return False
    flags = int.from_bytes(compiled.read_bytes()[4:8], "little")
    return flags == 1


def main(build: Path) -> int:
    build = build.resolve()
    if sys.version_info[:2] != (3, 11):
        print("run this with Python 3.11: the layer holds CPython 3.11 wheels")
        return 2
    site = build / LAYER / "python"
    present = [name for name in UNUSED if (site / name.replace(".", "/")).exists()]
    if present:
        print(f"{LAYER} holds unused packages: {', '.join(present)}")
        return 1
    failed = 0
    sources = list(site.rglob("*.py"))
    missing = [p for p in sources if not bytecode(p)]
    print(f"{LAYER}: {len(sources) - len(missing)} of {len(sources)} modules with bytecode checked by hash")
    if missing:
        print(f"  without: {', '.join(str(p.relative_to(site)) for p in missing[:5])}")
        failed += 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | {"AWS_DEFAULT_REGION": "us-east-1"}
    for function in sorted(p.parent for p in build.glob("*/app.py")):
        result = subprocess.run([sys.executable, "-S", "-E", "-B", "-c", IMPORT, str(function), str(site), *UNUSED],
                                capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
        print(f"{function.name}: {'imports against the layer alone' if result.returncode == 0 else 'FAILED'}")
        if result.returncode:
            print(result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "(no output)")
            failed += 1
    with tempfile.TemporaryDirectory() as opt:  # Lambda unpacks a function's layers into one /opt, in order
        for layer in (LAYER, DASHBOARD):
            shutil.copytree(build / layer / "python", Path(opt) / "python", dirs_exist_ok=True)
        result = subprocess.run([sys.executable, "-S", "-E", "-B", "-c", DASHBOARD_FILES, str(Path(opt) / "python")],
                                capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    print(f"ApiFunction's dashboard: {'served from the two layers merged' if result.returncode == 0 else 'FAILED'}")
    if result.returncode:
        print(result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "(no output)")
        failed += 1
    unzipped, zipped = size(site)
    print(f"{LAYER}: {unzipped / 1e6:.1f} MB unzipped (Lambda's limit for a function and its layers: 250 MB), "
          f"{zipped / 1e6:.1f} MB zipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".aws-sam/build")))
