"""Forgiving words: a query with one typo per word finds what the corrected query finds.

Usage:
  BRAIN_BIN=.venv/bin/brain .venv/bin/python bench/typos.py              # build the set, ask both, print
  BRAIN_BIN=.venv/bin/brain .venv/bin/python bench/typos.py --seed 7     # another draw of words and typos

The typo set is built here, from the development notes of `../shared/bench/semantic/dev_pairs.json` (read where
they lie, never copied): for each of the 70 notes (30 pair notes, 40 distractors) a query of two or three of the
note's own distinctive words (four letters or more, not stopwords, drawn with a seeded generator), and the same
query with one typo in every word: a dropped, doubled, swapped (two neighbours) or replaced letter, edit distance 1
each. Every pair is printed. A fresh brain (`brain serve`, through the locomo harness: real HTTP, the packaged
model) gets every note through POST /capture, waits for indexing, and each query, correct and misspelt, is asked
once with GET /recall?topK=5.

Prints: how often the misspelt query's top result is the correct query's (the promise: >= 0.9), hit@3 of the
note for both, how many misspelt answers name `did_you_mean`, and how many were searched as corrected
(`query_used`). Exit 1 under 0.9.
"""

import argparse
import json
import random
import re
import string
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared/bench"
sys.path.insert(0, str(SHARED / "locomo"))

from harness import Brain  # noqa: E402

STOP = set(
    "the a an and or of to in on for is are was were be been with about from at as by into over after before "
    "this that these those their there then than when what which while will would could should have has had "
    "just also very much many more most some each every next last until your ours".split()
)


def words_of(note: str) -> list[str]:
    found = re.findall(r"[A-Za-z]+", note)
    return list(dict.fromkeys(w.lower() for w in found if len(w) >= 4 and w.lower() not in STOP))


def typo(word: str, rng: random.Random) -> str:
    """One edit: drop, double, swap two neighbours, or replace a letter (never the first: people rarely miss it)."""
    while True:
        kind = rng.choice(["drop", "double", "swap", "replace"])
        at = rng.randrange(1, len(word))
        if kind == "drop":
            out = word[:at] + word[at + 1:]
        elif kind == "double":
            out = word[:at] + word[at] + word[at:]
        elif kind == "swap":
            at = min(at, len(word) - 2)
            out = word[:at] + word[at + 1] + word[at] + word[at + 2:]
        else:
            out = word[:at] + rng.choice([c for c in string.ascii_lowercase if c != word[at]]) + word[at + 1:]
        if out != word:
            return out


def typo_set(notes: list[str], seed: int) -> list[tuple[int, str, str]]:
    """(note index, correct query, misspelt query) for each note with at least two distinctive words."""
    rng = random.Random(seed)
    cases = []
    for index, note in enumerate(notes):
        words = words_of(note)
        if len(words) < 2:
            continue
        chosen = rng.sample(words, min(len(words), rng.choice([2, 3])))
        cases.append((index, " ".join(chosen), " ".join(typo(w, rng) for w in chosen)))
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED / "semantic/dev_pairs.json")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    notes = [note for note, _ in data["pairs"]] + data["distractors"]
    cases = typo_set(notes, args.seed)
    rows = []
    with Brain(label="typos") as client:
        ids = [client.capture_id(note) for note in notes]
        client.wait_indexed()
        for index, correct, misspelt in cases:
            right = client.recall(correct, topK=5)
            wrong = client.recall(misspelt, topK=5)
            right_ids = [r["id"] for r in right.get("results", [])]
            wrong_ids = [r["id"] for r in wrong.get("results", [])]
            rows.append({
                "correct": correct, "misspelt": misspelt,
                "same_top": bool(right_ids) and wrong_ids[:1] == right_ids[:1],
                "correct_hit3": ids[index] in right_ids[:3], "misspelt_hit3": ids[index] in wrong_ids[:3],
                "did_you_mean": wrong.get("did_you_mean"), "query_used": wrong.get("query_used"),
            })
    n = len(rows)
    for row in rows:
        mark = "=" if row["same_top"] else "x"
        print(f"{mark} {row['misspelt']!r:40} -> {row['correct']!r:40} did_you_mean={row['did_you_mean']!r} "
              f"query_used={row['query_used']!r}")
    same = sum(r["same_top"] for r in rows)
    offered = sum(r["did_you_mean"] is not None for r in rows)
    print(f"typos (seed {args.seed}, {n} queries): same top result {same}/{n} = {same / n:.3f} | "
          f"hit@3 correct {sum(r['correct_hit3'] for r in rows)}/{n}, misspelt {sum(r['misspelt_hit3'] for r in rows)}"
          f"/{n} | did_you_mean offered {offered}/{n}")
    return 0 if same / n >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
