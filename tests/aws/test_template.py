"""What template.yaml and the core layer promise before a deploy: each test reads the template (or the layer's
lock) and fails when that promise is broken. No AWS account, no network."""

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "layers/core/requirements.txt"
UNUSED = {"grpcio": "grpc", "protobuf": "google.protobuf", "opensearch-protobufs": "opensearch.protobufs"}


class CloudFormationLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short tags (!Ref, !Sub, !If...), read as their long form ({"Fn::If": [...]})."""


def _long_form(loader: yaml.SafeLoader, tag: str, node: yaml.Node) -> dict:
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    if tag == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {tag if tag in ("Ref", "Condition") else f"Fn::{tag}": value}


CloudFormationLoader.add_multi_constructor("!", _long_form)


@pytest.fixture(scope="module")
def template() -> dict:
    return yaml.load((ROOT / "template.yaml").read_text(), Loader=CloudFormationLoader)


def _lock() -> dict[str, str]:
    """Package name → pinned version, from the layer's lock file."""
    text = LOCK.read_text()
    assert "--hash=sha256:" in text, "the lock pins hashes (pip --require-hashes)"
    return {_name(m[1]): m[2] for m in re.finditer(r"^([A-Za-z0-9_.-]+)==([^\s\\]+)", text, re.M)}


def _name(package: str) -> str:
    return re.sub(r"[-_.]+", "-", package).lower()


# --- the layer (issue 15, item 4) ---


def test_the_layer_is_built_from_src_by_its_own_makefile(template):
    layer = template["Resources"]["CoreLayer"]
    assert layer["Properties"]["ContentUri"].rstrip("/") == "src"
    assert layer["Metadata"] == {"BuildMethod": "makefile", "ContextPath": "layers/core"}
    makefile = (ROOT / "layers/core/Makefile").read_text()
    assert "build-CoreLayer:" in makefile
    # SAM runs the Makefile on a copy of src/ somewhere else: a path out of the checkout breaks plain `sam build`
    assert ".." not in makefile and "CURDIR" not in makefile


def test_the_lock_pins_every_dependency_the_layer_needs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["aws"]]
    pinned = _lock()
    for requirement in needed:
        name = _name(requirement.name)
        assert name in pinned, f"{name} is not in {LOCK.name}: run `make layer-lock`"
        assert requirement.specifier.contains(pinned[name]), f"{name}=={pinned[name]} does not meet {requirement}"


def test_the_lock_leaves_out_the_grpc_bindings_nothing_imports():
    pinned = _lock()
    assert not set(UNUSED) & set(pinned), "opensearch-py's gRPC bindings are never imported: keep them out"
    imports = re.compile(r"^\s*(import|from)\s+(" + "|".join(re.escape(m) for m in UNUSED.values()) + r")\b", re.M)
    sources = [*(ROOT / "src").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]
    import opensearchpy  # the client as installed here: the layer pins the same version (checked below)
    sources += Path(opensearchpy.__file__).parent.rglob("*.py")
    assert opensearchpy.__versionstr__ == pinned["opensearch-py"], "compare against the pinned opensearch-py"
    offenders = [str(path) for path in sources if imports.search(path.read_text(errors="replace"))]
    assert not offenders, f"these import a package the layer leaves out: {offenders}"
