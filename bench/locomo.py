"""Recall@1/5/10 on LoCoMo: keyword only, vector only and the full pipeline, side by side in one run.

Usage: .venv/bin/python bench/locomo.py [--data ../shared/bench/locomo/locomo-dev.json] [--limit N]

Each conversation is its own brain (a real SQLite file). Every turn is captured as one memory,
"<speaker>: <text>", stamped with its session's date; questions of categories 1-4 are asked with
topK=10 and scored by the share of their evidence turns found in the top k (category 5 is
adversarial: its answers are not in the conversation). The data is read from where it lies,
never copied into the repository.
"""

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from second_brain.adapters.embedder.local import MiniLMEmbedder  # noqa: E402
from second_brain.app.memories import Context  # noqa: E402
from second_brain.app.recall import query  # noqa: E402
from second_brain.app.recall.config import RecallConfig  # noqa: E402
from second_brain.app.recall.pipeline import RecallService  # noqa: E402
from second_brain.bootstrap import build  # noqa: E402
from second_brain.domain.identity import owner  # noqa: E402
from second_brain.ports.read_model import Filters  # noqa: E402
from second_brain.settings import Settings  # noqa: E402

KS = (1, 5, 10)


class Clock:
    def __init__(self) -> None:
        self.now = 0

    def now_ms(self) -> int:
        return self.now


def session_time(text: str) -> int:
    moment = datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def evidence_ids(qa: dict) -> set[str]:
    ids = set()
    for item in qa.get("evidence", []):
        for part in str(item).split(";"):
            part = part.strip()
            if part.startswith("D") and ":" in part:
                ids.add(part)
    return ids


def load_brain(conversation: dict, directory: Path, embedder: MiniLMEmbedder):
    clock = Clock()
    brain = build(Settings(data_dir=directory, sqlite_synchronous="OFF"), clock=clock, embedder=embedder)
    ctx = Context(owner(), "bench")
    dia_of: dict[str, list[str]] = {}  # a turn blocked as a repeat is held by the memory it repeats
    sessions = sorted((int(k.split("_")[1]) for k in conversation if k.startswith("session_") and
                       k.count("_") == 1), key=int)
    for number in sessions:
        start = session_time(conversation[f"session_{number}_date_time"])
        for offset, turn in enumerate(conversation[f"session_{number}"]):
            clock.now = start + offset * 1000
            outcome = brain.memories.capture(ctx, f"{turn['speaker']}: {turn['text']}", [], "locomo")
            dia_of.setdefault(outcome.id, []).append(turn["dia_id"])
    while brain.indexer.run_once(512).remaining:
        pass
    clock.now = int(time.time() * 1000)  # questions are asked today
    return brain, dia_of


def evaluate(data: list[dict], limit: int | None) -> None:
    embedder = MiniLMEmbedder()
    base = RecallConfig()
    arms = {
        "keyword only": replace(base, dense_weight=0.0),
        "vector only": replace(base, keyword_weight=0.0),
        "full pipeline": base,
    }
    totals = {name: {k: 0.0 for k in KS} for name in arms}
    asked = 0
    started = time.perf_counter()
    for conversation in data:
        with tempfile.TemporaryDirectory() as tmp:
            brain, dia_of = load_brain(conversation["conversation"], Path(tmp) / "brain", embedder)
            filters = Filters(brain.owner.readable)
            for qa in conversation["qa"]:
                if qa.get("category") not in (1, 2, 3, 4):
                    continue
                wanted = evidence_ids(qa)
                if not wanted:
                    continue
                parsed = query.parse(qa["question"])
                for name, config in arms.items():
                    service = RecallService(brain.recall.read_model, brain.vectors, embedder, brain.recall.clock,
                                            lambda config=config: config)
                    ranked, _ = service.rank(parsed, filters, 10, config)
                    found = [dia for key, _ in ranked for dia in dia_of[key]]
                    for k in KS:
                        totals[name][k] += len(wanted & set(found[:k])) / len(wanted)
                asked += 1
                if limit and asked >= limit:
                    break
            brain.close()
        if limit and asked >= limit:
            break
    print(f"LoCoMo: {asked} questions (categories 1-4), {len(data)} conversations, "
          f"{time.perf_counter() - started:.0f}s")
    print(f"{'method':<16}" + "".join(f"{'R@' + str(k):>8}" for k in KS))
    for name in arms:
        print(f"{name:<16}" + "".join(f"{totals[name][k] / asked:>8.3f}" for k in KS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared/bench/locomo/locomo-dev.json"))
    parser.add_argument("--limit", type=int, help="stop after this many questions")
    args = parser.parse_args()
    evaluate(json.loads(Path(args.data).read_text()), args.limit)


if __name__ == "__main__":
    main()
