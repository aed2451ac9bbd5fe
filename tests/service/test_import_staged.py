"""An uploaded backup is imported page by page from parts laid out at its first page (issue 46, item 5): every
later page reads only the parts it restores, never the whole file, and the outcome is the same as importing the
file itself, repeated ids and edges included."""

import json

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.app.memories.service import Context
from second_brain.app.transfer import STAGE_CHUNK
from second_brain.bootstrap import build
from second_brain.domain.errors import InvalidInput
from second_brain.settings import Settings

KEY = "imports/0123456789abcdef0123456789abcdef.json.pages/etag-1"


class Parts:
    """The blob store's put and get, in memory, counting what each page reads."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.read: list[str] = []

    def put(self, key: str, data: bytes) -> None:
        self.objects[key] = data

    def get(self, key: str) -> bytes:
        self.read.append(key)
        if key not in self.objects:
            raise KeyError(key)
        return self.objects[key]


def backup() -> dict:
    n = STAGE_CHUNK * 2 + 120  # three parts of entries
    entries = [{"id": f"note-{i}", "content": f"Note {i}: the supplier for part {i % 97} is vendor {i % 13}",
                "created_at": 1_700_000_000_000 + (i * 7919) % n, "tags": [f"t{i % 5}"]} for i in range(n)]
    entries.append({**entries[10], "created_at": entries[10]["created_at"] + 10**9})  # the same id again, later
    entries.append({**entries[900], "content": "another text", "created_at": 1_800_000_000_000})  # refused
    edges = [{"source_id": f"note-{i}", "target_id": f"note-{i + 1}", "type": "relates_to"} for i in range(0, n - 1, 2)]
    return {"version": 3, "entries": entries, "edges": edges,
            "projects": [{"id": "p1", "name": "Suppliers", "created_at": 1_700_000_000_000}]}


@pytest.fixture
def brains(tmp_path, clock):
    made = [build(Settings(data_dir=tmp_path / name), clock=clock, embedder=FakeEmbedder())
            for name in ("whole", "staged")]
    yield made
    for brain in made:
        brain.close()


def pages(restore) -> tuple[dict, list[dict]]:
    totals: dict[str, int] = {}
    answers, offset, edges = [], 0, 0
    while True:
        answer = restore(offset, edges)
        answers.append(answer)
        for name in ("imported", "skipped", "failed", "edges_imported", "edges_skipped", "projects_imported"):
            totals[name] = totals.get(name, 0) + answer[name]
        if not answer["remaining_entries"] and not answer["remaining_edges"]:
            return totals, answers
        offset, edges = answer["next_offset"], answer["next_edge_offset"]


def test_a_staged_backup_imports_as_the_whole_file_does_and_each_page_reads_its_own_parts(brains):
    whole, staged = brains
    data = backup()
    file = json.dumps(data).encode()
    owner = [Context(b.team.owner_identity(), "owner") for b in brains]
    expected, whole_answers = pages(lambda o, e: ops.import_page(whole, owner[0], lambda: json.loads(file), 300, o, e))

    parts, reads = Parts(), []

    def read_file() -> dict:
        reads.append(1)
        return json.loads(file)

    def page(offset: int, edge_offset: int) -> dict:
        parts.read.clear()
        answer = ops.import_uploaded_page(staged, owner[1], parts, KEY, read_file, 300, offset, edge_offset)
        assert len(parts.read) <= 1 + 3, parts.read  # the layout, and the parts this page restores
        return answer

    found, answers = pages(page)
    assert found == expected and reads == [1]  # the file itself was read once, at the first page
    assert expected["imported"] == STAGE_CHUNK * 2 + 120 and expected["failed"] == 1 and expected["skipped"] == 1
    assert expected["edges_imported"] == len(data["edges"]) and expected["projects_imported"] == 1
    refused = [r for a in answers for r in a["results"] if "error" in r]
    assert refused == [r for a in whole_answers for r in a["results"] if "error" in r]  # for the same reason
    assert [r["id"] for r in refused] == ["note-900"] and "listed twice" in refused[0]["error"]
    listed = {e["id"] for e in ops.export(staged, owner[1])["entries"]}
    assert listed == {e["id"] for e in ops.export(whole, owner[0])["entries"]}
    again = ops.import_uploaded_page(staged, owner[1], parts, KEY, read_file, 1000, 0, 0)  # a re-run: nothing new
    assert again["imported"] == 0 and reads == [1]


def test_a_whole_backup_resent_with_every_page_is_read_once_and_its_parts_go_when_it_is_done(brains, monkeypatch):
    """The import contract sends the whole backup with every page: at 100,000 memories each page parsed and checked
    43 MB (2 s), so the import slowed as it grew (457 s for 100k, 5 s for 10k). Laid out in parts at its first
    page under the data folder, keyed by the body's digest, every later page reads only its own parts; the parts
    are gone once the last page is restored. The outcome is the same as reading the whole body each time."""
    from second_brain.app.operations import transfer as transfer_ops

    whole, staged = brains
    body = json.dumps(backup()).encode()
    owner = [Context(b.team.owner_identity(), "owner") for b in brains]
    expected, _ = pages(lambda o, e: ops.import_page(whole, owner[0], lambda: json.loads(body), 300, o, e))
    parsed: list[int] = []
    parse = transfer_ops.parse_payload
    monkeypatch.setattr(transfer_ops, "parse_payload", lambda data: parsed.append(1) or parse(data))
    folder = staged.settings.data_dir / "imports"

    def page(offset: int, edge_offset: int) -> dict:
        answer = ops.import_page(staged, owner[1], lambda: json.loads(body), 300, offset, edge_offset,
                                 body=body)
        if answer["remaining_entries"] or answer["remaining_edges"]:
            assert any(folder.rglob("manifest.json"))  # laid out, waiting for the next page
        return answer

    found, _ = pages(page)
    assert found == expected and parsed == [1]  # the body was parsed and checked once, at the first page
    assert not any(folder.rglob("*.json"))  # and its parts went with its last page
    small = {"entries": [{"id": "one", "content": "A single note", "created_at": 1}]}
    one = json.dumps(small).encode()
    assert ops.import_page(staged, owner[1], lambda: json.loads(one), 300, body=one)["imported"] == 1
    assert not any(folder.rglob("*.json"))  # a body one page restores is never laid out


def test_a_malformed_body_is_refused_whole_at_its_first_page_and_leaves_nothing(brains):
    _, staged = brains
    data = backup()
    data["entries"][-5]["created_at"] = "yesterday"
    owner = Context(staged.team.owner_identity(), "owner")
    with pytest.raises(InvalidInput, match="entries"):
        body = json.dumps(data).encode()
        ops.import_page(staged, owner, lambda: json.loads(body), 300, body=body)
    assert not any((staged.settings.data_dir / "imports").rglob("*.json"))
    assert ops.export(staged, owner)["entries"] == []
