"""One writer per stream (issue 59, item 1), read from the source: a memory's events are decided by the memory
aggregate (second_brain.domain) and appended by the memory service (second_brain.app.memories, through
`MemoryStreams`); no other module makes one. An integration says what upstream holds (`Upstream`) and the memory
service decides the mirror's events; an import asks the aggregate (`commands.Import`); a proposed pattern's opening
events come from domain/patterns.py."""

import ast
import dataclasses
from pathlib import Path

from second_brain.domain import events
from second_brain.domain.integrations import MirrorSynced

SOURCE = Path(__file__).resolve().parents[2] / "src" / "second_brain"
DECIDERS = ("domain/", "app/memories/")  # the aggregate, and the one path that appends what it decides

# What a memory's stream holds that the aggregate decides: what it says, where it lives, its tags, status, time,
# mirror and counters, and the judgements a capture leaves on it. The jobs' own notes on a memory (a pushed reminder,
# a staleness verdict, a digest or pattern drawn from it) are theirs: their domain modules define and decide them.
MEMORY_EVENTS = {
    MirrorSynced, events.MemoryCaptured, events.MemoryImported, events.MemoryAppended, events.MemoryRevised,
    events.StatusChanged, events.TagsChanged, events.TimeAnchorSet, events.TimeAnchorCleared, events.MemoryRecalled,
    events.MemoryOpened, events.MemoryForgotten, events.MemoryShared, events.MemoryUnshared,
    events.MemoryClassified, events.MemoryReleased, events.DuplicateSuspected, events.ContradictionWon,
    events.ContradictionLost,
}
NAMES = {cls.__name__ for cls in MEMORY_EVENTS}


def made_outside(root: Path = SOURCE) -> list[str]:
    """Every place outside the deciders that constructs a memory event (`X(...)` or `module.X(...)`)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name.startswith(DECIDERS):
            continue
        for node in ast.walk(ast.parse(path.read_text(), name)):
            if isinstance(node, ast.Call):
                called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if called in NAMES:
                    found.append(f"{name}:{node.lineno} {called}")
    return found


def test_the_guard_knows_every_memory_event():
    assert all(dataclasses.is_dataclass(cls) for cls in MEMORY_EVENTS)
    assert len(NAMES) == len(MEMORY_EVENTS) == 19


def test_only_the_aggregate_and_the_memory_service_make_a_memory_event():
    assert made_outside() == [], "memory events made outside domain/ and app/memories/ (decide them there)"


def test_the_guard_sees_a_memory_event_made_elsewhere(tmp_path):
    """The check can fail: a module that builds a revision itself (as the integration service once did) is named."""
    rogue = tmp_path / "second_brain"
    (rogue / "app" / "integrations").mkdir(parents=True)
    (rogue / "app" / "integrations" / "service.py").write_text(
        "from ...domain.events import MemoryRevised\n\n\ndef sync(text):\n    return [MemoryRevised(text, 'synced')]\n")
    (rogue / "app" / "memories").mkdir()
    (rogue / "app" / "memories" / "mirrors.py").write_text("def sync(text):\n    return events.MemoryRevised(text)\n")
    assert made_outside(rogue) == ["app/integrations/service.py:5 MemoryRevised"]
