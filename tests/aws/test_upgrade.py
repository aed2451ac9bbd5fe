"""DynamoDB logs written by earlier builds, restored into today's deployment, read with nothing lost; a log of a
newer format refused.

Each tests/fixtures/upgrade/aws-* holds a build's tables as DynamoDB keeps them (the memories' data keys unwrapped:
KMS keeps its master key), and what that build read back through its API function (expected.json). Here the
tables are restored into template.yaml's tables (moto), the keys wrapped under a new KMS key, the OpenSearch
indexes rebuilt from the log as `brain replay --aws` does, and today's API function must read the same.
"""

import json
from pathlib import Path

import pytest

from second_brain.adapters.event_store.dynamodb import LOG_ITEM
from second_brain.aws import composition
from second_brain.domain.errors import NewerFormat
from second_brain.settings import Settings
from tests.fixtures.upgrade import aws, scenario

FIXTURES = sorted((Path(__file__).parents[1] / "fixtures" / "upgrade").glob("aws-*"))


def test_there_is_a_fixture_of_a_log_from_before_formats_were_kept_and_one_of_today():
    formats = set()
    for fixture in FIXTURES:
        tables = json.loads((fixture / "tables.json").read_text())
        layout = next(item for item in tables["events"] if item["stream_id"]["S"] == LOG_ITEM)
        formats.add(layout.get("format", {}).get("N"))
    assert {None, "1"} <= formats, [f.name for f in FIXTURES]


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_a_log_an_earlier_build_wrote_is_restored_and_read_with_nothing_lost(fixture, opensearch_url):
    tables = json.loads((fixture / "tables.json").read_text())
    expected = json.loads((fixture / "expected.json").read_text())
    assert b"hunter2" not in (fixture / "tables.json").read_bytes()  # the forgotten note's words: erased, not sealed
    with aws.deployment(opensearch_url, tables) as deployed:
        read = scenario.snapshot(deployed.api, expected["facts"])
        for part, wanted in expected["snapshot"].items():
            assert read[part] == wanted, part
        assert read == expected["snapshot"]
        found = scenario.ok(deployed.api("GET", "/recall", query={"query": "pricing decision", "topK": 3}))
        assert "Pricing decision" in found["results"][0]["content"]


def test_a_log_of_a_newer_format_is_refused_in_words_by_the_replay_and_the_api(opensearch_url):
    tables = json.loads((FIXTURES[-1] / "tables.json").read_text())
    layout = next(item for item in tables["events"] if item["stream_id"]["S"] == LOG_ITEM)
    layout["format"] = {"N": "2"}
    with aws.deployment(opensearch_url, tables, rebuild=False) as deployed:
        with pytest.raises(NewerFormat, match=r"the DynamoDB log events was written by a newer version of Second "
                                              r"Brain \(log format 2\)"):
            composition.replay(Settings())
        status, answer = deployed.api("GET", "/list")
        assert status == 503 and answer["ok"] is False
        assert answer["error"].startswith("the DynamoDB log events was written by a newer version of Second Brain")
        status, answer = deployed.api("POST", "/capture", {"content": "Written into a log this build cannot read"})
        assert status == 503 and "log format 2" in answer["error"]
        assert aws.scan("events") == sorted((aws.decoded(i) for i in tables["events"]),
                                            key=lambda i: json.dumps(aws.encoded(i), sort_keys=True))
