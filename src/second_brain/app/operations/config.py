"""Runtime settings: reading them, and (admins) changing one or putting it back to its default."""

from typing import Any
from zoneinfo import ZoneInfo

from ..brain import Brain
from ..handling import Context


def get_config(brain: Brain, ctx: Context) -> dict[str, Any]:
    """Every setting: its value, default, range and description."""
    return brain.config.view()


def patch_config(brain: Brain, ctx: Context, values: Any) -> dict[str, Any]:
    """Change settings (admin only), checked one by one and together with the rest."""
    return brain.config.patch(ctx, values)


def reset_config(brain: Brain, ctx: Context, key: str) -> dict[str, Any]:
    """Put one setting back to its default (admin only)."""
    return brain.config.reset(ctx, key)


def time_zone(brain: Brain) -> ZoneInfo:
    """The brain's time zone (TIMEZONE): what times are read in and said in."""
    return brain.memories.timezone


def output_budget(brain: Brain) -> int:
    """How many characters a recall or a list rendered for a model may take (RECALL_OUTPUT_BUDGET)."""
    budget: int = brain.config.value("RECALL_OUTPUT_BUDGET")
    return budget
