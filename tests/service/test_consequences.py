"""What follows a capture is read from one table (app/memories/consequences.py): each event type of the capture's
append tells its handlers of the memory it landed on, once; a block or a replayed answer appends nothing, so
nothing follows; a handler's failure is the handler's."""

from second_brain.domain.capture import Verdict
from second_brain.domain.events import MemoryCaptured, MemoryRevised
from tests.support.memories import memory_service


class Judged:
    """A triage that answers what it is told to, about the first memory."""

    def __init__(self, action: str, match_content: str = "") -> None:
        self.action, self.match_content = action, match_content

    def assess(self, content, workspace):
        return Verdict(self.action, "id-0", 0.97, match_content=self.match_content,
                       merged_content=f"{self.match_content}; {content}")

    def prepare(self, contents):
        pass


def told(memories) -> list[tuple[str, str]]:
    heard: list[tuple[str, str]] = []
    memories.consequences.on(MemoryCaptured, lambda ctx, memory_id: heard.append(("captured", memory_id)))
    memories.consequences.on(MemoryRevised, lambda ctx, memory_id: heard.append(("revised", memory_id)))
    return heard


def test_a_stored_note_tells_the_handlers_of_its_capture_once(clock, ctx):
    memories = memory_service(clock)
    heard = told(memories)
    memories.capture(ctx, "The offsite is in Lisbon", ["travel"], "api")
    assert heard == [("captured", "id-0")]


def test_a_merge_tells_them_of_the_memory_it_changed_and_a_block_of_nothing(clock, ctx):
    memories = memory_service(clock)
    memories.capture(ctx, "The offsite is in Lisbon", [], "api")
    heard = told(memories)
    memories.triage = Judged("merge", "The offsite is in Lisbon")
    assert memories.capture(ctx, "It runs 12-14 May", [], "api").id == "id-0"
    memories.triage = Judged("block")
    memories.capture(ctx, "The offsite is in Lisbon!", [], "api")
    assert heard == [("revised", "id-0")]


def test_a_replayed_answer_appends_nothing_and_nothing_follows(clock, ctx):
    memories = memory_service(clock)
    heard = told(memories)
    first = memories.capture(ctx, "Call the notary on Monday", [], "api", idempotency_key="k1")
    again = memories.capture(ctx, "Call the notary on Monday", [], "api", idempotency_key="k1")
    assert again.id == first.id and heard == [("captured", first.id)]


def test_a_failing_handler_stops_neither_the_capture_nor_the_others(clock, ctx):
    memories = memory_service(clock)
    heard: list[str] = []

    def broken(ctx, memory_id):
        raise RuntimeError("the model is down")

    memories.consequences.on(MemoryCaptured, broken, lambda ctx, memory_id: heard.append(memory_id))
    outcome = memories.capture(ctx, "Maria prefers afternoon standups", [], "api")
    assert heard == [outcome.id] and memories.load(ctx, outcome.id)[0].exists


def test_the_handlers_an_event_calls_run_in_the_order_the_table_lists_them(clock, ctx):
    memories = memory_service(clock)
    heard: list[str] = []
    memories.consequences.on(MemoryCaptured, lambda ctx, memory_id: heard.append("index"),
                             lambda ctx, memory_id: heard.append("classify"))
    memories.capture(ctx, "The boiler service is booked", [], "api")
    assert heard == ["index", "classify"]
