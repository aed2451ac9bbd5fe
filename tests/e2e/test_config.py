"""GET/PATCH/DELETE /config over HTTP: every setting listed, whole patches or nothing, and changes that
apply to the very next request."""

from datetime import datetime
from zoneinfo import ZoneInfo

from second_brain.app.config import STREAM
from second_brain.app.handling import Context, envelopes
from second_brain.bootstrap import build
from second_brain.domain.events import ConfigChanged
from second_brain.settings import Settings

from .conftest import Server


def test_every_setting_is_listed_with_its_default(api):
    view = api.get("/config").json()
    assert view["ok"] is True and view["overrides"] == {} and view["config"] == view["defaults"]
    for key, value in {"RERANK_MODE": "auto", "KEYWORD_CANDIDATE_LIMIT": 500, "SUBSTRING_MATCH_WEIGHT": 0.25,
                       "MMR_LAMBDA": 0.7, "RECENCY_FLOOR": 0.6, "RECENCY_FLOOR_DURABLE": 0.9,
                       "RECENCY_FLOOR_VOLATILE": 0.15, "DEFAULT_HOPS": 0, "RECALL_OUTPUT_BUDGET": 12000,
                       "DUPLICATE_BLOCK_THRESHOLD": 0.97, "DUPLICATE_FLAG_THRESHOLD": 0.95,
                       "DUPLICATE_RESTATE_THRESHOLD": 0.57, "TIMEZONE": "UTC"}.items():
        assert view["defaults"][key] == value, key
    # What a form needs: every setting described, with its range or choices and its value's type.
    assert set(view["settings"]) == set(view["defaults"])
    assert view["settings"]["MMR_LAMBDA"] == {"description": "Relevance against diversity in the diversity pass.",
                                              "min": 0.0, "max": 1.0, "choices": [], "type": "number"}
    assert view["settings"]["RERANK_MODE"]["choices"] == ["auto", "on", "off"]
    assert view["settings"]["DEFAULT_HOPS"]["type"] == "integer"
    assert view["settings"]["TIMEZONE"]["min"] is None and view["settings"]["TIMEZONE"]["type"] == "string"


def test_a_patch_is_checked_whole_and_nothing_is_half_written(api):
    changed = api.patch("/config", json={"RERANK_MODE": "off", "MMR_LAMBDA": 0.5})
    assert changed.status_code == 200 and changed.json()["config"]["RERANK_MODE"] == "off"
    for bad, message in [
        ({"KEYWORD_CANDIDATE_LIMIT": 100, "RERANK_MODE": "sometimes"}, "RERANK_MODE must be one of: auto, on, off"),
        ({"MMR_LAMBDA": 0.9, "KEYWORD_CANDIDATE_LIMIT": 10}, "KEYWORD_CANDIDATE_LIMIT must be between 50 and 2000"),
        ({"DEFAULT_HOPS": 1.5}, "DEFAULT_HOPS must be an integer"),
        ({"DEFAULT_HOPS": True}, "DEFAULT_HOPS must be an integer"),
        ({"NOT_A_SETTING": 1}, "Unknown setting: NOT_A_SETTING"),
        ({"RECENCY_FLOOR_VOLATILE": 0.7}, "RECENCY_FLOOR_VOLATILE <= RECENCY_FLOOR <= RECENCY_FLOOR_DURABLE"),
        ({"DUPLICATE_FLAG_THRESHOLD": 0.99}, "DUPLICATE_FLAG_THRESHOLD < DUPLICATE_BLOCK_THRESHOLD"),
        ({"TIMEZONE": "Mars/Olympus"}, "TIMEZONE must be an IANA time zone"),
    ]:
        response = api.patch("/config", json=bad)
        assert response.status_code == 400 and message in response.json()["error"], (bad, response.text)
    assert api.patch("/config", content=b"{oops").status_code == 400
    assert api.get("/config").json()["overrides"] == {"RERANK_MODE": "off", "MMR_LAMBDA": 0.5}

    reset = api.delete("/config/RERANK_MODE")
    assert reset.status_code == 200 and reset.json()["config"]["RERANK_MODE"] == "auto"
    assert api.delete("/config/NOPE").status_code == 404
    assert api.get("/config").json()["overrides"] == {"MMR_LAMBDA": 0.5}


def test_changes_apply_to_the_next_request_and_survive_a_restart(tmp_path):
    server = Server(tmp_path / "brain").start()
    with server.client() as api:
        a = api.post("/capture", json={"content": "The heron survey starts at the north pond"}).json()["id"]
        b = api.post("/capture", json={"content": "Binoculars are stored in the blue locker"}).json()["id"]
        api.post("/link", json={"source_id": a, "target_id": b, "type": "caused_by"})
        assert [r["id"] for r in api.get("/recall", params={"query": "heron survey"}).json()["results"]] == [a]
        api.patch("/config", json={"DEFAULT_HOPS": 1})
        assert [r["id"] for r in api.get("/recall", params={"query": "heron survey"}).json()["results"]] == [a, b]
        unlinked = api.get("/recall", params={"query": "heron survey", "hops": 0}).json()["results"]
        assert [r["id"] for r in unlinked] == [a]

        api.patch("/config", json={"TIMEZONE": "Asia/Tokyo"})
        due = api.post("/capture", json={"content": "File the survey report", "when": "2031-05-01"}).json()["id"]
        when_at = api.get("/entry", params={"id": due}).json()["entry"]["when_at"]
        assert when_at == int(datetime(2031, 5, 1, tzinfo=ZoneInfo("Asia/Tokyo")).timestamp() * 1000)

        api.post("/capture", json={"content": "The wifi password at the cabin is on the fridge."})
        paraphrase = "You can find the cabin wifi password on the fridge."  # cosine 0.93: flagged by default
        api.patch("/config", json={"DUPLICATE_FLAG_THRESHOLD": 0.95, "DUPLICATE_RESTATE_THRESHOLD": 0.95})
        assert "warning" not in api.post("/capture", json={"content": paraphrase}).json()
    server.stop()
    restarted = Server(tmp_path / "brain").start()
    with restarted.client() as api:
        assert api.get("/config").json()["overrides"] == {
            "DEFAULT_HOPS": 1, "TIMEZONE": "Asia/Tokyo", "DUPLICATE_FLAG_THRESHOLD": 0.95,
            "DUPLICATE_RESTATE_THRESHOLD": 0.95}
    restarted.stop()


def test_stored_settings_that_no_longer_hold_are_listed_and_logged_once(tmp_path):
    brain = build(Settings(data_dir=tmp_path / "brain"))  # as an older build, which accepted these, left them
    brain.store.append(envelopes(Context(brain.owner, "old-build"), STREAM, 0,
                                 [ConfigChanged({"RECENCY_FLOOR": 0.05, "MMR_LAMBDA": 2.5, "TAG_BOOST_STEP": 0.2})],
                                 "", 1))
    brain.close()
    server = Server(tmp_path / "brain", in_process=False).start()  # its log is what is read
    with server.client() as api:
        for _ in range(3):
            view = api.get("/config").json()
            api.get("/recall", params={"query": "anything"})
    output = server.stop()
    assert view["overrides"] == {"TAG_BOOST_STEP": 0.2} and view["config"]["MMR_LAMBDA"] == 0.7
    assert [(i["key"], i["value"]) for i in view["ignored"]] == [("MMR_LAMBDA", 2.5), ("RECENCY_FLOOR", 0.05)]
    assert "MMR_LAMBDA must be between 0.0 and 1.0" in view["ignored"][0]["reason"]
    assert output.count("WARNING") == 2 and "MMR_LAMBDA=2.5" in output and "RECENCY_FLOOR=0.05" in output, output
