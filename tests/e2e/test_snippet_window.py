"""GET /recall over HTTP: a long memory's snippet shows the part that matched, not only its head and newest update."""

NOTE = ("filler. " * 600 + "Constants: RETENTION_MS 180d and MAX_OCCURRENCES 200. " + "filler. " * 600
        + "\n\n[Update Jul 24, 2026]: An unrelated later note.")


def test_the_snippet_of_a_long_memory_holds_the_matching_text(api):
    stored = api.post("/capture", json={"content": NOTE})
    assert stored.status_code == 200, stored.text
    results = api.get("/recall", params={"query": "RETENTION_MS constants"}).json()["results"]
    assert [r["id"] for r in results] == [stored.json()["id"]]
    hit = results[0]
    assert hit["truncated"] is True and hit["full_length"] == len(NOTE)
    assert "RETENTION_MS 180d" in hit["content"] and hit["content"].startswith("filler.")
