"""What every event type looks like to people, pinned word for word: the /entry timeline's name and payload, the
audit feed's type, stream and description, the team's activity feed, and the revisions a memory's stream makes.
One event of every stored type (tests/domain/event_samples.py) goes through each presenter; the key order of every
answer is part of what is pinned (it is the JSON the API sends)."""

import json

import pytest

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.handling import Context, envelopes
from second_brain.app.memories.views import TIMELINE_NAMES, timeline_item
from second_brain.app.past import timeline
from second_brain.app.past.revisions import revisions
from second_brain.app.team.service import TeamService
from second_brain.domain import team as t
from second_brain.domain.events import (
    REGISTRY,
    ContradictionWon,
    DuplicateSuspected,
    Envelope,
    MemoryAppended,
    MemoryCaptured,
    MemoryClassified,
    MemoryImported,
    MemoryReleased,
    MemoryRevised,
    MemoryRolledUp,
    MemoryShared,
    MemoryUnshared,
    StalenessJudged,
    TagsChanged,
)
from second_brain.domain.identity import Identity, owner
from second_brain.domain.patterns import MemoryDrawnInto

from ..domain.event_samples import MEMORY, SAMPLES

READER = Identity("owner", "Ada", "admin", "personal-owner", ("company",), {"m-ann": "Ann", "m-bob": "Bob"},
                  owner=True)
HIDDEN = "m-hidden"  # the one memory the reader cannot read


def stored(stream: str, event: object, workspace: str = "personal-owner") -> Envelope:
    return Envelope(stream, 1, event, "m-ann", workspace, "req", 1_000, 7)


def exactly(answer: object) -> str:
    """The answer as the API sends it: key order included."""
    return json.dumps(answer)


class Rows:
    """The read model as far as the feed asks it: is this memory readable?"""

    def get(self, memory_id: str, readable: tuple[str, ...]) -> object | None:
        return None if memory_id == HIDDEN else object()


# -- /entry's timeline: the name and the payload of each event ---------------------------------------------------------

ENTRY = {
    "MemoryCaptured": ("created", {"source": "api", "tags": ["home", "kitchen"]}),
    "MemoryImported": ("imported", {"source": "import", "tags": ["old"]}),
    "MemoryAppended": ("appended", {"chars": 10}),
    "MemoryRevised": ("updated", {"chars": 13, "reason": "merged"}),
    "TagsChanged": ("tags_changed", {"tags": ["a", "b"]}),
    "StatusChanged": ("status_changed", {"status": "draft"}),
    "MemoryRecalled": ("recalled", {"day": "2026-01-02"}),
    "MemoryOpened": ("opened", {"day": "2026-01-03"}),
    "TimeAnchorSet": ("time_anchor_set", {"when_at": 1800000000000, "when_kind": "due"}),
    "TimeAnchorCleared": ("time_anchor_cleared", {}),
    "MemoryClassified": ("classified", {"importance": 4, "kind": "semantic", "volatility": None, "canonical": True,
                                        "method": "model"}),
    "DuplicateSuspected": ("duplicate_suspected", {"match_id": "m-seen", "score": 93.5}),
    "ContradictionWon": ("contradiction_won", {"other_id": "m-hidden", "reason": "newer"}),
    "ContradictionLost": ("contradiction_lost", {"other_id": "m-seen", "reason": "older"}),
    "MemoryForgotten": ("deleted", {}),
    "WordsErased": ("words_erased", {"events": 2}),
    "MemoryShared": ("shared", {"layer": "company"}),
    "MemoryUnshared": ("unshared", {"layer": "personal"}),
    "StalenessJudged": ("staleness_judged", {"stale": True, "reason": "a date passed"}),
    "MemoryRolledUp": ("rolled_up", {"digest_id": "m-seen"}),
    "MemoryReleased": ("released", {"digest_id": "m-hidden"}),
    "DigestComposed": ("digest_composed", {"sources": 3}),
    "MemoryDrawnInto": ("drawn_into", {"pattern_id": "m-hidden"}),
    "ReminderPushed": ("reminder_pushed", {"when_at": 1800000000000, "devices": 2}),
    "ConflictSuspected": ("conflict_suspected", {"other_id": "m-seen", "reason": "maybe another subject"}),
    "ConflictAnswered": ("conflict_answered",
                         {"item": "m1@3", "kind": "retired", "keep": "both", "other_id": "m-seen"}),
    "MirrorSynced": ("synced", {"source": "notes", "url": "file:///vault/a.md"}),
}
# The same events in other shapes, where the presenter says something else.
ENTRY_VARIANTS = [
    (MemoryRevised("new text", ""), "updated", {"chars": 8}),
    (MemoryCaptured("x", (), "mcp", "personal-owner"), "created", {"source": "mcp", "tags": []}),
    (MemoryImported("x", (), "import", "personal-owner", 1, 2, 0, 0, 0, 0, 0), "imported",
     {"source": "import", "tags": []}),
    (MemoryClassified(2, "episodic", "volatile", False, "rules"), "classified",
     {"importance": 2, "kind": "episodic", "volatility": "volatile", "canonical": False, "method": "rules"}),
    (TagsChanged(()), "tags_changed", {"tags": []}),
    (StalenessJudged(False, ""), "staleness_judged", {"stale": False, "reason": ""}),
]


@pytest.mark.parametrize("type_name", sorted(REGISTRY))
def test_the_entry_timeline_names_and_shows_every_event_type(type_name):
    stream, event = SAMPLES[type_name]
    name, payload = ENTRY.get(type_name, (type_name, {}))  # events of other streams: their stored name, nothing
    assert exactly(timeline_item(stored(stream, event), READER)) == exactly(
        {"event": name, "created_at": 1_000, "actor_name": "Ann", "payload": payload})


@pytest.mark.parametrize(("event", "name", "payload"), ENTRY_VARIANTS)
def test_the_entry_timeline_shows_each_shape_of_an_event(event, name, payload):
    assert exactly(timeline_item(stored(MEMORY, event), READER)) == exactly(
        {"event": name, "created_at": 1_000, "actor_name": "Ann", "payload": payload})


@pytest.mark.parametrize("type_name", sorted(ENTRY))
def test_an_event_written_before_the_memory_reached_the_reader_shows_only_that_it_happened(type_name):
    _, event = SAMPLES[type_name]
    assert exactly(timeline_item(stored(MEMORY, event, "personal-m-bob"), READER)) == exactly(
        {"event": ENTRY[type_name][0], "created_at": 1_000, "actor_name": "Ann", "payload": {"before_shared": True}})


def test_the_entry_timeline_names_are_these():
    assert TIMELINE_NAMES == {type_name: name for type_name, (name, _) in ENTRY.items()}


# -- the audit feed (/timeline): type, stream and a few words ----------------------------------------------------------

FEED = {
    "MemoryCaptured": ("created", {"kind": "memory", "id": "m1"}, "captured from api, tags: home, kitchen"),
    "MemoryImported": ("imported", {"kind": "memory", "id": "m1"}, "imported from import, tags: old"),
    "MemoryAppended": ("appended", {"kind": "memory", "id": "m1"}, "appended 10 characters"),
    "MemoryRevised": ("updated", {"kind": "memory", "id": "m1"}, "merged: now 13 characters"),
    "TagsChanged": ("tags_changed", {"kind": "memory", "id": "m1"}, "tags: a, b"),
    "StatusChanged": ("status_changed", {"kind": "memory", "id": "m1"}, "status: draft"),
    "MemoryRecalled": ("recalled", {"kind": "memory", "id": "m1"}, "recalled"),
    "MemoryOpened": ("opened", {"kind": "memory", "id": "m1"}, "opened"),
    "TimeAnchorSet": ("time_anchor_set", {"kind": "memory", "id": "m1"}, "due at 1800000000000"),
    "TimeAnchorCleared": ("time_anchor_cleared", {"kind": "memory", "id": "m1"}, "time anchor cleared"),
    "MemoryClassified": ("classified", {"kind": "memory", "id": "m1"}, "importance 4, semantic (model)"),
    "DuplicateSuspected": ("duplicate_suspected", {"kind": "memory", "id": "m1"}, "resembles m-seen (93%)"),
    "ContradictionWon": ("contradiction_won", {"kind": "memory", "id": "m1"},
                         "won a contradiction with another memory"),
    "ContradictionLost": ("contradiction_lost", {"kind": "memory", "id": "m1"}, "lost a contradiction with m-seen"),
    "MemoryForgotten": ("deleted", {"kind": "memory", "id": "m1"}, "forgotten: its history is erased"),
    "WordsErased": ("words_erased", {"kind": "memory", "id": "m1"},
                    "erased what it quoted of a forgotten memory (2 events)"),
    "LinkCreated": ("link_created", {"kind": "edge", "id": "link-relates_to-m1-m-seen"},
                    "m1 relates_to m-seen (explicit, weight 0.75)"),
    "LinkRemoved": ("link_removed", {"kind": "edge", "id": "link-relates_to-m1-m-seen"},
                    "m1 relates_to m-seen removed"),
    "ProjectCreated": ("project_created", {"kind": "project", "id": "kitchen"}, "project 'Kitchen'"),
    "ProjectUpdated": ("project_updated", {"kind": "project", "id": "kitchen"}, "project 'Kitchen 2', archived"),
    "ProjectDeleted": ("project_deleted", {"kind": "project", "id": "kitchen"}, "project deleted"),
    "ProjectErased": ("project_erased", {"kind": "project", "id": "kitchen"}, "project erased"),
    "ProjectImported": ("project_imported", {"kind": "project", "id": "kitchen"}, "project 'Old kitchen'"),
    "ConfigChanged": ("config_changed", {"kind": "config", "id": "config"},
                      "settings changed: decay.half_life, recall.k"),
    "ConfigReset": ("config_reset", {"kind": "config", "id": "config"}, "recall.k back to its default"),
    "CaptureAnswered": ("capture_answered", {"kind": "idempotency", "id": "idempotency-owner-k"}, "capture answered"),
    "IdempotencyExpired": ("idempotency_expired", {"kind": "idempotency", "id": "idempotency-owner-k"},
                           "idempotency expired"),
    "ContentClaimed": ("content_claimed", {"kind": "content", "id": "content-personal-owner-abc"}, "content claimed"),
    "ContentReleased": ("content_released", {"kind": "content", "id": "content-personal-owner-abc"},
                        "content released"),
    "MemoryShared": ("shared", {"kind": "memory", "id": "m1"}, "shared"),
    "MemoryUnshared": ("unshared", {"kind": "memory", "id": "m1"}, "unshared"),
    "StalenessJudged": ("staleness_judged", {"kind": "memory", "id": "m1"}, "possibly out of date"),
    "MemoryRolledUp": ("rolled_up", {"kind": "memory", "id": "m1"}, "rolled into the digest m-seen"),
    "MemoryReleased": ("released", {"kind": "memory", "id": "m1"}, "released from the digest another memory"),
    "DigestComposed": ("digest_composed", {"kind": "memory", "id": "m1"}, "digest of 3 memories"),
    "PatternProposed": ("pattern_proposed", {"kind": "patterns", "id": "patterns-personal-owner"}, "pattern proposed"),
    "MemoryDrawnInto": ("drawn_into", {"kind": "memory", "id": "m1"}, "drawn into the pattern another memory"),
    "TeamCreated": ("team_created", {"kind": "team", "id": "team"}, "workspace 'Research'"),
    "MembershipChanged": ("membership_changed", {"kind": "team", "id": "team"}, "member Ann"),
    "ShareNoted": ("share_noted", {"kind": "team_shares", "id": "team-shares"}, "share noted"),
    "PatternAnswered": ("pattern_answered", {"kind": "team_shares", "id": "team-shares"}, "pattern answered"),
    "MemberAdded": ("member_added", {"kind": "team", "id": "team"}, "member Ann"),
    "MemberTokenRotated": ("member_token_rotated", {"kind": "team", "id": "team"}, "member Ann"),
    "MemberProfileChanged": ("member_profile_changed", {"kind": "team", "id": "team"}, "member Ann"),
    "MemberSuspended": ("member_suspended", {"kind": "team", "id": "team"}, "member Bob"),
    "MemberRemoved": ("member_removed", {"kind": "team", "id": "team"}, "member Bob"),
    "DefaultShareSet": ("default_share_set", {"kind": "team", "id": "team"}, "member Ann"),
    "WorkspaceRenamed": ("workspace_renamed", {"kind": "team", "id": "team"}, "workspace 'Acme'"),
    "ClientRegistered": ("client_registered", {"kind": "oauth", "id": None}, "client registered"),
    "SignInRequested": ("sign_in_requested", {"kind": "oauth", "id": None}, "sign in requested"),
    "SignInDecided": ("sign_in_decided", {"kind": "oauth", "id": None}, "sign in decided"),
    "CodeIssued": ("code_issued", {"kind": "oauth", "id": None}, "code issued"),
    "CodeRedeemed": ("code_redeemed", {"kind": "oauth", "id": None}, "code redeemed"),
    "TokenIssued": ("token_issued", {"kind": "oauth", "id": None}, "token issued"),
    "TokenRevoked": ("token_revoked", {"kind": "oauth", "id": None}, "token revoked"),
    "PairIssued": ("pair_issued", {"kind": "oauth", "id": None}, "pair issued"),
    "GrantRevoked": ("grant_revoked", {"kind": "oauth", "id": None}, "grant revoked"),
    "SigningKeyMade": ("signing_key_made", {"kind": "oauth", "id": None}, "signing key made"),
    "JobStarted": ("job_started", {"kind": "maintenance", "id": "staleness-2026-01"}, "job started"),
    "JobFinished": ("job_finished", {"kind": "maintenance", "id": "staleness-2026-01"}, "job finished"),
    "VapidKeyGenerated": ("vapid_key_generated", {"kind": "push", "id": "push"}, "vapid key generated"),
    "PushSubscribed": ("push_subscribed", {"kind": "push", "id": "push"}, "push subscribed"),
    "PushUnsubscribed": ("push_unsubscribed", {"kind": "push", "id": "push"}, "a device unsubscribed (gone)"),
    "ReminderPushed": ("reminder_pushed", {"kind": "memory", "id": "m1"}, "reminder pushed to 2 devices"),
    "ConflictSuspected": ("conflict_suspected", {"kind": "memory", "id": "m1"},
                          "may update m-seen: both kept for review"),
    "ConflictAnswered": ("conflict_answered", {"kind": "memory", "id": "m1"},
                         "retired answered: keep both (with m-seen)"),
    "IntegrationConnected": ("integration_connected", {"kind": "integration", "id": "x"}, "integration connected"),
    "IntegrationSynced": ("integration_synced", {"kind": "integration", "id": "x"}, "integration synced"),
    "IntegrationListed": ("integration_listed", {"kind": "integration", "id": "integrations"},
                          "integration listed"),
    "MirrorIndexed": ("mirror_indexed", {"kind": "integration", "id": "x"}, "mirror indexed"),
    "MirrorDropped": ("mirror_dropped", {"kind": "integration", "id": "x"}, "mirror dropped"),
    "IntegrationDisconnected": ("integration_disconnected", {"kind": "integration", "id": "x"},
                                "integration disconnected"),
    "MirrorSynced": ("synced", {"kind": "memory", "id": "m1"}, "synced from notes"),
}
FEED_VARIANTS = [
    (MemoryRevised("new text", ""), "updated: now 8 characters"),
    (MemoryCaptured("x", (), "mcp", "personal-owner"), "captured from mcp"),
    (MemoryImported("x", (), "import", "personal-owner", 1, 2, 0, 0, 0, 0, 0), "imported from import"),
    (TagsChanged(()), "tags cleared"),
    (StalenessJudged(False, ""), "no longer flagged out of date"),
    (DuplicateSuspected(HIDDEN, 0.5), "resembles another memory (50%)"),
    (ContradictionWon("m-seen", ""), "won a contradiction with m-seen"),
    (MemoryReleased("m-seen"), "released from the digest m-seen"),
    (MemoryRolledUp(HIDDEN), "rolled into the digest another memory"),
    (MemoryDrawnInto("m-seen"), "drawn into the pattern m-seen"),
]


@pytest.fixture
def feed() -> timeline.Timeline:
    return timeline.Timeline(InMemoryEventStore(), Rows(), Context(READER, "feed"))


@pytest.mark.parametrize("type_name", sorted(REGISTRY))
def test_the_audit_feed_names_and_describes_every_event_type(feed, type_name):
    stream, event = SAMPLES[type_name]
    name, where, description = FEED[type_name]
    assert exactly(feed.item(stored(stream, event))) == exactly(
        {"position": 7, "at": 1_000, "type": name, "stream": where, "actor_name": "Ann", "description": description})


@pytest.mark.parametrize(("event", "description"), FEED_VARIANTS)
def test_the_audit_feed_describes_each_shape_of_an_event(feed, event, description):
    assert feed.item(stored(MEMORY, event))["description"] == description


@pytest.mark.parametrize("type_name", sorted(ENTRY))
def test_the_audit_feed_says_only_what_happened_to_a_memory_before_it_reached_the_reader(feed, type_name):
    _, event = SAMPLES[type_name]
    name = ENTRY[type_name][0].replace("_", " ")
    assert feed.item(stored(MEMORY, event, "personal-m-bob"))["description"] == f"{name} (before it was shared)"


def test_the_audit_feed_names_each_stored_type_once():
    assert timeline.NAMES == {name: (type_name,) for type_name, (name, _, _) in FEED.items()}


# -- the team's activity feed (/team/activity) -------------------------------------------------------------------------

class Clock:
    def now_ms(self) -> int:
        return 5_000


def test_the_team_activity_feed_shows_every_team_event_in_its_words():
    store = InMemoryEventStore()
    service = TeamService(store, Clock(), owner("Ada"))
    by_owner = Context(owner("Ada"), "r")
    store.append(envelopes(by_owner, t.STREAM, 0, [
        t.MemberAdded("m-ann", "Ann", "ann@example.com", "admin", "h1"),
        t.MemberAdded("m-bob", "Bob", "", "member", "h2"),
        t.MemberTokenRotated("m-ann", "h3"), t.MemberProfileChanged("m-ann", "Ann B", "ann@example.com", "member"),
        t.MemberSuspended("m-bob", True), t.DefaultShareSet("m-ann", "company"), t.DefaultShareSet("owner", "company"),
        t.WorkspaceRenamed("company", "Acme"), t.TeamCreated("company-2", "Research"),
        t.MembershipChanged("company-2", "m-ann", True), t.MembershipChanged("company-9", "m-ann", False),
        t.MemberRemoved("m-bob", 3),
    ], "", 2_000))
    store.append(envelopes(Context(Identity("m-ann", "Ann", "admin", "personal-m-ann"), "r2"), t.SHARES_STREAM, 0, [
        t.ShareNoted("m1", "company", "m-bob"), t.ShareNoted("m1", "personal", "m-bob"),
        t.PatternAnswered("m2", "confirm"), t.PatternAnswered("m3", "dismiss", "company-2"),
        t.ShareNoted("m4", "company", "m-ann", "company-3"),  # a team the owner is not in: not shown
    ], "", 3_000))

    activity = service.activity(Context(service.owner_identity(), "r"), limit=100)["activity"]

    assert exactly(activity) == exactly([
        {"type": "pattern_dismissed", "at": 3000, "actor_name": "Ann B", "memory_id": "m3"},
        {"type": "pattern_confirmed", "at": 3000, "actor_name": "Ann B", "memory_id": "m2"},
        {"type": "memory_unshared", "at": 3000, "actor_name": "Ann B", "memory_id": "m1", "author_name": "Bob"},
        {"type": "memory_shared", "at": 3000, "actor_name": "Ann B", "memory_id": "m1", "author_name": "Bob"},
        {"type": "member_removed", "at": 2000, "actor_name": "Ada", "member_name": "Bob", "erased_memories": 3},
        {"type": "membership_changed", "at": 2000, "actor_name": "Ada", "member_name": "Ann B",
         "workspace_name": "company-9", "joined": False},
        {"type": "membership_changed", "at": 2000, "actor_name": "Ada", "member_name": "Ann B",
         "workspace_name": "Research", "joined": True},
        {"type": "team_created", "at": 2000, "actor_name": "Ada", "workspace_name": "Research"},
        {"type": "workspace_renamed", "at": 2000, "actor_name": "Ada", "workspace_name": "Acme"},
        {"type": "default_share_set", "at": 2000, "actor_name": "Ada", "member_name": "Ada",
         "default_share": "company"},
        {"type": "default_share_set", "at": 2000, "actor_name": "Ada", "member_name": "Ann B",
         "default_share": "company"},
        {"type": "member_suspended", "at": 2000, "actor_name": "Ada", "member_name": "Bob", "suspended": True},
        {"type": "profile_changed", "at": 2000, "actor_name": "Ada", "member_name": "Ann B", "role": "member"},
        {"type": "token_rotated", "at": 2000, "actor_name": "Ada", "member_name": "Ann B"},
        {"type": "member_added", "at": 2000, "actor_name": "Ada", "member_name": "Bob", "role": "member"},
        {"type": "member_added", "at": 2000, "actor_name": "Ada", "member_name": "Ann B", "role": "admin"},
    ])


# -- revisions (/entry/{id}/revisions) ---------------------------------------------------------------------------------

def stream_of(events: list[tuple[object, str]]) -> list[Envelope]:
    """One request per event, a second apart (so no event joins the revision before it)."""
    return [Envelope(MEMORY, i + 1, event, "m-ann", workspace, f"req-{i}", 1_000 * (i + 1), i + 1)
            for i, (event, workspace) in enumerate(events)]


def test_only_content_changes_make_revisions_each_with_its_reason():
    others = [event for name, (stream, event) in SAMPLES.items()
              if stream == MEMORY and name not in ("MemoryCaptured", "MemoryImported", "MemoryForgotten",
                                                   "MemoryShared", "MemoryUnshared")]
    events = [SAMPLES["MemoryCaptured"][1], *others[:3], MemoryRevised("plain update"), *others[3:]]

    found = revisions("m1", stream_of([(event, "personal-owner") for event in events]), READER)

    assert exactly(found) == exactly([
        {"version": 1, "at": 1000, "actor_name": "Ann", "reason": "captured", "content": "Secret text", "diff": None,
         "tags": ["home", "kitchen"], "status": None},
        {"version": 2, "at": 2000, "actor_name": "Ann", "reason": "appended",
         "content": "Secret text\n\n[Update 2026-01-01]: more words",
         "diff": "--- v1\n+++ v2\n@@ -1 +1,3 @@\n Secret text\n+\n+[Update 2026-01-01]: more words",
         "tags": ["home", "kitchen"], "status": None},
        {"version": 3, "at": 3000, "actor_name": "Ann", "reason": "merged", "content": "new text here",
         "diff": "--- v2\n+++ v3\n@@ -1,3 +1 @@\n-Secret text\n-\n-[Update 2026-01-01]: more words\n+new text here",
         "tags": ["home", "kitchen"], "status": None},
        {"version": 4, "at": 5000, "actor_name": "Ann", "reason": "updated", "content": "plain update",
         "diff": "--- v3\n+++ v4\n@@ -1 +1 @@\n-new text here\n+plain update", "tags": ["a", "b"], "status": None},
    ])


def test_a_share_is_the_first_revision_of_a_memory_that_reached_the_reader_by_it():
    events = [(MemoryCaptured("Draft", ("x",), "api", "personal-m-bob"), "personal-m-bob"),
              (MemoryAppended("more", "d"), "personal-m-bob"), (MemoryShared("company"), "company"),
              (TagsChanged(("y",)), "company"), (MemoryUnshared("personal-m-bob"), "company"),
              (MemoryShared("company"), "company"),
              (MemoryImported("x", (), "i", "company", 1, 2, 0, 0, 0, 0, 0), "company")]

    found = revisions("m1", stream_of(events), READER)

    assert exactly(found) == exactly([
        {"version": 1, "at": 3000, "actor_name": "Ann", "reason": "shared", "content": "Draft\n\n[Update d]: more",
         "diff": None, "tags": ["x"], "status": None},
        {"version": 2, "at": 7000, "actor_name": "Ann", "reason": "imported", "content": "x",
         "diff": "--- v1\n+++ v2\n@@ -1,3 +1 @@\n-Draft\n-\n-[Update d]: more\n+x", "tags": [], "status": None},
    ])
