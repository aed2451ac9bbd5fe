"""template.yaml read as plain data, for the tests that check what it declares."""

import copy
import functools
from pathlib import Path

import yaml

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"


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


def load_template(path: Path = TEMPLATE) -> dict:
    """The template as data: a copy of its one parse in this process (parsing it took ~80 ms, and every AWS test
    reads its tables' definitions from it), so a test may change what it is given."""
    return copy.deepcopy(_parsed(path, path.stat().st_mtime_ns))


@functools.cache
def _parsed(path: Path, modified: int) -> dict:
    return yaml.load(path.read_text(), Loader=CloudFormationLoader)  # a SafeLoader with the tags added
