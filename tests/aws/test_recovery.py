"""Rebuilding the indexes without downtime (issue 66 item 1), on moto and the OpenSearch node as deployed (the log
sealed and sharded as template.yaml makes it): a replay into a new prefix while the functions go on writing to the
old one, the switch, and the catch-up (`brain replay --aws --after <position>`, the commands docs/OPERATIONS.md
gives) leave every answer as the old indexes give it. The replay reads the log only as far as it has settled (an
append in flight may land below the head), so the test shortens the log's settling to keep its waits short."""

import re
from pathlib import Path

import pytest

from second_brain.adapters.event_store import dynamodb
from second_brain.entrypoints.cli import replay_aws
from second_brain.settings import Settings
from tests.aws.test_lambda_paths import aws, call, load, project  # noqa: F401 (aws: the fixture)

OPERATIONS = (Path(__file__).resolve().parents[2] / "docs" / "OPERATIONS.md").read_text()
QUERIES = ["kestrel nest", "harbour crane budget", "tide tables", "sourdough starter", "Bob's bicycle"]


@pytest.fixture
def settling(monkeypatch):
    monkeypatch.setattr(dynamodb, "SETTLE_MS", 1_500)


def answers(api, ids: list[str]) -> dict:
    """What a client reads: recalls (which memories, in which order, with what text), the list, each entry and its
    timeline (a memory gone answers 404)."""
    found: dict = {}
    for query in QUERIES:
        results = call(api, "GET", "/recall", query={"query": query, "topK": "5"})[1]["results"]
        found[f"recall {query}"] = [(r["id"], r["content"]) for r in results]
    found["list"] = [(e["id"], e["content"], e.get("tags")) for e in call(api, "GET", "/list", query={"n": "50"})[1]]
    for memory_id in ids:
        status, body = call(api, "GET", "/entry", query={"id": memory_id})
        found[f"entry {memory_id}"] = (status, body.get("entry"))
        status, body = call(api, "GET", "/timeline", query={"id": memory_id})
        body.pop("scanned", None)  # how much of the log the read went through: it grows with the log
        found[f"timeline {memory_id}"] = (status, body)
    found["count"] = call(api, "GET", "/count")[1]
    return found


def replayed(capsys, after: int | None = None) -> int:
    """`brain replay --aws [--after N]` as the docs give it; the position it printed."""
    assert replay_aws(Settings(), after) == 0, capsys.readouterr().err
    said = capsys.readouterr().out
    return int(re.search(r"up to position (\d+)", said)[1])


def test_a_replay_into_a_new_prefix_caught_up_after_the_switch_answers_as_the_old_one(
        aws, settling, capsys, monkeypatch):  # noqa: F811
    assert "brain replay --aws" in OPERATIONS and "brain replay --aws --after" in OPERATIONS
    api = aws.api
    kestrel = call(api, "POST", "/capture", {"content": "Kestrel nest on the quarry ledge, two chicks"})[1]["id"]
    crane = call(api, "POST", "/capture", {"content": "Harbour crane budget approved at 40k #budget"})[1]["id"]
    tides = call(api, "POST", "/capture", {"content": "Tide tables for March pinned in the boathouse"})[1]["id"]
    bob = call(api, "POST", "/team/members", {"name": "Bob"})[1]["token"]
    bike = call(api, "POST", "/capture", {"content": "Bob's bicycle needs a new chain"}, token=bob)[1]["id"]
    project(aws)
    assert call(api, "POST", "/share", {"id": bike, "workspace": "company"}, token=bob)[1]["status"] == "shared"
    assert call(api, "POST", "/link", {"source_id": kestrel, "target_id": tides, "type": "relates_to"})[0] == 200
    assert call(api, "POST", "/forget", {"id": tides})[1]["ok"] is True
    project(aws)

    old_prefix, new_prefix = aws.prefix, f"{aws.prefix}-b"
    monkeypatch.setenv("BRAIN_OPENSEARCH_PREFIX", new_prefix)
    position = replayed(capsys)  # into the new prefix; the functions still write to the old one

    # Meanwhile, through the functions as deployed (the old prefix): a capture, an update, a forget.
    starter = call(api, "POST", "/capture", {"content": "Sourdough starter fed at 8, doubles by noon"})[1]["id"]
    call(api, "POST", "/update", {"id": crane, "content": "Harbour crane budget approved at 45k #budget"})
    assert call(api, "POST", "/forget", {"id": kestrel})[1]["ok"] is True
    project(aws)

    ids = [kestrel, crane, tides, bike, starter]
    answers(api, ids)  # reading an entry counts an opening, once a day: the answers compared are the second reading
    project(aws)  # (the counts reach the index through the stream's projector, as deployed)
    original = answers(api, ids)
    assert original["recall sourdough starter"][0][0] == starter and original[f"entry {kestrel}"][0] == 404

    switched = load("api")  # the functions, deployed with SearchIndexPrefix=<new prefix>
    before = answers(switched, ids)
    assert before != original  # the writes made during the replay are not there yet
    assert before["recall sourdough starter"][:1] != original["recall sourdough starter"][:1]

    replayed(capsys, after=position)
    assert answers(switched, ids) == original
    monkeypatch.setenv("BRAIN_OPENSEARCH_PREFIX", old_prefix)


def test_a_replay_reads_only_what_has_settled_and_waits_for_what_was_written_before_it_began(
        aws, settling, capsys, monkeypatch):  # noqa: F811
    """The log's head may still change below it (sixteen partitions, appends in flight): the replay reads up to the
    settled position, then waits until what was written before it began has settled, and reads that too."""
    memory = call(aws.api, "POST", "/capture", {"content": "Written a moment before the replay began"})[1]["id"]
    monkeypatch.setenv("BRAIN_OPENSEARCH_PREFIX", f"{aws.prefix}-c")
    position = replayed(capsys)
    switched = load("api")
    assert [r["id"] for r in call(switched, "GET", "/recall", query={"query": "moment before the replay"})[1][
        "results"]] == [memory]
    assert position >= dynamodb.SLOTS_PER_MS  # a position in the log, not a count
