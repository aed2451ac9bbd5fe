"""Time said in words becomes a reminder at capture: the rules the nightly extraction uses, in the brain's time
zone, applied in the capture's own append when they are sure; the outcome says what was set."""

from datetime import datetime
from zoneinfo import ZoneInfo

from second_brain.domain.events import MemoryCaptured, TimeAnchorSet
from second_brain.domain.memory import Memory, fold
from tests.conftest import FixedClock
from tests.support.memories import memory_service


def at(text: str, tz: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(tz)).timestamp() * 1000)


def stored(memories, memory_id: str) -> Memory:
    return fold(memories.store.read_stream(f"memory-{memory_id}"), Memory(memory_id))


def test_a_reminder_said_in_words_is_set_in_the_captures_append(ctx):
    clock = FixedClock(at("2026-12-04T16:00", "Europe/Berlin"))  # a Friday afternoon in Berlin
    memories = memory_service(clock, tz="Europe/Berlin")
    outcome = memories.capture(ctx, "Remind me tomorrow at 10 to call the plumber", [], "api")
    memory = stored(memories, outcome.id)
    assert (memory.when_at, memory.when_kind) == (at("2026-12-05T10:00", "Europe/Berlin"), "due")
    assert outcome.reminder is not None and outcome.reminder.when_at == memory.when_at
    assert outcome.reminder.evidence == "tomorrow at 10"
    assert "task" in memory.tags  # a commitment is an open loop, as the nightly job makes it
    events = [e.event for e in memories.store.read_stream(f"memory-{outcome.id}")]
    assert isinstance(events[0], MemoryCaptured) and TimeAnchorSet(memory.when_at, "due") in events
    assert len({e.request_id for e in memories.store.read_stream(f"memory-{outcome.id}")}) == 1  # one request


def test_the_brains_time_zone_and_summer_time_decide_the_hour(ctx):
    # Written on the Saturday before clocks go back in New York (2026-11-01): "tomorrow at 9" is 09:00 EST.
    clock = FixedClock(at("2026-10-31T18:00", "America/New_York"))
    memories = memory_service(clock, tz="America/New_York")
    outcome = memories.capture(ctx, "Dentist tomorrow at 9", [], "api")
    assert stored(memories, outcome.id).when_at == at("2026-11-01T09:00", "America/New_York")
    assert outcome.reminder.when_kind == "event"


def test_a_note_that_gives_its_own_when_is_not_read_for_another(ctx):
    clock = FixedClock(at("2026-12-04T16:00", "UTC"))
    memories = memory_service(clock)
    given = at("2026-12-24T18:00", "UTC")
    outcome = memories.capture(ctx, "Call the plumber tomorrow at 10", [], "api", anchor=(given, "event"))
    assert (stored(memories, outcome.id).when_at, outcome.reminder) == (given, None)


def test_unsure_phrases_past_times_and_transcripts_set_nothing(ctx):
    clock = FixedClock(at("2026-12-04T16:00", "UTC"))
    memories = memory_service(clock)
    for content, source in [
        ("Should we meet tomorrow at 10?", "api"),  # a question
        ("The dentist was yesterday at 9", "api"),  # the past
        ("We usually deploy on Fridays", "api"),  # a habit
        ("Remind me tomorrow at 10 to call the plumber", "claude-code"),  # a transcript's words are not a request
    ]:
        outcome = memories.capture(ctx, content, [], source)
        assert (stored(memories, outcome.id).when_at, outcome.reminder) == (None, None), content
