"""Calibrate the duplicate thresholds for the local embedder, and measure the contradiction rules.

Reads the labelled note pairs in tests/data/note_pairs.jsonl (contradiction, paraphrase, addition,
duplicate, distinct), embeds both notes of each pair with the local e5-small-v2 model (MiniLM with --minilm),
and prints:

- the cosine range of each label (what the block / flag thresholds must separate);
- the hit rate of the no-model contradiction rules on each label;
- what the triage would do with each pair at the configured thresholds (block, flag, contradiction, store);
- a leave-one-out calibration of the three thresholds that flag a repeat (flag, restate, restate share): each
  pair in turn is held out, the thresholds are chosen on the others (the largest share of repeats flagged less
  the share of others flagged, with at most 10% of the others flagged; ties to the middle of the tied points),
  and the held-out pair is judged with them. The pool is note_pairs.jsonl plus, when present, the capture
  bench's development set (../shared/bench/capture/dev_set.json, read where it lies, never copied): its
  near-duplicates are repeats; its distinct pairs, look-alikes and changes are not (additions count neither
  way). It prints the held-out figures, and the thresholds all pairs choose beside the configured ones.

Usage: .venv/bin/python bench/duplicates.py [--minilm] [--no-loo]
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
CAPTURE_DEV = ROOT.parent / "shared" / "bench" / "capture" / "dev_set.json"
REPEATS = frozenset({"paraphrase", "duplicate", "near_duplicates"})
NEUTRAL = frozenset({"addition"})  # a note that adds a detail to one held: flagged or not, neither is wrong
MAX_OTHERS_FLAGGED = 0.10
FLAG_GRID = np.round(np.arange(0.84, 0.961, 0.01), 2)
RESTATE_GRID = np.round(np.arange(0.45, 0.901, 0.01), 2)
SHARE_GRID = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)


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


def calibration_pool(pairs: list[dict]) -> list[tuple[str, str, str]]:
    pool = [(p["label"], p["old"], p["new"]) for p in pairs]
    if CAPTURE_DEV.exists():
        dev = json.loads(CAPTURE_DEV.read_text())
        for label in ("near_duplicates", "distinct", "lookalikes", "changes"):
            pool += [(label, kind_old_new[1], kind_old_new[2]) for kind_old_new in dev.get(label, [])]
    return pool


def flags(scores: np.ndarray, restates: dict[float, np.ndarray], judged: np.ndarray) -> np.ndarray:
    """Whether each pair is flagged as a repeat, for every (flag, restate, share) in the grid: shape
    (flags, restates, shares, pairs). A pair the rules judge a change or a possible one is never a repeat."""
    high = scores[None, :] >= FLAG_GRID[:, None]  # (F, N)
    low = scores[None, :] >= RESTATE_GRID[:, None]  # (R, N)
    said = np.stack([restates[share] for share in SHARE_GRID])  # (S, N)
    out = high[:, None, None, :] | (low[None, :, None, :] & said[None, None, :, :])
    return out & ~judged[None, None, None, :]


def choose(flagged: np.ndarray, repeat: np.ndarray, other: np.ndarray, keep: np.ndarray) -> tuple[int, int, int]:
    """The grid point with the largest share of repeats flagged less the share of others flagged, among `keep`, with
    at most 10% of the others flagged; ties go to the middle of the tied points (away from a cliff)."""
    rep, oth = keep & repeat, keep & other
    caught = flagged[..., rep].sum(axis=-1)
    wrong = flagged[..., oth].sum(axis=-1)
    allowed = wrong <= MAX_OTHERS_FLAGGED * oth.sum()
    youden = caught / max(rep.sum(), 1) - wrong / max(oth.sum(), 1)
    score = np.where(allowed, np.round(youden, 6), -1.0)
    best = np.argwhere(score == score.max())
    middle = best[len(best) // 2]
    return int(middle[0]), int(middle[1]), int(middle[2])


def leave_one_out(embedder, pairs: list[dict]) -> None:
    pool = calibration_pool(pairs)
    texts = sorted({t for _, o, n in pool for t in (o, n)})
    vectors = dict(zip(texts, embedder.embed_batch([duplicate_sample(t) for t in texts]), strict=True))
    scores = np.array([float(np.dot(vectors[o], vectors[n])) for _, o, n in pool])
    restates = {share: np.array([contradictions.restates_fact(o, n, share) for _, o, n in pool])
                for share in SHARE_GRID}
    judged = np.array([bool(contradictions.conflict(o, n) or contradictions.doubt(o, n)
                            or contradictions.announced(o, n)) for _, o, n in pool])
    repeat = np.array([label in REPEATS for label, _, _ in pool])
    other = np.array([label not in REPEATS | NEUTRAL for label, _, _ in pool])
    flagged = flags(scores, restates, judged)
    held = np.zeros(len(pool), dtype=bool)
    everyone = np.ones(len(pool), dtype=bool)
    for i in range(len(pool)):
        keep = everyone.copy()
        keep[i] = False
        f, r, s = choose(flagged, repeat, other, keep)
        held[i] = flagged[f, r, s, i]
    print(f"\nleave-one-out over {len(pool)} pairs ({repeat.sum()} repeats; capture dev set "
          f"{'included' if CAPTURE_DEV.exists() else 'absent'}):")
    for label in sorted({label for label, _, _ in pool}):
        mine = np.array([lb == label for lb, _, _ in pool])
        print(f"  {label:16} held-out flagged {held[mine].sum():3d}/{mine.sum()}")
    print(f"  repeats flagged {held[repeat].mean():.3f}; others flagged {held[other].mean():.3f}")
    f, r, s = choose(flagged, repeat, other, everyone)
    config = DuplicateConfig()
    print(f"  thresholds chosen on all pairs: flag {FLAG_GRID[f]}, restate {RESTATE_GRID[r]}, share "
          f"{SHARE_GRID[s]} (configured: {config.flag_threshold}, {config.restate_threshold}, "
          f"{config.restate_share})")
    at = (int(np.argmin(abs(FLAG_GRID - config.flag_threshold))),
          int(np.argmin(abs(RESTATE_GRID - config.restate_threshold))), SHARE_GRID.index(config.restate_share))
    configured = flagged[at]
    print(f"  configured on all pairs: repeats flagged {configured[repeat].mean():.3f}, others flagged "
          f"{configured[other].mean():.3f}")


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
    if "--no-loo" not in sys.argv:
        leave_one_out(embedder, pairs)


if __name__ == "__main__":
    main()
