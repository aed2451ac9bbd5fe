"""Runtime settings (GET/PATCH/DELETE /config): shipped defaults, and the overrides an admin set, as events.

Only overrides are stored, so an improved default in a later release still reaches a setting nobody
touched. Every read folds the `config` stream afresh, so a change applies to the very next request,
in every process that shares the log. A stored value that no longer validates (a setting renamed or
narrowed since, or a group whose invariant a moved default broke) is ignored, never fatal: it is logged
once and listed under `ignored` in GET /config.
"""

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..domain import text
from ..domain.errors import Forbidden, InvalidInput, NotFound
from ..domain.events import ConfigChanged, ConfigReset
from ..ports.clock import Clock
from ..ports.event_store import EventStore
from .handling import Context, envelopes, retrying
from .memories.triage import DuplicateConfig
from .recall.config import RecallConfig

STREAM = "config"
log = logging.getLogger("second_brain")


def _json_type(kind: type) -> str:
    return {int: "integer", float: "number", str: "string"}[kind]


@dataclass(frozen=True)
class Setting:
    key: str
    default: Any
    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    field: str = ""  # the RecallConfig or DuplicateConfig field it sets, if any

    def describe(self) -> dict[str, Any]:
        """What a form needs to edit it: the description, the range or choices, and the JSON type of its value."""
        return {"description": self.description, "min": self.low, "max": self.high, "choices": list(self.choices),
                "type": _json_type(type(self.default))}

    def check(self, value: Any) -> Any:
        """The value if valid for this setting, else InvalidInput naming the setting."""
        kind = type(self.default)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not kind or (kind is float and not math.isfinite(value)):
            raise InvalidInput(f"{self.key} must be {_kind_name(kind)}")
        if self.choices and value not in self.choices:
            raise InvalidInput(f"{self.key} must be one of: {', '.join(self.choices)}")
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise InvalidInput(f"{self.key} must be between {self.low} and {self.high}")
        if self.key == "TIMEZONE":
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise InvalidInput(f"TIMEZONE must be an IANA time zone such as Europe/Berlin, not {value!r}") from None
        return value


def _recall(key: str, field: str, description: str, low: float | None = None, high: float | None = None,
            choices: tuple[str, ...] = ()) -> Setting:
    return Setting(key, getattr(RecallConfig(), field), description, low, high, choices, field)


def _capture(key: str, field: str, description: str, low: float, high: float) -> Setting:
    return Setting(key, getattr(DuplicateConfig(), field), description, low, high, (), field)


SETTINGS: tuple[Setting, ...] = (
    _recall("RERANK_MODE", "rerank_mode", "Cross-encoder reranking: auto (close calls without identifiers), on, "
            "off. Needs a reranker model.", choices=("auto", "on", "off")),
    _recall("RERANK_AMBIGUITY_MARGIN", "rerank_ambiguity_margin", "In auto mode, rerank when the runner-up scores "
            "within this share of the leader.", 0.0, 1.0),
    _recall("RERANK_TIMEOUT_MS", "rerank_timeout_ms", "Give up on the reranker after this long.", 100, 10_000),
    _recall("KEYWORD_CANDIDATE_LIMIT", "keyword_candidate_limit", "The most candidates the keyword side returns.",
            50, 2000),
    _recall("SUBSTRING_MATCH_WEIGHT", "substring_match_weight", "A word found only inside longer words earns this "
            "share of its weight.", 0.0, 1.0),
    _recall("QUERY_SATURATION_FRACTION", "query_saturation_fraction", "A query word in more than this share of "
            "memories is not distinctive.", 0.01, 1.0),
    _recall("MAX_QUERY_TERMS", "max_query_terms", "The rarest query words the keyword side searches.", 1, 16),
    _recall("KEYWORD_WEIGHT", "keyword_weight", "Weight of exact-word evidence in fusion.", 0.0, 1.0),
    _recall("DENSE_WEIGHT", "dense_weight", "Weight of semantic similarity in fusion.", 0.0, 1.0),
    _recall("MMR_LAMBDA", "mmr_lambda", "Relevance against diversity in the diversity pass.", 0.0, 1.0),
    _recall("RECENCY_FLOOR", "recency_floor", "Lowest recency multiplier of an ordinary memory.", 0.0, 1.0),
    _recall("RECENCY_FLOOR_DURABLE", "recency_floor_durable", "... of a durable, canonical or important memory.",
            0.0, 1.0),
    _recall("RECENCY_FLOOR_VOLATILE", "recency_floor_volatile", "... of a volatile memory.", 0.0, 1.0),
    _recall("CONTRADICTION_IMPORTANCE_STEP", "contradiction_importance_step", "How much contradictions won or lost "
            "move a memory's importance.", 0.0, 5.0),
    _recall("TAG_BOOST_STEP", "tag_boost_step", "Boost per tag shared with the query.", 0.0, 1.0),
    _recall("TAG_BOOST_MAX", "tag_boost_max", "Largest tag boost.", 1.0, 3.0),
    _recall("RELEVANCE_FLOOR", "relevance_floor", "Results under this share of the best score are dropped.",
            0.0, 1.0),
    _recall("OTHER_SPEAKER_WEIGHT", "other_speaker_weight", "When a query names who spoke (\"What did Melanie "
            "paint?\"), a conversation line (\"Caroline: …\") by someone else weighs this much; 1 turns it off.",
            0.0, 1.0),
    _recall("GRAPH_HOP_DECAY", "graph_hop_decay", "Score kept per hop by linked memories.", 0.0, 1.0),
    _recall("DEFAULT_HOPS", "default_hops", "Graph hops when a recall does not say; an explicit value, even 0, "
            "wins.", 0, 3),
    _recall("SNIPPET_MAX_CHARS", "snippet_chars", "Length of a shortened result.", 100, 4000),
    _recall("FULL_MATCH_MAX_CHARS", "full_match_chars", "Length a strong top result may keep.", 400, 50_000),
    _recall("RECALL_FULL_MATCHES", "full_matches", "How many top results may stay long.", 0, 20),
    _recall("STRONG_MATCH_RATIO", "strong_match_ratio", "Share of the best score a result needs to stay long.",
            0.0, 1.0),
    _recall("MEANING_LEAD", "meaning_lead", "The closest meaning comes first when its cosine beats the first "
            "result's by this much (recency and words matched elsewhere only break near ties); 1 turns it off.",
            0.0, 1.0),
    _recall("UNHELD_WORD_SHARE", "unheld_share", "When a query names a word no memory holds that is no word of "
            "English (\"Zendesk\", \"orthodontist\"), each result's evidence counts this share; 1 turns it off.",
            0.0, 1.0),
    Setting("RECALL_OUTPUT_BUDGET", 12_000, "Characters of one MCP recall or list_recent reply.", 1000, 100_000),
    _capture("DUPLICATE_BLOCK_THRESHOLD", "block_threshold", "Cosine at which a note adding no word is refused as "
             "a repeat.", 0.5, 1.0),
    _capture("DUPLICATE_FLAG_THRESHOLD", "flag_threshold", "Cosine at which a note is stored tagged "
             "duplicate-candidate.", 0.3, 1.0),
    _capture("DUPLICATE_RESTATE_THRESHOLD", "restate_threshold", "Cosine at which a note that restates a stored "
             "fact (the same values, most words in common) is stored tagged duplicate-candidate; 1.0 turns it off.",
             0.3, 1.0),
    _capture("CANDIDATE_SCORE_THRESHOLD", "candidate_threshold", "Cosine at which a stored note is checked for a "
             "contradiction.", 0.0, 1.0),
    Setting("TIMEZONE", "UTC", "Time zone for date-only reminders, dated update labels and time phrases in "
            "recall."),
    Setting("REMINDERS_FROM_WORDS", "capture", "When a note's own words name a time (\"call the plumber tomorrow at "
            "10\"): capture sets the reminder at once, nightly leaves it to the nightly extraction.",
            choices=("capture", "nightly")),
    Setting("TEAM_DEFAULT_SHARE", "personal", "Where a capture that names no workspace lands, for members whose own "
            "default is inherit.", choices=("personal", "company")),
)
BY_KEY = {s.key: s for s in SETTINGS}
DESCRIBED = {s.key: s.describe() for s in SETTINGS}  # GET /config's `settings`: fixed for the process


@dataclass(frozen=True)
class Ignored:
    """A stored override that does not apply, and why."""

    key: str
    value: Any
    reason: str

RECALL_FIELDS = {f.name for f in fields(RecallConfig)}
DUPLICATE_FIELDS = {f.name for f in fields(DuplicateConfig)}


class SettingsService:
    def __init__(self, store: EventStore, clock: Clock, timezone: str = "UTC", fresh_for: float = 0.0) -> None:
        """`fresh_for`: seconds this process reuses the settings it read (0: the log is read every time; on AWS a
        capture would otherwise read them three times, and a change reaches every container within that long).
        A change made through this process is seen by it at once."""
        self.store = store
        self.clock = clock
        self.defaults = {s.key: s.default for s in SETTINGS} | {"TIMEZONE": timezone}
        self._reported: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()
        self.fresh_for = fresh_for
        self._folded: tuple[float, tuple[dict[str, Any], list[Ignored]]] | None = None

    def overrides(self) -> dict[str, Any]:
        """The valid overrides in the log, folded."""
        return self._fold()[0]

    def effective(self) -> dict[str, Any]:
        return {**self.defaults, **self.overrides()}

    def view(self) -> dict[str, Any]:
        overrides, ignored = self._fold()
        return {"ok": True, "config": {**self.defaults, **overrides}, "overrides": overrides,
                "defaults": dict(self.defaults), "ignored": [asdict(i) for i in sorted(ignored, key=lambda i: i.key)],
                "settings": DESCRIBED}

    def _fold(self) -> tuple[dict[str, Any], list[Ignored]]:
        folded = self._folded
        if folded is not None and time.monotonic() - folded[0] < self.fresh_for:
            return dict(folded[1][0]), list(folded[1][1])
        read_at = time.monotonic()
        result = self._read()
        if self.fresh_for:
            self._folded = (read_at, result)
        return dict(result[0]), list(result[1])

    def _read(self) -> tuple[dict[str, Any], list[Ignored]]:
        stored: dict[str, Any] = {}
        for envelope in self.store.read_stream(STREAM):
            event = envelope.event
            if isinstance(event, ConfigChanged):
                stored.update(event.values)
            elif isinstance(event, ConfigReset):
                stored.pop(event.key, None)
        valid, ignored = {}, []
        for key, value in stored.items():
            try:
                valid[key] = _check(key, value)
            except InvalidInput as exc:
                ignored.append(Ignored(key, value, exc.message))
        for keys, rule in _clashes({**self.defaults, **valid}):  # a default moved under an override
            reason = f"{rule} must hold with the other values; the group falls back to its defaults"
            ignored += [Ignored(key, valid.pop(key), reason) for key in keys if key in valid]
        self._report(ignored)
        return valid, ignored

    def _report(self, ignored: list[Ignored]) -> None:
        """Log each distinct problem once, not on every request that folds the settings."""
        with self._lock:
            new = [i for i in ignored if (i.key, repr(i.value), i.reason) not in self._reported]
            self._reported.update((i.key, repr(i.value), i.reason) for i in new)
        for item in new:
            log.warning("stored setting %s=%.200r ignored: %s", item.key, item.value, item.reason)

    def patch(self, ctx: Context, values: Any) -> dict[str, Any]:
        """Check every value, then the result as a whole; nothing is written unless all of it holds."""
        _admin(ctx)
        if not isinstance(values, dict):
            raise InvalidInput("Send an object of setting names to values")
        for key, value in values.items():
            _check(key, value)

        def attempt() -> None:
            history = self.store.read_stream(STREAM)
            _check_together({**self.effective(), **values})
            if values:
                self.store.append(envelopes(ctx, STREAM, len(history), [ConfigChanged(dict(values))], "",
                                            self.clock.now_ms()))
            self._folded = None

        retrying(attempt)
        return {"ok": True, "config": self.effective()}

    def reset(self, ctx: Context, key: str) -> dict[str, Any]:
        _admin(ctx)
        if key not in BY_KEY:
            raise NotFound(f"Unknown setting: {text.shorten(key)}")

        def attempt() -> None:
            history = self.store.read_stream(STREAM)
            _check_together({k: v for k, v in self.effective().items() if k != key} | {key: self.defaults[key]})
            self.store.append(envelopes(ctx, STREAM, len(history), [ConfigReset(key)], "", self.clock.now_ms()))
            self._folded = None

        retrying(attempt)
        return {"ok": True, "config": self.effective()}

    # -- what the services read, per request --------------------------------------------------------------------------

    def recall_config(self) -> RecallConfig:
        """Everything a recall reads, from one fold of the log: the weights, default hops and the time zone."""
        overrides = self.overrides()
        chosen = {BY_KEY[k].field: v for k, v in overrides.items() if BY_KEY[k].field in RECALL_FIELDS}
        return replace(RecallConfig(), **chosen, timezone=overrides.get("TIMEZONE", self.defaults["TIMEZONE"]))

    def duplicate_config(self) -> DuplicateConfig:
        chosen = {BY_KEY[k].field: v for k, v in self.overrides().items() if BY_KEY[k].field in DUPLICATE_FIELDS}
        return replace(DuplicateConfig(), **chosen)

    def value(self, key: str) -> Any:
        return self.effective()[key]

    def timezone(self) -> ZoneInfo:
        return ZoneInfo(self.value("TIMEZONE"))


FLOORS = ("RECENCY_FLOOR_VOLATILE", "RECENCY_FLOOR", "RECENCY_FLOOR_DURABLE")
THRESHOLDS = ("CANDIDATE_SCORE_THRESHOLD", "DUPLICATE_FLAG_THRESHOLD", "DUPLICATE_BLOCK_THRESHOLD")


def _check(key: str, value: Any) -> Any:
    if key not in BY_KEY:
        raise InvalidInput(f"Unknown setting: {text.shorten(key)}")
    return BY_KEY[key].check(value)


# Each group of settings, its rule, and whether their values (in the group's order) keep it.
INVARIANTS: tuple[tuple[tuple[str, ...], str, Callable[..., bool]], ...] = (
    (FLOORS, "RECENCY_FLOOR_VOLATILE <= RECENCY_FLOOR <= RECENCY_FLOOR_DURABLE", lambda v, o, d: v <= o <= d),
    (THRESHOLDS, "CANDIDATE_SCORE_THRESHOLD < DUPLICATE_FLAG_THRESHOLD < DUPLICATE_BLOCK_THRESHOLD",
     lambda c, f, b: c < f < b),
)


def _clashes(config: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """The groups of settings whose invariant `config` breaks, each with its rule."""
    return [(keys, rule) for keys, rule, holds in INVARIANTS if not holds(*(config[k] for k in keys))]


def _check_together(config: dict[str, Any]) -> None:
    """Invariants across settings: volatile <= ordinary <= durable floors; candidate < flag < block."""
    clashes = _clashes(config)
    if clashes:
        raise InvalidInput(f"{clashes[0][1]} must hold")


def _admin(ctx: Context) -> None:
    if ctx.identity.role != "admin":
        raise Forbidden("Only an admin may change settings")


def _kind_name(kind: type) -> str:
    return {int: "an integer", float: "a number", str: "a string"}[kind]

