"""Every outcome of a capture, over HTTP against a real server and the real local model: first with no
language model (rules only), then with a real OpenAI-compatible test server scripted for each verdict."""

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.openai_server import FakeOpenAI

from .conftest import Server

pytestmark = pytest.mark.model  # near-duplicates and paraphrases are judged by the packaged model


def capture(api, content, **fields):
    response = api.post("/capture", json={"content": content, **fields})
    assert response.status_code == 200, response.text
    return response.json()


def entry(api, memory_id):
    return api.get("/entry", params={"id": memory_id}).json()["entry"]


def events(api, memory_id):
    """What happened to a memory, leaving out the opening of it that reading its entry here records."""
    return [t["event"] for t in entry(api, memory_id)["timeline"] if t["event"] != "opened"]


# -- without a model ----------------------------------------------------------------------------------------------


def test_a_repeat_sent_at_once_is_blocked_and_nothing_is_stored(api):
    first = capture(api, "Dana works at Acme Corp as a designer.")
    blocked = capture(api, "dana works at acme corp as a designer")  # before the first was even indexed
    assert blocked["ok"] is False and blocked["duplicate"] is True and blocked["matchId"] == first["id"]
    assert blocked["score"] >= 97 and blocked["message"] == "Near-exact duplicate detected — not stored"
    assert set(blocked) == {"ok", "duplicate", "matchId", "score", "message", "workspace", "undo"}
    assert api.get("/count").json() == {"count": 1}
    assert '"force": true' in blocked["undo"]  # the undo it names: store it anyway
    anyway = capture(api, "dana works at acme corp as a designer", force=True)
    assert anyway["ok"] is True and anyway["id"] != first["id"] and api.get("/count").json() == {"count": 2}


def test_a_near_duplicate_is_stored_and_flagged(api):
    first = capture(api, "The wifi password at the cabin is on the fridge.")
    flagged = capture(api, "You can find the cabin wifi password on the fridge.")
    assert flagged["ok"] is True and flagged["warning"] == "similar" and flagged["matchId"] == first["id"]
    assert 90 <= flagged["score"] < 100
    assert flagged["message"] == "Stored but similar entry exists — tagged as duplicate-candidate"
    assert "duplicate-candidate" in flagged["tags"] and "duplicate-candidate" in entry(api, flagged["id"])["tags"]
    suspected = [t for t in entry(api, flagged["id"])["timeline"] if t["event"] == "duplicate_suspected"]
    assert suspected[0]["payload"] == {"match_id": first["id"], "score": flagged["score"]}
    assert api.get("/count").json() == {"count": 2}


def test_a_contradiction_retires_the_older_note_for_audit(api):
    old = capture(api, "I am allergic to peanuts.")["id"]
    new = capture(api, "I am not allergic to peanuts.")
    assert new["ok"] is True and new["resolved_conflict"] == old and "negates" in new["reason"]
    assert "contradiction-resolved" in new["tags"]

    retired, current = entry(api, old), entry(api, new["id"])
    assert "status:deprecated" in retired["tags"] and retired["contradiction_losses"] == 1
    assert current["contradiction_wins"] == 1 and current["contradiction_losses"] == 0
    assert events(api, old)[-2:] == ["status_changed", "contradiction_lost"]
    assert "contradiction_won" in events(api, new["id"])
    [edge] = api.get("/connections", params={"id": new["id"]}).json()["connections"]
    assert (edge["id"], edge["type"], edge["provenance"], edge["weight"]) == (old, "supersedes", "system", 1.0)
    assert [r["id"] for r in api.get("/recall", params={"query": "peanuts allergy"}).json()["results"]] == [new["id"]]


def test_a_canonical_memory_wins_and_the_newcomer_is_kept_as_a_draft(api):
    canonical = capture(api, "The deploy window is Friday afternoon.")["id"]
    api.post("/status", json={"id": canonical, "status": "canonical"})
    draft = capture(api, "The deploy window is Thursday afternoon.")
    assert draft["ok"] is True and draft["status"] == "draft" and draft["kept_canonical"] == canonical
    assert draft["reason"] == "Conflicts with a confirmed canonical memory."
    assert "status:draft" in entry(api, draft["id"])["tags"]
    kept = entry(api, canonical)
    assert "status:canonical" in kept["tags"] and kept["contradiction_wins"] == 1
    assert entry(api, draft["id"])["contradiction_losses"] == 1


def test_a_transcript_never_overrides_a_memory_from_another_source(api):
    stored = capture(api, "Kim is the product owner for the billing service.")["id"]
    draft = capture(api, "Lee is now the product owner for the billing service.", source="claude-code")
    assert draft["status"] == "draft" and draft["kept_canonical"] == stored and "transcript" in draft["reason"]
    assert "status:deprecated" not in entry(api, stored)["tags"]


def test_unrelated_and_merely_similar_notes_are_stored_plainly(api):
    capture(api, "Renew the passport before the trip to Japan")
    plain = capture(api, "The espresso machine needs descaling every month")
    assert set(plain) == {"ok", "id", "tags", "workspace", "visibility"}
    assert (plain["workspace"], plain["visibility"]) == ("personal", "Saved in your personal workspace: only you can "
                                                                     "read it")
    assert api.get("/count").json() == {"count": 2}


# -- with a language model ------------------------------------------------------------------------------------------


class Script:
    """Plays the language model: verdicts from `verdict(new, stored, full)`, classifications from `classify`."""

    def __init__(self) -> None:
        self.verdict = lambda new, stored, full: {"action": "keep_both"} if full else {"contradicts": False}
        self.classify = lambda note: {"importance": 3, "canonical": False, "kind": "semantic"}
        self.meet: threading.Barrier | None = None  # the first verdict requests wait here for one another, once

    def __call__(self, body: dict) -> str:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system.startswith("You classify"):
            return json.dumps(self.classify(user.split("Note:\n", 1)[1].split("\n\nAnswer", 1)[0]))
        if (meet := self.meet) is not None:
            try:
                meet.wait(timeout=0.8)  # within the server's 1 s model timeout
            except threading.BrokenBarrierError:
                pass  # they never overlapped: the test says so below
            self.meet = None  # before either answer is sent, so a later verdict request goes straight through
        new = user.split("New note:\n", 1)[1].split("\n\nStored notes:\n", 1)[0]
        stored = dict(re.findall(r"^\[([0-9a-f-]{36})\] (.*)$", user, re.MULTILINE))
        answer = self.verdict(new, stored, '"action"' in user)
        if isinstance(answer, str):
            return answer
        return "Sure! Here is my verdict:\n```json\n" + json.dumps(answer) + "\n```"


@pytest.fixture
def model():
    script = Script()
    endpoint = FakeOpenAI(script)
    yield script, endpoint
    endpoint.close()


@pytest.fixture
def smart_server(tmp_path, model):
    _, endpoint = model
    server = Server(tmp_path / "brain", model=True, env={"BRAIN_LLM": "openai", "BRAIN_LLM_BASE_URL": endpoint.url,
                                             "BRAIN_LLM_MODEL": "tiny", "BRAIN_LLM_TIMEOUT": "1"}).start()
    with server.client() as api:
        yield server, api
    server.stop()


@pytest.fixture
def smart(smart_server):
    return smart_server[1]


def only(stored):
    [(memory_id, text)] = stored.items()
    return memory_id, text


def test_the_model_merges_overlapping_notes_into_one(smart, model):
    script, _ = model
    old = capture(smart, "The pricing floor for enterprise deals is $6k per year.")["id"]
    script.verdict = lambda new, stored, full: {"action": "merge", "target_id": only(stored)[0], "reason": "overlap",
                                                "merged_content": only(stored)[1] + " Approved by finance."}
    merged = capture(smart, "The pricing floor for enterprise deals is $6k per year, approved by finance.")
    assert merged == {"ok": True, "id": old, "action": "merged", "tags": merged["tags"],
                      "message": "Memories merged into a single combined entry", "workspace": "personal",
                      "visibility": "Saved in your personal workspace: only you can read it",
                      "conflict": merged["conflict"], "undo": merged["undo"]}  # tests/e2e/test_conflicts.py
    assert entry(smart, old)["content"] == \
        "The pricing floor for enterprise deals is $6k per year. Approved by finance."
    updated = [t for t in entry(smart, old)["timeline"] if t["event"] == "updated"]
    assert updated[0]["payload"]["reason"] == "merged"
    assert smart.get("/count").json() == {"count": 1}


def test_a_merge_that_drops_facts_keeps_both_notes(smart, model):
    script, _ = model
    old = capture(smart, "The pricing floor for enterprise deals is $6k per year.")["id"]
    script.verdict = lambda new, stored, full: {"action": "merge", "target_id": old, "merged_content": "Pricing."}
    kept = capture(smart, "The pricing floor for enterprise deals is $6k per year, approved by finance.")
    assert kept["warning"] == "similar" and kept["id"] != old
    assert entry(smart, old)["content"] == "The pricing floor for enterprise deals is $6k per year."


def test_the_model_replaces_an_outdated_note(smart, model):
    script, _ = model
    old = capture(smart, "The design review is every second Thursday.")["id"]
    script.verdict = lambda new, stored, full: {"action": "replace", "target_id": old, "reason": "newer"}
    replaced = capture(smart, "The design review is now every second Thursday afternoon.")
    assert (replaced["id"], replaced["action"]) == (old, "replaced")
    assert replaced["message"] == "New memory replaced an outdated existing entry"
    assert entry(smart, old)["content"] == "The design review is now every second Thursday afternoon."


def test_the_model_finds_a_contradiction_the_rules_cannot(smart, model):
    script, _ = model
    old = capture(smart, "Our staging database runs Postgres 14.")["id"]
    reason = "The database was upgraded to Postgres 16."
    script.verdict = lambda new, stored, full: (
        {"action": "contradiction", "target_id": old, "reason": reason} if full
        else {"contradicts": True, "conflicting_id": old, "reason": reason})
    resolved = capture(smart, "Staging got upgraded; its database is on Postgres 16 since Monday.")
    assert (resolved["resolved_conflict"], resolved["reason"]) == (old, reason)
    assert "status:deprecated" in entry(smart, old)["tags"]


@pytest.mark.parametrize("action", ["contradiction", "replace"])
def test_a_model_that_would_retire_a_look_alike_is_overruled(smart, model, action):
    """Another person and another quarter: the model's wrong verdict meets the rules' one-subject test, and
    both notes stay as they were."""
    script, _ = model
    older = "Remind me Monday at 9 to send Lucia the Q1 revenue report"
    old = capture(smart, older)["id"]
    script.verdict = lambda new, stored, full: (
        {"action": action, "target_id": old, "reason": "newer"} if full
        else {"contradicts": True, "conflicting_id": old, "reason": "newer"})
    kept = capture(smart, "Remind me Monday at 15 to send Kenji the Q4 churn report")
    assert kept["ok"] is True and kept["id"] != old and "resolved_conflict" not in kept
    stays = entry(smart, old)
    assert stays["content"] == older and "status:deprecated" not in stays["tags"]


@pytest.mark.parametrize(("older", "newer"), [
    ("I live in NYC", "I moved to LA"),  # the reference's examples: a change worded with its own verb
    ("Meeting Tuesday 2pm", "Meeting moved to Wednesday 3pm"),
])
def test_a_models_contradiction_about_the_same_subject_is_honoured(smart, model, older, newer):
    script, _ = model
    old = capture(smart, older)["id"]
    script.verdict = lambda new, stored, full: (
        {"action": "contradiction", "target_id": old, "reason": "moved"} if full
        else {"contradicts": True, "conflicting_id": old, "reason": "moved"})
    resolved = capture(smart, newer)
    assert resolved["resolved_conflict"] == old and "warning" not in resolved
    assert "status:deprecated" in entry(smart, old)["tags"]


def test_a_canonical_memory_a_model_contradicts_is_kept_and_the_newcomer_drafted(smart, model):
    script, _ = model
    old = capture(smart, "I live in NYC")["id"]
    smart.post("/status", json={"id": old, "status": "canonical"})
    script.verdict = lambda new, stored, full: (
        {"action": "contradiction", "target_id": old, "reason": "moved"} if full
        else {"contradicts": True, "conflicting_id": old, "reason": "moved"})
    draft = capture(smart, "I moved to LA")
    assert draft["status"] == "draft" and draft["kept_canonical"] == old
    assert "status:canonical" in entry(smart, old)["tags"]


def test_a_models_contradiction_about_another_subject_is_refused(smart, model):
    script, _ = model
    old = capture(smart, "Karim lives in Porto")["id"]
    script.verdict = lambda new, stored, full: (
        {"action": "contradiction", "target_id": old, "reason": "moved"} if full
        else {"contradicts": True, "conflicting_id": old, "reason": "moved"})
    kept = capture(smart, "Lea moved to Lisbon")
    assert "resolved_conflict" not in kept and kept["id"] != old
    assert "status:deprecated" not in entry(smart, old)["tags"]


def test_protected_memories_are_flagged_instead_of_merged(smart, model):
    script, _ = model
    old = capture(smart, "The design review is every second Thursday.")["id"]
    smart.post("/status", json={"id": old, "status": "canonical"})
    script.verdict = lambda new, stored, full: {"action": "merge", "target_id": old, "merged_content": "x y"}
    flagged = capture(smart, "The design review is now every second Thursday afternoon.")
    assert flagged["warning"] == "similar" and flagged["id"] != old
    assert entry(smart, old)["content"] == "The design review is every second Thursday."


def test_the_model_refines_the_classification_in_the_background(smart, model):
    script, _ = model
    script.classify = lambda note: {"importance": 5, "canonical": True, "kind": "fact"}
    memory_id = capture(smart, "The production database password lives in the team vault.")["id"]
    deadline = time.monotonic() + 10
    while entry(smart, memory_id)["importance_score"] != 5:
        assert time.monotonic() < deadline, "the model's classification never landed"
        time.sleep(0.05)
    classified = [t["payload"] for t in entry(smart, memory_id)["timeline"] if t["event"] == "classified"]
    assert [c["method"] for c in classified] == ["rules", "model"]
    assert {"kind:semantic", "status:canonical"} <= set(entry(smart, memory_id)["tags"])


@pytest.mark.parametrize("mode", ["http500", "garbage", "slow", "nonsense"])
def test_a_failing_model_never_fails_a_capture_nor_touches_a_memory(smart, model, mode):
    script, endpoint = model
    old = capture(smart, "The wifi password at the cabin is on the fridge.")["id"]
    if mode == "nonsense":
        script.verdict = lambda new, stored, full: {"action": "merge", "target_id": "no-such-id"}
    else:
        endpoint.mode = mode
    started = time.monotonic()
    flagged = capture(smart, "You can find the cabin wifi password on the fridge.")
    assert time.monotonic() - started < 5
    assert flagged["ok"] is True and flagged["warning"] == "similar"  # the rules decided
    assert entry(smart, old)["content"] == "The wifi password at the cabin is on the fridge."
    assert smart.get("/count").json() == {"count": 2}


def test_two_clients_racing_to_merge_into_one_memory_lose_nothing(smart, model):
    script, endpoint = model
    old = capture(smart, "The pricing floor for enterprise deals is $6k per year.")["id"]

    def merge(new, stored, full):
        target, text = next(iter(stored.items()))
        return {"action": "merge", "target_id": target, "merged_content": f"{text} {new}"}

    script.verdict, script.meet = merge, threading.Barrier(2)  # both requests are in the model at the same time
    notes = ["The pricing floor for enterprise deals is $6k per year, approved by finance.",
             "The pricing floor for enterprise deals is $6k per year, set by Dana."]
    barrier = threading.Barrier(2)

    def send(note):
        barrier.wait()
        return capture(smart, note)

    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(send, notes))
    assert all(o["ok"] for o in outcomes)
    contents = " ".join(e["content"] for e in smart.get("/list").json())
    assert "approved by finance" in contents and "set by Dana" in contents  # both survived the race
    assert any(o.get("action") == "merged" and o["id"] == old for o in outcomes)
    verdicts = [r for r in endpoint.requests if "New note:" in r["messages"][-1]["content"]]
    # The loser decided again: on the merged note (a third verdict), or, when the merged note's new vectors were
    # not ready yet, on a brain where nothing similar was indexed, which stores it apart. Never a silent overwrite.
    assert len(verdicts) >= 3 or len({o["id"] for o in outcomes}) == 2, outcomes


# -- Idempotency-Key ------------------------------------------------------------------------------------------------


def test_a_capture_retried_with_its_idempotency_key_is_stored_once(api):
    headers = {"Idempotency-Key": "retry-7f3a"}
    body = {"content": "Book the venue for the spring offsite", "tags": ["events"]}
    first = api.post("/capture", json=body, headers=headers).json()
    assert first["ok"] is True and api.post("/capture", json=body, headers=headers).json() == first
    assert api.get("/count").json() == {"count": 1}
    other = api.post("/capture", json={"content": "Something else entirely"}, headers=headers)
    assert other.status_code == 409 and "different capture" in other.json()["error"]
    assert api.post("/capture", json=body, headers={"Idempotency-Key": ""}).status_code == 400


def test_racing_duplicates_with_one_idempotency_key_store_one_memory(api):
    body = {"content": "Renew the domain name before it lapses in March"}

    def send(_):
        return api.post("/capture", json=body, headers={"Idempotency-Key": "race-1"}).json()

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(send, range(6)))
    assert len({a["id"] for a in answers}) == 1 and all(a["ok"] for a in answers)
    assert api.get("/count").json() == {"count": 1}


def every_byte(server) -> str:
    """Every file of the brain's data directory, as text (the server checkpoints its WAL after a forget)."""
    return "".join(p.read_bytes().decode("latin-1") for p in server.data_dir.rglob("*") if p.is_file())


def everything_said_of(api, memory_id: str, then: int) -> str:
    """What every read of a memory answers: its entry with diffs, its entry as it was at `then`, the export, and a
    recall for its words."""
    return json.dumps([api.get("/entry", params={"id": memory_id, "diff": "1"}).json(),
                       api.get("/entry", params={"id": memory_id, "as_of": str(then)}).json(),
                       api.get("/export").json(), api.get("/recall", params={"query": "falcon go-live"}).json()])


def test_forget_takes_its_words_out_of_the_model_reasons_and_merges_they_were_copied_into(smart_server, model):
    """Issue 62 item 3: a model's reason quoting the forgotten note on the memory it retired, and a note merged
    into another memory then split out with "keep both", leave nothing of their words once forgotten."""
    server, api = smart_server
    script, _ = model
    old = capture(api, "The Falcon go-live date is May 5.")["id"]
    note = "The Falcon go-live date is now June 9: vendor ZEPHYRINE missed the audit."
    script.verdict = lambda new, stored, full: (
        {"action": "contradiction", "target_id": old, "reason": f"'{new}' moves the date"} if full
        else {"contradicts": True, "conflicting_id": old, "reason": f"'{new}' moves the date"})
    newer = capture(api, note)
    assert newer["resolved_conflict"] == old and "ZEPHYRINE" in json.dumps(entry(api, old)["timeline"])

    floor = capture(api, "The agency pricing floor is $6k per project.")["id"]
    folded = "The agency pricing floor is $6k per project, signed off by QUILLFEATHER."
    script.verdict = lambda new, stored, full: (
        {"action": "merge", "target_id": floor, "reason": "overlap",
         "merged_content": "The agency pricing floor is $6k per project. Signed off by QUILLFEATHER."} if full
        else {"contradicts": False})
    merged = capture(api, folded)
    assert merged["action"] == "merged" and "QUILLFEATHER" in entry(api, floor)["content"]
    then = int(time.time() * 1000)
    time.sleep(0.01)
    split = api.post("/conflicts/answer", json={"conflict": merged["conflict"], "keep": "both"}).json()["stored"]
    assert entry(api, split)["content"] == folded

    for forgotten in (newer["id"], split):
        assert api.post("/forget", json={"id": forgotten}).json()["ok"] is True
    said = everything_said_of(api, old, then) + everything_said_of(api, floor, then)
    assert "ZEPHYRINE" not in said  # the model's reason, on the memory it retired
    assert "QUILLFEATHER" not in said  # the note merged in, then split out
    assert entry(api, floor)["content"] == "The agency pricing floor is $6k per project."
    stored = every_byte(server)
    assert "ZEPHYRINE" not in stored and "QUILLFEATHER" not in stored
