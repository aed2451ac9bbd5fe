"""A notes folder's walk is bounded (issue 62): past the bounds it is no notes folder, and the sync stops saying
which bound, changing nothing."""

import pytest

from second_brain.adapters.integrations import notes
from second_brain.domain.errors import StoreUnavailable


def test_a_folder_with_too_many_notes_stops_the_walk(tmp_path, monkeypatch):
    for n in range(5):
        (tmp_path / f"note-{n}.md").write_text(f"# Note {n}\n")
    monkeypatch.setattr(notes, "MAX_NOTES", 4)
    with pytest.raises(StoreUnavailable, match="more than 4 notes"):
        list(notes.NotesFolder().items({"path": str(tmp_path)}, None))
    monkeypatch.setattr(notes, "MAX_NOTES", 5)
    assert len(list(notes.NotesFolder().items({"path": str(tmp_path)}, None))) == 5


def test_a_folder_too_deep_or_too_full_stops_the_walk(tmp_path, monkeypatch):
    deep = tmp_path.joinpath(*[f"d{n}" for n in range(4)])
    deep.mkdir(parents=True)
    (deep / "bottom.md").write_text("# Bottom\n")
    monkeypatch.setattr(notes, "MAX_DEPTH", 3)
    with pytest.raises(StoreUnavailable, match="more than 3 deep"):
        list(notes.NotesFolder().items({"path": str(tmp_path)}, None))
    monkeypatch.setattr(notes, "MAX_DEPTH", 32)
    for n in range(10):
        (tmp_path / f"other-{n}.txt").write_text("not a note")
    monkeypatch.setattr(notes, "MAX_ENTRIES", 8)
    with pytest.raises(StoreUnavailable, match="more than 8 files and folders"):
        list(notes.NotesFolder().items({"path": str(tmp_path)}, None))
