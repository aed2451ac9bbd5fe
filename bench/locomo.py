"""Recall@1/5/10 on LoCoMo through the exact service calls the REST routes make, with leave-one-out tuning.

Usage:
  .venv/bin/python bench/locomo.py                                  # the shipped settings, per conversation
  .venv/bin/python bench/locomo.py --set context_weight=0.3         # one change, side by side with the shipped
  .venv/bin/python bench/locomo.py --grid context_weight=0,0.25,0.5 --grid dense_weight=0.3,0.4
                                                                    # leave-one-conversation-out over the grid
  .venv/bin/python bench/locomo.py --maintenance                    # before and after a nightly maintenance run

Each conversation is its own brain (a real SQLite file, the local embedder: e5-small-v2, or MiniLM with
--minilm). Its turns go in through `Transfer.import_page` (what POST /import calls) as "<speaker>: <text>",
created at the session's date plus one second per earlier turn; `operations.vectorize_pending` (POST
/vectorize-pending) indexes them; then every
question of categories 1-4 is asked in order through `operations.recall` (GET /recall) with topK=10, so recall
counting and every other side effect of a recall are in play. Scores are the share of a question's evidence
turns in the top k, averaged over questions. This is what `../shared/bench/locomo/locomo_eval.py` measures
over HTTP; it runs in-process so a grid of settings fits in minutes.

With --grid, every combination is scored on every conversation (a fresh brain each time); then, for each
conversation, the combination best on the other four (by R@5, then R@10) is scored on it. The leave-one-out
figure is the mean of those held-out scores: a setting chosen on the conversation it is judged on never counts.

The data is read from where it lies (../shared/bench/locomo/), never copied into the repository.
"""

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from second_brain.adapters.embedder.local import E5SmallEmbedder, MiniLMEmbedder  # noqa: E402
from second_brain.app import operations  # noqa: E402
from second_brain.app.memories.service import Context  # noqa: E402
from second_brain.app.recall.config import RecallConfig  # noqa: E402
from second_brain.app.transfer import parse_payload  # noqa: E402
from second_brain.bootstrap import build  # noqa: E402
from second_brain.settings import Settings  # noqa: E402

KS = (1, 5, 10)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEFAULT_DATA = ROOT.parent / "shared/bench/locomo/locomo-dev.json"


class RememberingEmbedder:
    """The packaged embedder, computing each distinct text once per run: the grid re-indexes the same turns."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.model_id, self.dimension, self.query_floor = embedder.model_id, embedder.dimension, embedder.query_floor
        self.vectors: dict[str, np.ndarray] = {}

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if missing:
            self.vectors.update(zip(missing, self.embedder.embed_batch(missing), strict=True))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.vectors[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        key = "\0query\0" + text
        if key not in self.vectors:
            self.vectors[key] = self.embedder.embed_query(text)
        return self.vectors[key]


def session_time(text: str) -> int:
    moment = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def turns_of(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    sessions = sorted(int(k.split("_")[1]) for k in conversation if k.startswith("session_") and k.count("_") == 1)
    turns = []
    for number in sessions:
        start = session_time(conversation[f"session_{number}_date_time"])
        for offset, turn in enumerate(conversation[f"session_{number}"]):
            turns.append({"dia_id": turn["dia_id"], "content": f"{turn['speaker']}: {turn['text']}",
                          "created_at": start + offset * 1000})
    return turns


def evidence_ids(qa: dict[str, Any]) -> set[str]:
    ids = set()
    for item in qa.get("evidence", []):
        for part in str(item).split(";"):
            part = part.strip()
            if part.startswith("D") and ":" in part:
                ids.add(part)
    return ids


def questions_of(sample: dict[str, Any]) -> list[tuple[str, set[str], int]]:
    return [(qa["question"], evidence_ids(qa), qa["category"]) for qa in sample["qa"]
            if qa.get("category") in CATEGORIES and evidence_ids(qa)]


def score_conversation(sample: dict[str, Any], config: RecallConfig, embedder: RememberingEmbedder,
                       maintenance: bool = False) -> dict[str, Any]:
    """One fresh brain: import, index (with `maintenance`, then every nightly job, as POST /maintenance/run
    runs them), then every question in order, the way a client would."""
    turns = turns_of(sample["conversation"])
    ids = {turn["dia_id"]: str(uuid.uuid4()) for turn in turns}
    payload = parse_payload({"version": 3, "entries": [
        {"id": ids[t["dia_id"]], "content": t["content"], "tags": [], "source": "locomo",
         "created_at": t["created_at"], "updated_at": t["created_at"]} for t in turns]})
    dia_of = {entry_id: dia for dia, entry_id in ids.items()}
    with tempfile.TemporaryDirectory() as tmp:
        brain = build(Settings(data_dir=Path(tmp) / "brain", sqlite_synchronous="OFF"), embedder=embedder)
        brain.recall.config = lambda: config
        ctx = Context(brain.owner, "bench")
        try:
            offset = 0
            while offset < len(turns):
                offset = brain.transfer.import_page(ctx, payload, 1000, offset)["next_offset"]
            while operations.vectorize_pending(brain, ctx, 500)["remaining"]:
                pass
            if maintenance:
                runs = operations.run_maintenance(brain, ctx, None)["runs"]
                print("  " + "; ".join(f"{r['job']} {r.get('counts', r.get('skipped'))}" for r in runs),
                      file=sys.stderr, flush=True)
            rows = []
            for question, wanted, category in questions_of(sample):
                started = time.perf_counter()
                answer = operations.recall(brain, ctx, question, 10)
                elapsed = (time.perf_counter() - started) * 1000
                results = answer["results"]
                found = [dia_of[r["id"]] for r in results if r["id"] in dia_of]
                rows.append({"category": category, "ms": elapsed, "weak": bool(answer.get("message")) or not results,
                             **{f"R@{k}": len(wanted & set(found[:k])) / len(wanted) for k in KS}})
        finally:
            brain.close()
    return {"rows": rows, **mean(rows)}


def mean(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {f"R@{k}": sum(r[f"R@{k}"] for r in rows) / len(rows) for k in KS} if rows else {}


def parse_value(field: str, value: str) -> Any:
    kind = {f.name: f.type for f in fields(RecallConfig)}[field]
    return {"int": int, "float": float, "str": str, "bool": lambda v: v.lower() in ("1", "true")}.get(
        kind if isinstance(kind, str) else getattr(kind, "__name__", "float"), float)(value)


def parse_settings(items: list[str], many: bool) -> dict[str, list[Any]]:
    known = {f.name for f in fields(RecallConfig)}
    chosen: dict[str, list[Any]] = {}
    for item in items:
        field, _, values = item.partition("=")
        if field not in known:
            raise SystemExit(f"unknown RecallConfig field {field!r}; one of: {', '.join(sorted(known))}")
        chosen[field] = [parse_value(field, v) for v in (values.split(",") if many else [values])]
    return chosen


def configs_from(set_items: list[str], grid_items: list[str]) -> dict[str, RecallConfig]:
    """The shipped settings, and each combination of --set and --grid over them, by label."""
    grid = parse_settings(grid_items, many=True)
    fixed = {k: v[0] for k, v in parse_settings(set_items, many=False).items()}
    configs = {"shipped": RecallConfig()}
    if fixed or grid:
        for combination in itertools.product(*grid.values()) if grid else [()]:
            chosen = {**fixed, **dict(zip(grid, combination, strict=True))}
            configs[label(chosen)] = replace(RecallConfig(), **chosen)
    return configs


def held_out_ranks(ranks: dict[str, list[Any]], fit: Any) -> list[Any]:
    """Leave one out over items ranked under several settings: each item's rank under the setting `fit` (of the
    other items' ranks) likes best."""
    count = len(next(iter(ranks.values())))
    held = []
    for index in range(count):
        def score(name: str, index: int = index) -> Any:
            return fit([r for i, r in enumerate(ranks[name]) if i != index])
        held.append(ranks[max(ranks, key=score)][index])
    return held


def label(settings: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in settings.items()) or "shipped"


def report(samples: list[dict[str, Any]], scores: dict[str, dict[str, dict[str, Any]]]) -> None:
    names = [s["sample_id"] for s in samples]
    width = max(len(n) for n in scores) + 2
    print(f"{'settings':<{width}}" + "".join(f"{n:>16}" for n in names) + f"{'all R@5 / R@10':>20}")
    for name, by_sample in scores.items():
        rows = [row for n in names for row in by_sample[n]["rows"]]
        overall = mean(rows)
        print(f"{name:<{width}}" + "".join(f"{by_sample[n]['R@5']:>9.3f}/{by_sample[n]['R@10']:.3f}" for n in names)
              + f"{overall['R@5']:>13.3f} / {overall['R@10']:.3f}")
    for name, by_sample in scores.items():
        rows = [row for n in names for row in by_sample[n]["rows"]]
        per_category = {CATEGORIES[c]: mean([r for r in rows if r["category"] == c]) for c in CATEGORIES}
        latencies = sorted(r["ms"] for r in rows)
        p95 = latencies[int(len(latencies) * .95)]
        print(f"\n{name}: R@1 {mean(rows)['R@1']:.3f}; by category " + ", ".join(
            f"{c} {m['R@5']:.3f}/{m['R@10']:.3f}" for c, m in per_category.items() if m)
              + f"; recall p50 {statistics.median(latencies):.1f} ms, p95 {p95:.1f} ms; answers said weak "
              f"{sum(r['weak'] for r in rows)}/{len(rows)} (every question has an answer in its conversation)")


def leave_one_out(samples: list[dict[str, Any]], scores: dict[str, dict[str, dict[str, Any]]]) -> None:
    names = [s["sample_id"] for s in samples]
    held_rows = []
    print("\nleave-one-conversation-out: for each conversation, the settings best on the other four")
    for held in names:
        others = [n for n in names if n != held]

        def fit(name: str, others: list[str] = others) -> tuple[float, float]:
            rows = [row for n in others for row in scores[name][n]["rows"]]
            overall = mean(rows)
            return overall["R@5"], overall["R@10"]

        best = max(scores, key=fit)
        held_rows += scores[best][held]["rows"]
        print(f"  {held}: {best}  ->  R@5 {scores[best][held]['R@5']:.3f}  R@10 {scores[best][held]['R@10']:.3f}")
    overall = mean(held_rows)
    print(f"leave-one-out overall ({len(held_rows)} questions): R@1 {overall['R@1']:.3f}  R@5 {overall['R@5']:.3f}"
          f"  R@10 {overall['R@10']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit-convs", type=int, help="only the first N conversations")
    parser.add_argument("--minilm", action="store_true", help="the MiniLM embedder instead of e5-small-v2")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="a RecallConfig change, scored beside the shipped settings")
    parser.add_argument("--grid", action="append", default=[], metavar="FIELD=V1,V2,...",
                        help="values to choose among by leave-one-conversation-out")
    parser.add_argument("--maintenance", action="store_true",
                        help="also score each conversation after a full nightly maintenance run, side by side")
    args = parser.parse_args()
    samples = json.loads(args.data.read_text())[: args.limit_convs]
    embedder = RememberingEmbedder(MiniLMEmbedder() if args.minilm else E5SmallEmbedder())
    variants = configs_from(args.set, args.grid)
    started = time.perf_counter()
    scores: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in variants}
    if args.maintenance:
        scores["after maintenance"] = {}
    for sample in samples:
        for name, config in variants.items():
            scores[name][sample["sample_id"]] = score_conversation(sample, config, embedder)
        if args.maintenance:
            scores["after maintenance"][sample["sample_id"]] = score_conversation(sample, RecallConfig(), embedder,
                                                                                  maintenance=True)
        print(f"{sample['sample_id']} done ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    questions = sum(len(by["rows"]) for by in scores["shipped"].values())
    print(f"LoCoMo through operations.recall: {questions} questions (categories 1-4), {len(samples)} conversations, "
          f"{len(variants)} settings, {time.perf_counter() - started:.0f} s\n")
    report(samples, scores)
    if len(variants) > 1 and len(samples) > 1:
        leave_one_out(samples, scores)


if __name__ == "__main__":
    main()
