"""Runtime settings as events: members may read, only admins change, stored junk never breaks a read."""

import pytest

from second_brain.adapters.event_store.memory import InMemoryEventStore
from second_brain.app.config import STREAM, SettingsService
from second_brain.app.handling import Context, envelopes
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


def test_what_is_ignored_is_shown_with_its_reason_and_logged_once(clock, ctx, caplog):
    store = InMemoryEventStore()
    junk = ConfigChanged({"RERANK_MODE": "sometimes", "RETIRED_SETTING": 3, "RECENCY_FLOOR_VOLATILE": 0.95,
                          "DUPLICATE_FLAG_THRESHOLD": 0.95})
    store.append(envelopes(ctx, STREAM, 0, [junk], "", clock.now))
    settings = SettingsService(store, clock)
    with caplog.at_level("WARNING", logger="second_brain"):
        for _ in range(3):
            view = settings.view()
            settings.recall_config()
            settings.duplicate_config()
    floors = "RECENCY_FLOOR_VOLATILE <= RECENCY_FLOOR <= RECENCY_FLOOR_DURABLE"
    assert {i["key"]: (i["value"], i["reason"].split(" must hold")[0]) for i in view["ignored"]} == {
        "RERANK_MODE": ("sometimes", "RERANK_MODE must be one of: auto, on, off"),
        "RETIRED_SETTING": (3, "Unknown setting: RETIRED_SETTING"),
        "RECENCY_FLOOR_VOLATILE": (0.95, floors),
    }
    assert view["overrides"] == {"DUPLICATE_FLAG_THRESHOLD": 0.95}  # only the broken group falls back
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 3 and all("ignored" in w for w in warnings)
    assert any("RETIRED_SETTING" in w for w in warnings) and any(floors in w for w in warnings)
