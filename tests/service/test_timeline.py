"""The audit feed on a real SQLite brain and on the AWS one (the DynamoDB log through moto, whose positions are
sparse, projected into the OpenSearch node): newest first, paged by log position; scoped to what the caller reads now
(another member's private history never shows, a share shows the past to the team, an unshare takes it back, a
forgotten memory leaves only a `deleted` item); filters by memory, actor, type and time; bounded work."""

import json

import pytest

from second_brain.adapters.embedder.fake import FakeEmbedder
from second_brain.app import operations as ops
from second_brain.app.handling import Context
from second_brain.app.past import timeline
from second_brain.domain.errors import InvalidInput, NotFound
from second_brain.domain.team import token_hash
from tests.support.brains import make_brain

SECRET = "SECRET-HERON-4417"
STEP_MS = 60_000


@pytest.fixture(params=["sqlite", "aws"])
def brain(request, tmp_path, clock):
    brain = make_brain(request.param, request, tmp_path, clock, FakeEmbedder())
    yield brain
    brain.close()


@pytest.fixture
def people(brain):
    owner = Context(brain.team.owner_identity(), "owner")
    found = {"owner": owner}
    for name, role in (("Ann", "admin"), ("Bob", "member"), ("Cat", "member")):
        token = brain.team.add_member(owner, name, role=role)["token"]
        found[name] = Context(brain.team.member_identity(token_hash(token)), name.lower())
    found["owner"] = Context(brain.team.owner_identity(), "owner")  # with the roster as it is now
    return found


def feed(brain, ctx, **kwargs) -> list[dict]:
    return ops.timeline(brain, ctx, limit=200, **kwargs)["timeline"]


def about(items, memory_id) -> list[str]:
    return [i["type"] for i in items if i["stream"] == {"kind": "memory", "id": memory_id}]


def test_the_feed_is_newest_first_and_says_what_happened_without_the_text(brain, people, clock):
    owner = people["owner"]
    first = ops.capture(brain, owner, f"Kettle {SECRET} lives in the cupboard", tags=["home"])["id"]
    clock.advance(STEP_MS)
    second = ops.capture(brain, owner, "Mugs are above the kettle")["id"]
    ops.append(brain, owner, first, f"And the teabags {SECRET}")
    ops.link(brain, owner, first, second, "relates_to")
    answer = ops.timeline(brain, owner)
    items = answer["timeline"]
    assert answer["order"] == "newest_first" and answer["next_cursor"] is None and answer["limit"] == 50
    assert [i["position"] for i in items] == sorted((i["position"] for i in items), reverse=True)
    assert set(items[0]) == {"position", "at", "type", "stream", "actor_name", "description"}
    assert about(items, first)[::-1][:3] == ["created", "classified", "appended"]
    created = next(i for i in items if i["stream"]["id"] == first and i["type"] == "created")
    assert created["actor_name"] == "Owner" and "home" in created["description"]
    link = next(i for i in items if i["stream"]["kind"] == "edge")
    assert link["type"] == "link_created" and first in link["description"] and second in link["description"]
    assert link["stream"]["id"] == f"link-relates_to-{min(first, second)}-{max(first, second)}"
    assert SECRET not in json.dumps(answer)
    team_event = next(i for i in items if i["stream"]["kind"] == "team")
    assert team_event["type"] == "member_added" and "token" not in json.dumps(team_event).lower()


def test_another_members_private_history_never_shows_until_shared_and_goes_when_taken_back(brain, people, clock):
    bob = people["Bob"]
    private = ops.capture(brain, bob, f"Bob's plan {SECRET}", workspace="personal")["id"]
    ops.append(brain, bob, private, "step two")
    other = ops.capture(brain, bob, "Bob's other note", workspace="personal")["id"]
    ops.link(brain, bob, private, other, "relates_to")
    assert about(feed(brain, bob), private)[::-1][:3] == ["created", "classified", "appended"]
    for who in ("owner", "Ann", "Cat"):
        items = feed(brain, people[who])
        assert about(items, private) == [] and not any(i["stream"]["kind"] == "edge" for i in items)
        with pytest.raises(NotFound, match="No entry found with ID"):
            ops.timeline(brain, people[who], memory_id=private)

    ops.share(brain, bob, private, "company")  # its whole past now shows to the team
    cat = feed(brain, people["Cat"])
    assert about(cat, private)[::-1][:4] == ["created", "classified", "appended", "shared"]
    assert not any(i["stream"]["kind"] == "edge" for i in cat)  # the other end is still Bob's own
    ops.share(brain, bob, other, "company")
    assert [i["type"] for i in feed(brain, people["Cat"], memory_id=private) if i["stream"]["kind"] == "edge"] == [
        "link_created"]

    ops.share(brain, bob, private, "personal")  # taken back: gone from their feed again
    assert about(feed(brain, people["Cat"]), private) == []
    assert not any(i["stream"]["kind"] == "edge" for i in feed(brain, people["Cat"]))


def test_admin_streams_show_to_admins_only(brain, people):
    ops.capture(brain, people["Cat"], "Cat's own note", workspace="personal")
    member_kinds = {i["stream"]["kind"] for i in feed(brain, people["Cat"])}
    assert member_kinds == {"memory"}
    admin_kinds = {i["stream"]["kind"] for i in feed(brain, people["Ann"])}
    assert "team" in admin_kinds and "memory" not in admin_kinds  # Cat's note is Cat's own
    rotated = brain.team.rotate_token(people["owner"], people["Cat"].identity.actor_id)["token"]
    shown = json.dumps(feed(brain, people["Ann"]))
    assert rotated not in shown and token_hash(rotated) not in shown and token_hash(rotated)[:16] not in shown


def test_tags_written_before_a_share_stay_the_authors(brain, people, clock):
    bob, cat = people["Bob"], people["Cat"]
    memory_id = ops.capture(brain, bob, "Shared later", tags=["salary-talk"], workspace="personal")["id"]
    ops.share(brain, bob, memory_id, "company")
    assert "salary-talk" not in json.dumps(feed(brain, cat, memory_id=memory_id))
    assert "salary-talk" in json.dumps(feed(brain, bob, memory_id=memory_id))


def test_a_forgotten_memory_leaves_only_a_deleted_item(brain, people, clock):
    owner, bob = people["owner"], people["Bob"]
    gone = ops.capture(brain, owner, f"Door code {SECRET}", tags=["secret-tag"])["id"]
    kept = ops.capture(brain, owner, "The door is blue")["id"]
    ops.link(brain, owner, gone, kept, "relates_to")
    ops.append(brain, owner, gone, f"{SECRET} again")
    ops.forget(brain, owner, gone)
    items = feed(brain, owner)
    assert about(items, gone) == ["deleted"]
    deleted = next(i for i in items if i["stream"]["id"] == gone)
    assert deleted["actor_name"] == "Owner" and "secret-tag" not in json.dumps(items)
    assert not any(i["stream"]["kind"] == "edge" for i in items)
    assert SECRET not in json.dumps(items)
    with pytest.raises(NotFound):
        ops.timeline(brain, owner, memory_id=gone)
    private = ops.capture(brain, bob, "Bob's note", workspace="personal")["id"]
    ops.forget(brain, bob, private)
    assert about(feed(brain, bob), private) == ["deleted"]
    assert about(feed(brain, owner), private) == []  # Bob's own workspace: not even that it existed


def test_filters_by_memory_actor_type_and_time(brain, people, clock):
    owner, ann = people["owner"], people["Ann"]
    start = clock.now_ms()
    one = ops.capture(brain, owner, "First note about tea", workspace="company")["id"]
    clock.advance(STEP_MS)
    two = ops.capture(brain, ann, "Second note about coffee", workspace="company")["id"]
    ops.link(brain, ann, one, two, "relates_to")
    clock.advance(STEP_MS)
    ops.append(brain, owner, one, "with milk")
    ops.set_status(brain, owner, two, "draft")

    mine = feed(brain, owner, memory_id=one)
    assert [i["type"] for i in mine][::-1] == ["created", "classified", "link_created", "appended"]
    assert {i["stream"]["id"] for i in mine if i["stream"]["kind"] == "memory"} == {one}
    assert {i["actor_name"] for i in feed(brain, owner, actor="Ann")} == {"Ann"}
    assert {i["actor_name"] for i in feed(brain, ann, actor="me")} == {"Ann"}
    brain.maintenance.run(["housekeeping"])
    system = feed(brain, owner, actor="system")
    assert {(i["actor_name"], i["stream"]["kind"]) for i in system} == {("Second Brain", "maintenance")}
    assert [i["type"] for i in system] == ["job_finished", "job_started"]
    assert system[0]["stream"]["id"] == "housekeeping-2026-01"
    assert feed(brain, ann, actor="system") == system and feed(brain, people["Cat"], actor="system") == []
    assert [i["type"] for i in feed(brain, owner, types=["appended", "status_changed"])] == [
        "status_changed", "appended"]
    assert {i["type"] for i in feed(brain, owner, types=["MemoryAppended"])} == {"appended"}
    with pytest.raises(InvalidInput, match="type"):
        ops.timeline(brain, owner, types=["exploded"])
    window = feed(brain, owner, after=start + STEP_MS, before=str(start + STEP_MS))
    assert {i["at"] for i in window} == {start + STEP_MS} and about(window, two)
    iso = feed(brain, owner, after="2026-01-01T00:02:00Z")
    assert {i["at"] for i in iso} == {start + 2 * STEP_MS}
    for name in ("after", "before"):
        with pytest.raises(InvalidInput, match=name):
            ops.timeline(brain, owner, **{name: "yesterday-ish"})


def test_pages_chain_by_cursor_and_each_request_reads_a_bounded_window(brain, people, monkeypatch):
    owner = people["owner"]
    for n in range(12):
        ops.capture(brain, owner, f"Note number {n}")
    everything = feed(brain, owner)
    seen, cursor = [], None
    while True:
        answer = ops.timeline(brain, owner, limit=7, cursor=cursor)
        seen += answer["timeline"]
        cursor = answer["next_cursor"]
        if cursor is None:
            break
        assert answer["timeline"][-1]["position"] == cursor
    assert seen == everything

    monkeypatch.setattr(timeline, "SCAN_CAP", 10)
    monkeypatch.setattr(timeline, "WINDOW", 4)
    calls = []
    scan_back = brain.store.scan_back
    monkeypatch.setattr(brain.store, "scan_back", lambda *a, **k: calls.append(a) or scan_back(*a, **k))
    positions = sorted((e.position for e in brain.store.read_all(0, 10_000)), reverse=True)
    answer = ops.timeline(brain, owner, types=["recalled"])  # nothing matches: the scan stops at the cap
    assert answer["timeline"] == [] and sum(budget for _, _, budget, *_ in calls) <= 10
    cursor = answer["next_cursor"]
    assert answer["scanned"] >= len([p for p in positions if p >= cursor]) > 0  # it read all it stepped over
    if brain.backend == "sqlite":  # gap-free positions: the stretch is exactly the cap
        assert cursor == positions[0] + 1 - 10 and answer["scanned"] == 10
    else:  # a stretch reads at least one event of each of the log index's partitions
        assert answer["scanned"] <= 10 + len(brain.store.partitions)
    later = ops.timeline(brain, owner, cursor=cursor, limit=200)
    assert later["timeline"][0]["position"] < cursor


def test_a_time_window_seeks_by_the_time_index_instead_of_walking_the_log(brain, people, clock, monkeypatch):
    owner = people["owner"]
    old = ops.capture(brain, owner, "An early note")["id"]
    early = clock.now_ms()
    for n in range(30):
        clock.advance(STEP_MS)
        ops.capture(brain, owner, f"Later note {n}")
    monkeypatch.setattr(timeline, "SCAN_CAP", 10)  # less than the 30 later notes: a walk back would give up
    answer = ops.timeline(brain, owner, before=early)
    if brain.backend == "aws":
        # DynamoDB's positions tell a time only within the longest a request can take (15 minutes, here 15 later
        # notes): the walk starts there, and the pages chain down to the note by their cursors.
        found, requests = answer["timeline"], 1
        while answer["next_cursor"] is not None:
            answer = ops.timeline(brain, owner, before=early, cursor=answer["next_cursor"])
            found, requests = found + answer["timeline"], requests + 1
            assert answer["scanned"] <= 10 + len(brain.store.partitions)
        assert about(found, old) and all(i["at"] <= early for i in found)
        assert requests <= len(brain.store.read_all(0, 10_000))  # each request moved on
        return
    assert about(answer["timeline"], old) and answer["timeline"][-1]["at"] <= early
    assert answer["next_cursor"] is None and answer["scanned"] < 10
    recent = ops.timeline(brain, owner, after=clock.now_ms())
    assert [i["at"] for i in recent["timeline"]] and {i["at"] for i in recent["timeline"]} == {clock.now_ms()}
    assert recent["next_cursor"] is None and recent["scanned"] < 10
