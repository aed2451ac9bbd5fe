"""Calibrate the duplicate thresholds for the local embedder, and measure the contradiction rules.

Reads the labelled note pairs in tests/data/note_pairs.jsonl (contradiction, paraphrase, addition,
duplicate, distinct), embeds both notes of each pair with the local e5-small-v2 model (MiniLM with --minilm),
and prints:

- the cosine range of each label (what the block / flag thresholds must separate);
- the hit rate of the no-model contradiction rules on each label;
- what the triage would do with each pair at the configured thresholds (block, flag, contradiction, store).

Usage: .venv/bin/python bench/duplicates.py [--minilm]
"""

import json
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from second_brain.adapters.embedder.local import E5SmallEmbedder, MiniLMEmbedder  # noqa: E402
from second_brain.app.memories.triage import DuplicateConfig, duplicate_sample  # noqa: E402
from second_brain.domain import contradictions  # noqa: E402

PAIRS = ROOT / "tests" / "data" / "note_pairs.jsonl"


def decide(old: str, new: str, score: float, config: DuplicateConfig) -> str:
    """The no-model triage for one candidate, as app/memories/triage.py runs it."""
    if score < config.candidate_threshold:
        return "store"
    if (score >= config.block_threshold and contradictions.adds_nothing(old, new)
            and not contradictions.conflict(old, new)):
        return "block"
    if contradictions.conflict(old, new):
        return "contradiction"
    if contradictions.doubt(old, new) or contradictions.announced(old, new):
        return "possible update"
    if score >= config.flag_threshold or (score >= config.restate_threshold
                                          and contradictions.restates_fact(old, new, config.restate_share)):
        return "flag"
    return "store"


def main() -> None:
    pairs = [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]
    embedder = MiniLMEmbedder() if "--minilm" in sys.argv else E5SmallEmbedder()
    print(f"embedder: {embedder.model_id}")
    old = embedder.embed_batch([duplicate_sample(p["old"]) for p in pairs])
    new = embedder.embed_batch([duplicate_sample(p["new"]) for p in pairs])
    scores = np.sum(np.asarray(old) * np.asarray(new), axis=1)
    config = DuplicateConfig()

    by_label: dict[str, list[float]] = defaultdict(list)
    rule_hits: Counter[str] = Counter()
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    for pair, score in zip(pairs, scores, strict=True):
        label = pair["label"]
        by_label[label].append(float(score))
        rule_hits[label] += bool(contradictions.conflict(pair["old"], pair["new"]))
        outcomes[label][decide(pair["old"], pair["new"], float(score), config)] += 1

    print(f"{len(pairs)} pairs; thresholds block {config.block_threshold}, flag {config.flag_threshold}, "
          f"candidates {config.candidate_threshold}\n")
    print(f"{'label':14} {'n':>3} {'min':>6} {'median':>7} {'max':>6}   rules say contradiction")
    for label, values in sorted(by_label.items()):
        n = len(values)
        print(f"{label:14} {n:3d} {min(values):6.3f} {statistics.median(values):7.3f} {max(values):6.3f}   "
              f"{rule_hits[label]:2d}/{n} ({rule_hits[label] / n:.0%})")
    print("\ntriage without a model (per label):")
    for label, counts in sorted(outcomes.items()):
        print(f"  {label:14} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    others = [s for label, values in by_label.items() if label != "duplicate" for s in values]
    print(f"\nhighest non-duplicate cosine {max(others):.3f}; lowest duplicate {min(by_label['duplicate']):.3f}")
    blocked = {label: sum(s >= 0.95 for s in values) for label, values in sorted(by_label.items())}
    print("cosine alone at the reference's 0.95 block threshold would block: "
          + ", ".join(f"{label} {n}/{len(by_label[label])}" for label, n in blocked.items()))


if __name__ == "__main__":
    main()
