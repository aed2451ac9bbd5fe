"""The review list over HTTP: what capture decided about pairs of memories, each answered in one call (keep both,
the newer, the older), "keep both" undoing an automatic outcome exactly; the answer is in both timelines."""

import json
from datetime import date, timedelta

import anyio
import httpx
import pytest

from .test_capture_outcomes import model, only, smart, smart_server  # noqa: F401  (fixtures)
from .test_mcp import call, over_http


def capture(api, content, **fields):
    response = api.post("/capture", json={"content": content, **fields})
    assert response.status_code == 200, response.text
    return response.json()


def entry(api, memory_id):
    return api.get("/entry", params={"id": memory_id}).json()["entry"]


def pending(api):
    return api.get("/conflicts").json()["conflicts"]


def answer(api, conflict, keep):
    return api.post("/conflicts/answer", json={"conflict": conflict, "keep": keep})


OLDER = "The weekly sync with the design team is on Mondays at 14:00"
NEWER = "The weekly sync with the design team moved to Wednesdays at 11:00"


def test_a_retirement_is_listed_and_keep_both_undoes_it_exactly(api):
    old = capture(api, OLDER)["id"]
    before = entry(api, old)
    new = capture(api, NEWER)
    assert new["resolved_conflict"] == old
    assert new["conflict"] in new["undo"] and '"keep": "both"' in new["undo"]

    [item] = pending(api)
    assert (item["conflict"], item["kind"], item["older"]["id"], item["newer"]["id"]) == (
        new["conflict"], "retired", old, new["id"])
    assert api.get("/brief").json()["attention"]["conflicts"] == 1
    assert item["answers"] == ["both", "newer", "older"] and item["reason"]

    done = answer(api, new["conflict"], "both")
    assert done.status_code == 200, done.text
    assert done.json()["kept"] == [old, new["id"]]
    restored = entry(api, old)
    assert restored["tags"] == before["tags"] and restored["content"] == OLDER
    assert "contradiction-resolved" not in entry(api, new["id"])["tags"]
    for memory_id in (old, new["id"]):
        [said] = [t for t in entry(api, memory_id)["timeline"] if t["event"] == "conflict_answered"]
        assert said["payload"] == {"item": new["conflict"], "kind": "retired", "keep": "both",
                                   "other_id": new["id"] if memory_id == old else old}
    assert pending(api) == [] and api.get("/brief").json()["attention"]["conflicts"] == 0
    again = answer(api, new["conflict"], "older")
    assert (again.status_code, again.json()["ok"]) == (409, False) and "answered already" in again.json()["error"]
    found = [r["id"] for r in api.get("/recall", params={"query": "weekly sync design team"}).json()["results"]]
    assert set(found[:2]) == {old, new["id"]}


def test_a_moved_meetings_old_reminder_goes_with_its_retirement_and_comes_back_with_keep_both(api):
    """Issue 60, item 4: the reminder of a retired note is no longer due; undoing the retirement brings it back."""
    first, second = (date.today() + timedelta(days=n) for n in (40, 41))  # well ahead, whenever this runs
    old = capture(api, f"The Atlas go/no-go meeting is on {first.isoformat()} at 10:00")
    assert old["reminder"] is not None
    before = entry(api, old["id"])
    new = capture(api, f"The Atlas go/no-go meeting moved to {second.isoformat()} at 10:00")
    assert new["resolved_conflict"] == old["id"] and new["reminder"] is not None, new
    assert entry(api, old["id"])["when_at"] is None
    listed = api.get("/due", params={"days": 366}).json()
    due = {r["id"] for r in listed["overdue"] + listed["upcoming"]}
    assert old["id"] not in due and new["id"] in due
    assert answer(api, new["conflict"], "both").status_code == 200
    assert (entry(api, old["id"])["when_at"], entry(api, old["id"])["when_kind"]) == (
        before["when_at"], before["when_kind"])


def test_keep_the_older_brings_it_back_and_retires_the_newer(api):
    old = capture(api, OLDER)["id"]
    new = capture(api, NEWER)
    assert answer(api, new["conflict"], "older").json()["kept"] == [old]
    assert "status:deprecated" not in entry(api, old)["tags"]
    assert "status:deprecated" in entry(api, new["id"])["tags"]


def test_an_unsure_pair_is_kept_flagged_and_answered(api):
    old = capture(api, "Hannah manages the support team")["id"]
    new = capture(api, "Oliver manages the support team")
    assert (new["warning"], new["matchId"]) == ("possible_update", old) and "review" in new["reason"]
    assert "possible-update" in new["tags"]
    found = {r["id"]: r for r in api.get("/recall", params={"query": "who manages the support team"}).json()["results"]}
    assert found[new["id"]]["conflicts_with"] == [old] and found[old]["conflicts_with"] == [new["id"]]
    [item] = pending(api)
    assert (item["kind"], item["older"]["id"], item["newer"]["id"]) == ("possible_update", old, new["id"])
    assert answer(api, item["conflict"], "newer").json()["kept"] == [new["id"]]
    assert "status:deprecated" in entry(api, old)["tags"] and "possible-update" not in entry(api, new["id"])["tags"]
    assert pending(api) == []


def test_bad_answers_get_clear_errors(api):
    for body, status, words in [
        ({"keep": "both"}, 400, "conflict"),
        ({"conflict": "not-an-item", "keep": "both"}, 400, "conflict must be"),
        ({"conflict": "nope@3", "keep": "both"}, 404, "No conflict found"),
        ({"conflict": "x@1", "keep": "all"}, 400, "keep must be one of"),
    ]:
        response = api.post("/conflicts/answer", json=body)
        assert (response.status_code, response.json()["ok"]) == (status, False), response.text
        assert words in response.json()["error"]
    assert api.get("/conflicts", params={"limit": "many"}).status_code == 400


def test_a_member_never_sees_the_owners_pairs(server, api):
    capture(api, OLDER)
    new = capture(api, NEWER)
    body = api.post("/team/members", json={"name": "Bob", "email": "bob@example.com", "role": "member"}).json()
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {body['token']}"}) as bob:
        assert bob.get("/conflicts").json()["conflicts"] == []
        assert bob.post("/conflicts/answer", json={"conflict": new["conflict"], "keep": "older"}).status_code == 404


@pytest.mark.parametrize("keep", ["both", "older"])
def test_a_merge_is_undone_exactly_and_the_note_kept_on_its_own(smart, model, keep):  # noqa: F811
    script, _ = model
    older = "The pricing floor for enterprise deals is $6k per year."
    old = capture(smart, older)["id"]
    before = entry(smart, old)
    script.verdict = lambda new, stored, full: {"action": "merge", "target_id": only(stored)[0], "reason": "overlap",
                                                "merged_content": only(stored)[1] + " Approved by finance."}
    note = "The pricing floor for enterprise deals is $6k per year, approved by finance."
    merged = capture(smart, note)
    assert merged["action"] == "merged" and merged["conflict"].startswith(old + "@")
    [item] = pending(smart)
    assert (item["kind"], item["older"]["id"], item["newer"], item["note"]) == ("merged", old, None, note)

    done = answer(smart, merged["conflict"], keep).json()
    restored = entry(smart, old)
    assert (restored["content"], restored["tags"], restored["importance_score"]) == (
        older, before["tags"], before["importance_score"])
    if keep == "both":
        assert entry(smart, done["stored"])["content"] == note and done["kept"] == [old, done["stored"]]
    else:
        assert "stored" not in done and done["kept"] == [old]


def test_an_answer_never_overwrites_a_later_edit(smart, model):  # noqa: F811
    script, _ = model
    old = capture(smart, "The design review is every second Thursday.")["id"]
    script.verdict = lambda new, stored, full: {"action": "replace", "target_id": old, "reason": "newer"}
    replaced = capture(smart, "The design review is now every second Thursday afternoon.")
    assert smart.post("/update", json={"id": old, "content": "The design review is on Fridays."}).status_code == 200
    refused = answer(smart, replaced["conflict"], "both")
    assert refused.status_code == 409 and "changed after the capture" in refused.json()["error"]
    assert entry(smart, old)["content"] == "The design review is on Fridays."


def test_an_agent_reviews_and_answers_over_mcp(server, api):
    old = capture(api, OLDER)["id"]
    new = capture(api, NEWER)

    async def session():
        async with over_http(server) as client:
            listed = json.loads(await call(client, "conflicts"))
            assert [(c["conflict"], c["kind"]) for c in listed["conflicts"]] == [(new["conflict"], "retired")]
            done = json.loads(await call(client, "answer_conflict", conflict=new["conflict"], keep="both"))
            assert done["kept"] == [old, new["id"]]
            assert json.loads(await call(client, "conflicts"))["conflicts"] == []

    anyio.run(session)


def test_a_draft_kept_beside_a_canonical_memory_and_a_similar_pair_are_answered(api):
    canonical = capture(api, "The deploy window is Friday afternoon.")["id"]
    api.post("/status", json={"id": canonical, "status": "canonical"})
    draft = capture(api, "The deploy window is Thursday afternoon.")
    assert draft["status"] == "draft" and draft["conflict"]
    first = capture(api, "The wifi password at the cabin is on the fridge.")["id"]
    similar = capture(api, "You can find the cabin wifi password on the fridge.")
    assert similar.get("warning") == "similar", similar
    kinds = {i["kind"]: i for i in pending(api)}
    assert set(kinds) == {"kept_canonical", "similar"}
    assert (kinds["kept_canonical"]["older"]["id"], kinds["kept_canonical"]["newer"]["id"]) == (canonical, draft["id"])

    assert answer(api, draft["conflict"], "both").status_code == 200  # the undo: the draft becomes an ordinary note
    assert not any(t.startswith("status:") for t in entry(api, draft["id"])["tags"])
    assert "status:canonical" in entry(api, canonical)["tags"]
    assert answer(api, kinds["similar"]["conflict"], "both").status_code == 200
    assert "duplicate-candidate" not in entry(api, similar["id"])["tags"]
    assert "status:deprecated" not in entry(api, first)["tags"] and pending(api) == []
