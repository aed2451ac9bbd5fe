"""The nightly extraction job over an in-memory log: what it judges, what it appends (as the system), and that it
is bounded, resumable and idempotent; the dry run writes nothing."""

import time
from datetime import datetime
from zoneinfo import ZoneInfo

from second_brain.app.maintenance.runner import Budget
from second_brain.app.memories.service import Context
from second_brain.app.reminders.extraction import Extractor
from second_brain.app.reminders.jobs import ExtractionJob
from second_brain.domain.events import TagsChanged, TimeAnchorSet
from second_brain.domain.identity import Identity
from tests.support.memories import memory_service

BERLIN = ZoneInfo("Europe/Berlin")
DAY = 24 * 3600 * 1000


def local(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=BERLIN).timestamp() * 1000)


def setup(clock, per_run=200):
    memories = memory_service(clock, tz="Europe/Berlin", reads_when=False)
    extractor = Extractor(memories.store, clock, lambda: BERLIN)
    return memories, extractor, ExtractionJob(extractor, per_run)


def budget(seconds: float = 60) -> Budget:
    return Budget(time.monotonic() + seconds)


def added(store, memory_id: str, since: int = 0) -> list:
    return [e for e in store.read_stream(f"memory-{memory_id}") if e.position > since]


def test_anchors_and_commitments_are_appended_as_the_system(clock, ctx):  # 2026-01-01 01:00 Berlin, a Thursday
    memories, _, job = setup(clock)
    dentist = memories.capture(ctx, "Dentist tomorrow at 3", [], "api").id
    deck = memories.capture(ctx, "Send the deck by the 15th", [], "api").id
    plain = memories.capture(ctx, "Pricing floor is $6k", [], "api").id
    head = memories.store.head()
    clock.advance(3600_000)

    result = job.run(budget(), "")
    assert result.counts == {"judged": 3, "anchored": 1, "committed": 1, "none": 1}
    assert (result.cursor, result.complete, result.errors) == (str(head), True, [])
    (anchor,) = added(memories.store, dentist, head)
    assert anchor.event == TimeAnchorSet(local("2026-01-02 15:00"), "event")
    assert (anchor.actor, anchor.request_id) == ("system", f"extract-{dentist}")
    due, tags = added(memories.store, deck, head)
    assert due.event == TimeAnchorSet(local("2026-01-15 09:00"), "due")
    assert isinstance(tags.event, TagsChanged) and "task" in tags.event.tags and tags.actor == "system"
    assert added(memories.store, plain, head) == []


def test_what_a_person_made_or_touched_is_left_alone(clock, ctx):
    memories, _, job = setup(clock)
    system = Context(Identity("system", "Second Brain", "admin", "personal-owner"), "digest")
    memories.capture(ctx, "Dentist tomorrow at 3", [], "api", anchor=(clock.now + 7 * DAY, "wake"))  # has `when`
    memories.capture(system, "Digest: dentist tomorrow at 3", [], "api")  # written by the system
    memories.capture(ctx, "Digest of dentists tomorrow at 3", ["synthesized"], "api")
    memories.capture(ctx, "I'll fix the test tomorrow at 3", [], "claude-code")  # a transcript
    retired = memories.capture(ctx, "Dentist on Friday at 3", [], "api").id
    memories.set_status(ctx, retired, "deprecated")
    edited = memories.capture(ctx, "Haircut on Friday at 3", [], "api").id
    memories.append(ctx, edited, "moved to the following week")
    forgotten = memories.capture(ctx, "Vet on Friday at 3", [], "api").id
    memories.forget(ctx, forgotten)
    head = memories.store.head()

    result = job.run(budget(), "")
    assert result.counts == {} and result.cursor == str(head)
    assert memories.store.head() == head


def test_a_person_changing_the_memory_after_it_was_judged_wins(clock, ctx):
    memories, extractor, _ = setup(clock)
    memory_id = memories.capture(ctx, "Dentist tomorrow at 3", [], "api").id
    [(_, memory, captured_at)] = [c for c in extractor.candidates(0) if c[1] is not None]
    judged = extractor.judge(memory, captured_at)
    memories.snooze(ctx, memory_id, clock.now + 5 * DAY)  # a person anchors it meanwhile
    assert extractor.apply(judged) == "left"
    assert [type(e.event) for e in added(memories.store, memory_id, 2)] == [TimeAnchorSet]


def test_a_past_event_is_not_set_but_an_overdue_commitment_is(clock, ctx):
    memories, _, job = setup(clock)
    dentist = memories.capture(ctx, "Dentist tomorrow at 3", [], "api").id
    deck = memories.capture(ctx, "I need to send the deck by tomorrow", [], "api").id
    clock.advance(3 * DAY)  # the nightly run did not happen for three days
    head = memories.store.head()

    result = job.run(budget(), "")
    assert result.counts == {"judged": 2, "none": 1, "committed": 1}
    assert added(memories.store, dentist, head) == []
    assert added(memories.store, deck, head)[0].event == TimeAnchorSet(local("2026-01-02 09:00"), "due")


def test_only_recent_captures_are_read(clock, ctx):
    memories, _, job = setup(clock)
    memories.capture(ctx, "Dentist on Friday at 3", [], "api")
    clock.advance(15 * DAY)
    recent = memories.capture(ctx, "Haircut on Friday at 3", [], "api").id
    head = memories.store.head()
    result = job.run(budget(), "")
    assert result.counts == {"judged": 1, "anchored": 1}
    assert len(added(memories.store, recent, head)) == 1


def test_a_run_is_bounded_and_the_next_resumes_at_its_cursor(clock, ctx):
    memories, _, job = setup(clock, per_run=2)
    ids = [memories.capture(ctx, f"Meeting {n} on Friday at 3", [], "api").id for n in range(3)]
    first = job.run(budget(), "")
    assert first.counts == {"judged": 2, "anchored": 2} and first.complete is False
    assert added(memories.store, ids[2]) and len(added(memories.store, ids[2])) == 2  # captured, classified
    second = job.run(budget(), first.cursor)
    assert second.counts == {"judged": 1, "anchored": 1} and second.complete is True
    assert job.run(budget(), second.cursor).counts == {}

    out_of_time = job.run(Budget(time.monotonic()), "")
    assert out_of_time.complete is False and out_of_time.cursor == ""


def test_a_run_killed_before_its_cursor_was_recorded_applies_nothing_twice(clock, ctx):
    memories, _, job = setup(clock)
    memories.capture(ctx, "Send the deck by the 15th", [], "api")
    memories.capture(ctx, "Dentist on Friday at 3", [], "api")
    job.run(budget(), "")
    head = memories.store.head()
    again = job.run(budget(), "")  # the first run's summary (and cursor) was never written
    assert again.counts == {} and memories.store.head() == head


def test_a_failing_memory_is_reported_and_the_others_still_judged(clock, ctx):
    memories, extractor, job = setup(clock)
    bad = memories.capture(ctx, "Dentist on Friday at 3", [], "api").id
    good = memories.capture(ctx, "Haircut on Friday at 3", [], "api").id
    judge = extractor.judge
    extractor.judge = lambda memory, at: (_ for _ in ()).throw(RuntimeError("boom")) if memory.id == bad \
        else judge(memory, at)
    result = job.run(budget(), "")
    assert result.counts == {"judged": 2, "errors": 1, "anchored": 1}
    assert result.errors == [f"{bad}: RuntimeError: boom"] and len(added(memories.store, good)) == 3


def test_the_dry_run_shows_the_next_verdicts_and_writes_nothing(clock, ctx):
    memories, _, job = setup(clock)
    member = Context(Identity("m1", "Mo", "member", "personal-m1"), "req-m1")
    dentist = memories.capture(ctx, "Dentist tomorrow at 3 with Dr. Ng about the crown that keeps coming loose "
                                    "whenever I eat anything harder than soup, which is most things, and which I keep "
                                    "forgetting to mention", [], "api").id
    memories.capture(member, "Mo's own dentist tomorrow at 3", [], "api")  # not the owner's to read
    deck = memories.capture(ctx, "Send the deck by the 15th", [], "api").id
    memories.capture(ctx, "Pricing floor is $6k", [], "api")
    head = memories.store.head()

    shown = job.preview("", ["personal-owner"], 10)
    assert memories.store.head() == head
    assert [v["id"] for v in shown] == [dentist, deck, "id-3"]
    assert shown[0] == {
        "id": dentist, "content": shown[0]["content"], "verdict": "anchor", "when": "2026-01-02T15:00:00+01:00",
        "when_at": local("2026-01-02 15:00"), "when_kind": "event", "evidence": "tomorrow at 3"}
    assert len(shown[0]["content"]) == 160 and shown[0]["content"].endswith("…")
    assert (shown[1]["verdict"], shown[1]["when_kind"]) == ("commitment", "due")
    assert shown[2] == {"id": "id-3", "content": "Pricing floor is $6k", "verdict": "none", "when": None,
                        "when_at": None, "when_kind": None, "evidence": None}
    assert [v["id"] for v in job.preview("", ["personal-owner"], 1)] == [dentist]

    result = job.run(budget(), "")
    assert job.preview(result.cursor, ["personal-owner"], 10) == []


def test_a_run_judges_fewer_captures_when_each_is_a_model_call(clock):
    class Model:
        model_id = "fake"

    memories = memory_service(clock)
    assert ExtractionJob(Extractor(memories.store, clock, lambda: BERLIN)).per_run == 5000
    assert ExtractionJob(Extractor(memories.store, clock, lambda: BERLIN, Model())).per_run == 200  # type: ignore[arg-type]  # a model never asked
