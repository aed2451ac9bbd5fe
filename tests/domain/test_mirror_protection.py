"""A capture never rewrites or retires a managed mirror: the integration owns it, and its next sync would undo the
change silently. The capture is stored beside it and points at it instead."""

import pytest

from second_brain.domain.capture import Verdict, protect
from second_brain.domain.memory import Memory

MIRROR = Memory("m-mirror", exists=True, content="The floor is 40 euros a seat", source="notes", mirror="i-1",
                origin="file:///vault/Pricing.md")
PLAIN = Memory("m-plain", exists=True, content="The floor is 40 euros a seat", source="api")


@pytest.mark.parametrize("action", ["merge", "replace", "contradiction", "keep_canonical"])
def test_a_mirror_is_only_pointed_at(action):
    assert protect(Verdict(action, MIRROR.id, 0.9), "api", MIRROR) == Verdict("flag", MIRROR.id, 0.9)
    assert protect(Verdict(action, PLAIN.id, 0.9), "api", PLAIN).action == action  # an ordinary memory: as decided
