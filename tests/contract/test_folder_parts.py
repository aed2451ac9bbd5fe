"""The staging area of one machine's imports: parts written whole and owner-only, prefixes removed or swept."""

import os
import stat
import time

import pytest

from second_brain.adapters.blobs.folder import FolderParts


def test_parts_are_written_whole_readable_by_the_owner_alone_and_removed_by_prefix(tmp_path):
    parts = FolderParts(tmp_path / "imports")
    parts.put("bodies/abc/entries-0.json", b"[1]")
    parts.put("bodies/abc/manifest.json", b"{}")
    assert parts.get("bodies/abc/entries-0.json") == b"[1]"
    assert stat.S_IMODE((tmp_path / "imports/bodies/abc/entries-0.json").stat().st_mode) == 0o600
    assert not [p for p in (tmp_path / "imports/bodies/abc").iterdir() if p.name.startswith(".part-")]
    with pytest.raises(KeyError):
        parts.get("bodies/abc/entries-1.json")
    parts.remove("bodies/abc")
    with pytest.raises(KeyError):
        parts.get("bodies/abc/manifest.json")


def test_a_key_outside_the_folder_is_refused(tmp_path):
    parts = FolderParts(tmp_path / "imports")
    for key in ("../secret", "bodies/../../x", ""):
        with pytest.raises(ValueError):
            parts.put(key, b"x")
    assert not (tmp_path / "secret").exists()


def test_sweep_removes_only_what_was_left_longer_than_asked(tmp_path):
    parts = FolderParts(tmp_path / "imports")
    parts.put("bodies/old/manifest.json", b"{}")
    parts.put("bodies/new/manifest.json", b"{}")
    hour_ago = time.time() - 3601
    os.utime(tmp_path / "imports/bodies/old", (hour_ago, hour_ago))
    parts.sweep("bodies", 3600)
    assert parts.get("bodies/new/manifest.json") == b"{}"
    with pytest.raises(KeyError):
        parts.get("bodies/old/manifest.json")
    FolderParts(tmp_path / "elsewhere").sweep("bodies", 0)  # nothing staged yet: nothing to do
