"""Export and import over HTTP against real servers: the reference product's format, round trips,
idempotent and resumable paging, malformed payloads, and the CLI."""

import json
from pathlib import Path

from .conftest import Server, run_cli

REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "reference_export_v3.json").read_text())


def restore(api, payload, limit=40):
    """Page through POST /import the way the documentation says; the summed counters and the results."""
    offset = edge_offset = 0
    totals: dict[str, int] = {}
    results = []
    while True:
        response = api.post("/import", params={"limit": limit, "offset": offset, "edge_offset": edge_offset},
                            json=payload)
        assert response.status_code == 200, response.text
        page = response.json()
        for key, value in page.items():
            if key.endswith(("imported", "skipped", "failed")):
                totals[key] = totals.get(key, 0) + value
        results += page["results"]
        offset, edge_offset = page["next_offset"], page["next_edge_offset"]
        if not page["remaining_entries"] and not page["remaining_edges"]:
            return totals, results


def comparable(backup):
    return {key: backup[key] for key in ("version", "entries", "edges", "projects")}


def test_an_export_from_the_reference_product_imports_here(api):
    totals, results = restore(api, REFERENCE, limit=2)
    # drawn_from (an insight's sources) is the brain's own edge type: /link refuses it, a backup restores it.
    assert totals == {"imported": 5, "skipped": 0, "failed": 0, "edges_imported": 3, "edges_skipped": 0,
                      "edges_failed": 0, "projects_imported": 1, "projects_skipped": 0}
    assert results == []

    decided = api.get("/entry", params={"id": "5b0c7a52-3f1e-4d7a-9a61-0d2f4c1e8b10"}).json()["entry"]
    assert (decided["created_at"], decided["updated_at"], decided["recall_count"], decided["importance_score"],
            decided["contradiction_wins"], decided["source"]) == (1718000000000, 1718000500000, 4, 4, 1, "claude")
    assert decided["tags"] == ["work", "infra", "kind:episodic", "status:canonical", "project:atlas"]
    assert decided["workspace"] == "personal" and [t["event"] for t in decided["timeline"]] == ["imported"]

    # Keyword recall works at once; the deprecated and the unconfirmed insight stay out of it.
    ids = [r["id"] for r in api.get("/recall", params={"query": "Postgres staging database"}).json()["results"]]
    assert ids[0] == "5b0c7a52-3f1e-4d7a-9a61-0d2f4c1e8b10" and "1f4e2d9a-6c3b-4b8e-8f70-2a9d5e6c7b21" not in ids
    connections = api.get("/connections", params={"id": "5b0c7a52-3f1e-4d7a-9a61-0d2f4c1e8b10"}).json()["connections"]
    assert {(c["type"], c["provenance"], c["weight"]) for c in connections} == {
        ("supersedes", "system", 1.0), ("relates_to", "inferred", 0.83), ("drawn_from", "system", 1.0)}
    [project] = api.get("/projects", params={"counts": 1}).json()["projects"]
    assert (project["id"], project["aliases"], project["count"], project["created_at"]) == (
        "atlas", ["billing-v2"], 2, 1717500000000)
    assert api.post("/vectorize-pending", params={"limit": 500}).json()["remaining"] == 0

    again, _ = restore(api, REFERENCE, limit=3)  # a re-run changes nothing
    assert again["imported"] == 0 and again["skipped"] == 5 and again["edges_skipped"] == 3
    assert again["projects_skipped"] == 1 and api.get("/count").json() == {"count": 5}


def test_export_then_import_into_a_fresh_brain_gives_the_same_backup(tmp_path, api):
    first = api.post("/capture", json={"content": "Renew the TLS certificate for the edge proxy", "project": "ops",
                                       "when": "2031-03-01", "when_kind": "due"}).json()["id"]
    second = api.post("/capture",
                      json={"content": "Proxy certificates come from the internal CA", "tags": ["ops"]}).json()["id"]
    api.post("/append", json={"id": second, "addition": "The CA root rotates every two years."})
    api.post("/link", json={"source_id": first, "target_id": second, "type": "caused_by"})
    api.post("/status", json={"id": second, "status": "canonical"})
    api.post("/projects", json={"name": "Billing", "aliases": ["invoices"]})
    api.get("/recall", params={"query": "certificate"})
    while api.post("/vectorize-pending").json()["remaining"]:
        pass
    backup = api.get("/export").json()
    assert backup["version"] == 3 and [e["id"] for e in backup["entries"]] == [first, second]  # oldest first

    fresh = Server(tmp_path / "fresh").start()
    try:
        with fresh.client() as other:
            totals, _ = restore(other, backup, limit=1)
            assert totals["imported"] == 2 and totals["edges_imported"] == 1 and totals["projects_imported"] == 2
            while other.post("/vectorize-pending").json()["remaining"]:
                pass  # indexed, so any link the brain would infer on its own is there too
            assert comparable(other.get("/export").json()) == comparable(backup)
            assert other.get("/entry", params={"id": first}).json()["entry"]["when_at"] is not None
    finally:
        fresh.stop()


def test_a_malformed_payload_is_refused_whole_and_writes_nothing(api):
    good = REFERENCE["entries"][0]
    cases = [
        ({"entries": "all of them"}, "entries"),
        ({"entries": [good, {**good, "id": "x2", "content": ""}]}, "entries[1].content"),
        ({"entries": [{k: v for k, v in good.items() if k != "created_at"}]}, "entries[0].created_at"),
        ({"entries": [good], "edges": [{"source_id": "a", "target_id": "b", "weight": 2}]}, "edges[0].weight"),
        ({"entries": [{**good, "importance_score": "high"}]}, "entries[0].importance_score"),
    ]
    for payload, where in cases:
        response = api.post("/import", json=payload)
        assert response.status_code == 400 and response.json()["ok"] is False, payload
        assert where in response.json()["error"]
    assert api.post("/import", content=b"{not json").status_code == 400
    assert api.post("/import", json=[good]).status_code == 400
    assert api.get("/count").json() == {"count": 0} and api.get("/export").json()["entries"] == []


def test_an_interrupted_import_resumes_from_its_offsets_without_duplicates(api):
    payload = {"entries": [{"id": f"note-{n:03d}", "content": f"Imported note number {n} about kestrel {n}",
                            "created_at": 1_700_000_000_000 + n} for n in range(25)]}
    first = api.post("/import", params={"limit": 10}, json=payload).json()
    assert (first["imported"], first["next_offset"], first["remaining_entries"]) == (10, 10, 15)
    # The client died here and starts over from the beginning: nothing is stored twice.
    totals, _ = restore(api, payload, limit=7)
    assert totals["imported"] == 15 and totals["skipped"] == 10
    assert api.get("/count").json() == {"count": 25}


def test_brain_export_and_import_on_the_command_line(tmp_path, server):
    with server.client() as api:
        for n in range(3):
            api.post("/capture", json={"content": f"Command line note {n} about herons"})
    server.stop()
    backup = tmp_path / "backup.json"
    exported = run_cli("export", str(backup), "--data-dir", str(server.data_dir))
    assert exported.returncode == 0, exported.stderr
    assert "Exported 3 memories" in exported.stdout and len(json.loads(backup.read_text())["entries"]) == 3

    restored = run_cli("import", str(backup), "--data-dir", str(tmp_path / "other"), "--page", "2")
    assert restored.returncode == 0, restored.stderr
    assert "imported 3" in restored.stdout and "restored [" in restored.stderr
    again = run_cli("import", str(backup), "--data-dir", str(tmp_path / "other"))
    assert "imported 0" in again.stdout and "skipped 3" in again.stdout

    broken = tmp_path / "broken.json"
    broken.write_text('{"entries": [{"id": "x"}]}')
    refused = run_cli("import", str(broken), "--data-dir", str(tmp_path / "other"))
    assert refused.returncode == 1 and "entries[0].content" in refused.stderr


def test_an_id_given_twice_in_one_payload_is_restored_once(api):
    entry = {"id": "twice-1", "content": "Listed twice in the backup", "created_at": 1_700_000_000_000}
    page = api.post("/import", json={"entries": [entry, entry]}).json()
    assert (page["imported"], page["skipped"], page["failed"]) == (1, 1, 0)
    assert api.get("/count").json() == {"count": 1}


def test_what_is_not_a_version_3_payload_or_overflows_64_bits_is_a_400_naming_it(api):
    good = REFERENCE["entries"][0]
    cases = [
        ({}, "entries"),
        ({"version": 3}, "entries"),
        ({"version": 2, "memories": [good]}, "version"),
        ({"entries": [{**good, "created_at": 2**63}]}, "created_at"),  # was a 500 (OverflowError)
        ({"entries": [{**good, "recall_count": 10**30}]}, "recall_count"),
        ({"entries": [{**good, "when_at": -(2**64)}]}, "when_at"),
    ]
    for payload, where in cases:
        response = api.post("/import", json=payload)
        assert response.status_code == 400 and response.json()["ok"] is False, (payload, response.text)
        assert where in response.json()["error"]
    assert api.post("/import").status_code == 400  # no body at all
    assert api.get("/count").json() == {"count": 0}


def test_an_id_that_holds_other_content_is_reported_not_skipped(api):
    kept, taken = ({"id": f"taken-{n}", "content": f"Original note {n}", "created_at": 1_700_000_000_000 + n}
                   for n in range(2))
    api.post("/import", json={"entries": [kept, taken]})
    page = api.post("/import", json={"entries": [kept, {**taken, "content": "Another note, same id"}]}).json()
    assert (page["imported"], page["skipped"], page["failed"]) == (0, 1, 1)
    assert page["results"] == [{"id": "taken-1", "error": "The ID already holds a different memory"}]


def test_a_small_backup_with_edges_is_restored_in_one_call(api):
    entries = [{"id": f"pair-{n}", "content": f"Half {n} of a linked pair", "created_at": 1_700_000_000_000 + n}
               for n in range(2)]
    edges = [{"source_id": "pair-0", "target_id": "pair-1", "type": "caused_by"}]
    page = api.post("/import", json={"version": 3, "entries": entries, "edges": edges}).json()
    assert (page["imported"], page["edges_imported"], page["remaining_entries"], page["remaining_edges"]) == (
        2, 1, 0, 0)
