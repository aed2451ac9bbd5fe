"""Runtime settings as events: members may read, only admins change, stored junk never breaks a read."""

import pytest

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.handling import Context, envelopes
from second_brain.app.settings_service import STREAM, SettingsService
from second_brain.domain.errors import Forbidden
from second_brain.domain.events import ConfigChanged
from second_brain.domain.identity import Identity


def test_members_read_but_only_admins_change(clock, ctx):
    settings = SettingsService(InMemoryEventStore(), clock)
    member = Context(Identity("bob", "Bob", "member", "personal-bob"), "req-2")
    assert settings.view()["config"]["RERANK_MODE"] == "auto"
    with pytest.raises(Forbidden):
        settings.patch(member, {"RERANK_MODE": "off"})
    with pytest.raises(Forbidden):
        settings.reset(member, "RERANK_MODE")
    assert settings.patch(ctx, {"RERANK_MODE": "off"})["config"]["RERANK_MODE"] == "off"
    assert settings.recall_config().rerank_mode == "off"


def test_stored_values_that_no_longer_hold_are_ignored(clock, ctx):
    store = InMemoryEventStore()
    junk = ConfigChanged({"RERANK_MODE": "sometimes", "RETIRED_SETTING": 3, "MMR_LAMBDA": 0.4,
                          "RECENCY_FLOOR_VOLATILE": 0.95})
    store.append(envelopes(ctx, STREAM, 0, [junk], "", clock.now))
    settings = SettingsService(store, clock)
    assert settings.overrides() == {"MMR_LAMBDA": 0.4}  # the floor broke the invariant: its group falls back
    assert settings.recall_config().mmr_lambda == 0.4 and settings.duplicate_config().block_threshold == 0.97


def test_one_read_gives_a_recall_its_weights_default_hops_and_time_zone(clock, ctx):
    settings = SettingsService(InMemoryEventStore(), clock, timezone="Europe/Berlin")
    assert (settings.recall_config().timezone, settings.recall_config().default_hops) == ("Europe/Berlin", 0)
    settings.patch(ctx, {"TIMEZONE": "Asia/Tokyo", "DEFAULT_HOPS": 2})
    assert (settings.recall_config().timezone, settings.recall_config().default_hops) == ("Asia/Tokyo", 2)
