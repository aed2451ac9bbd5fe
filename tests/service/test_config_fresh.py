"""The runtime settings read once per `fresh_for` seconds (on AWS, 2: a capture read them three times, each a
DynamoDB query), and a change made through the same process seen by it at once."""

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.config import STREAM, SettingsService


class Counting(InMemoryEventStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def read_stream(self, stream_id: str):
        self.reads += stream_id == STREAM
        return super().read_stream(stream_id)


def test_the_settings_are_read_once_while_fresh_and_again_after_a_change(clock, ctx):
    store = Counting()
    config = SettingsService(store, clock, fresh_for=60)
    for _ in range(3):
        config.value("TIMEZONE"), config.duplicate_config(), config.recall_config()
    assert store.reads == 1
    config.patch(ctx, {"TIMEZONE": "Europe/Paris"})
    assert config.value("TIMEZONE") == "Europe/Paris"  # this process's own change, at once
    other = SettingsService(store, clock, fresh_for=0)  # another process: reads every time
    other.patch(ctx, {"TIMEZONE": "Asia/Tokyo"})
    assert config.value("TIMEZONE") == "Europe/Paris"  # still fresh here, for up to 60 s
    config._folded = (config._folded[0] - 61, config._folded[1])  # a minute later
    assert config.value("TIMEZONE") == "Asia/Tokyo"
    reads = store.reads
    other.value("TIMEZONE"), other.value("TIMEZONE")
    assert store.reads == reads + 2
