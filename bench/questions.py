"""Natural questions over a person's notes: the brain's answers beside its embedder's alone, with leave-one-out tuning.

Usage:
  .venv/bin/python bench/questions.py                                # shipped settings vs e5 alone
  .venv/bin/python bench/questions.py --set keyword_weight=0.5       # one change, beside the shipped
  .venv/bin/python bench/questions.py --grid dense_weight=0.6,0.8    # leave-one-question-out over the grid

The set is `../shared/bench/questions/dev_set.json` (read where it lies, never copied): 250 notes of one person
over three months, 50 questions with the notes that answer them (where a fact changed, only the newest) and 10
whose answer the brain does not hold. One brain (a real SQLite file, the packaged e5-small-v2) gets every note
through `Transfer.import_page` (POST /import, version 3) with its age, indexed by `operations.vectorize_pending`;
each question goes through `operations.recall` (GET /recall) with topK=10, as `questions_eval.py` does over HTTP.
"e5 alone" ranks the same notes by the cosine of the same vectors. For the unanswerable questions it counts the
answers that say they are weak (a `message`, or no results), and for the answerable ones those that wrongly do.

With --grid, every question is scored under every combination; for each question, the combination best on the
other 49 (hit@3, then hit@1, then MRR) is scored on it, and the mean of those held-out scores is the
leave-one-out figure.
"""

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from locomo import RememberingEmbedder, configs_from, held_out_ranks  # noqa: E402

from second_brain.adapters.embedder.local import E5SmallEmbedder  # noqa: E402
from second_brain.app import operations  # noqa: E402
from second_brain.app.memories.service import Context  # noqa: E402
from second_brain.app.recall.config import RecallConfig  # noqa: E402
from second_brain.app.transfer import parse_payload  # noqa: E402
from second_brain.bootstrap import build  # noqa: E402
from second_brain.settings import Settings  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared/bench/questions/dev_set.json"
DAY_MS = 86_400_000
TOP_K = 10


def alone(embedder: RememberingEmbedder, notes: list[dict[str, Any]], questions: list[dict[str, Any]]
          ) -> list[int | None]:
    """Rank of each question's first gold note among all notes by cosine, exact; None past 10."""
    matrix = embedder.embed_batch([note["content"] for note in notes])
    keys = [note["key"] for note in notes]
    ranks: list[int | None] = []
    for question in questions:
        order = [keys[i] for i in np.argsort(-(matrix @ embedder.embed_query(question["question"])))]
        ranks.append(first(order, question["gold"]))
    return ranks


def first(order: list[str], gold: list[str]) -> int | None:
    rank = next((i + 1 for i, key in enumerate(order) if key in gold), None)
    return rank if rank is not None and rank <= TOP_K else None


def through_brain(data: dict[str, Any], embedder: RememberingEmbedder,
                  configs: dict[str, RecallConfig]) -> dict[str, dict[str, Any]]:
    """Per settings: each answerable question's rank, and which answers said they were weak."""
    now = int(time.time() * 1000) // 60_000 * 60_000
    ids = {note["key"]: str(uuid.uuid4()) for note in data["notes"]}
    key_of = {entry_id: key for key, entry_id in ids.items()}
    payload = parse_payload({"version": 3, "entries": [
        {"id": ids[note["key"]], "content": note["content"], "tags": note["tags"], "source": "api",
         "created_at": now - round(note["age_days"] * DAY_MS)} for note in data["notes"]]})
    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        brain = build(Settings(data_dir=Path(tmp) / "brain", sqlite_synchronous="OFF"), embedder=embedder)
        ctx = Context(brain.owner, "bench")
        try:
            offset = 0
            while offset < len(data["notes"]):
                offset = brain.transfer.import_page(ctx, payload, 1000, offset)["next_offset"]
            while operations.vectorize_pending(brain, ctx, 500)["remaining"]:
                pass
            for name, config in configs.items():
                brain.recall.config = lambda config=config: config
                ranks: list[int | None] = []
                weak: list[bool] = []
                for question in data["questions"]:
                    body = operations.recall(brain, ctx, question["question"], TOP_K)
                    said_weak = bool(body.get("message")) or not body["results"]
                    if question["gold"]:
                        ranks.append(first([key_of[r["id"]] for r in body["results"]], question["gold"]))
                    weak.append(said_weak)
                out[name] = {"ranks": ranks, "weak": weak}
        finally:
            brain.close()
    return out


def hits(ranks: list[int | None], k: int) -> float:
    return sum(r is not None and r <= k for r in ranks) / len(ranks)


def mrr(ranks: list[int | None]) -> float:
    return sum(1 / r for r in ranks if r is not None) / len(ranks)


def figures(ranks: list[int | None]) -> str:
    return f"hit@1 {hits(ranks, 1):.3f}  hit@3 {hits(ranks, 3):.3f}  hit@10 {hits(ranks, 10):.3f}  MRR {mrr(ranks):.3f}"


def leave_one_out(scores: dict[str, dict[str, Any]]) -> list[int | None]:
    return held_out_ranks({n: s["ranks"] for n, s in scores.items()},
                          lambda rest: (hits(rest, 3), hits(rest, 1), mrr(rest)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    parser.add_argument("--grid", action="append", default=[], metavar="FIELD=V1,V2,...")
    parser.add_argument("--rows", action="store_true", help="print each question's rank under every setting")
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    embedder = RememberingEmbedder(E5SmallEmbedder())
    configs = configs_from(args.set, args.grid)
    answerable = [q for q in data["questions"] if q["gold"]]
    absent = [i for i, q in enumerate(data["questions"]) if not q["gold"]]
    present = [i for i, q in enumerate(data["questions"]) if q["gold"]]
    base = alone(embedder, data["notes"], answerable)
    print(f"{len(data['notes'])} notes, {len(answerable)} answerable and {len(absent)} unanswerable questions, "
          f"topK={TOP_K}")
    print(f"{'e5 alone (cosine, exact)':<40} {figures(base)}")
    scores = through_brain(data, embedder, configs)
    for name, result in scores.items():
        ranks = result["ranks"]
        lost = sum(b is not None and b <= 3 and (r is None or r > 3) for b, r in zip(base, ranks, strict=True))
        weak_absent = sum(result["weak"][i] for i in absent)
        weak_present = sum(result["weak"][i] for i in present)
        print(f"{'brain: ' + name:<40} {figures(ranks)}  lost vs alone@3 {lost}  "
              f"unanswerable said weak {weak_absent}/{len(absent)}, answerable {weak_present}/{len(present)}")
    if args.rows:
        for index, question in enumerate(answerable):
            print(f"  {question['question'][:48]:<48} alone {base[index]}  " + "  ".join(
                f"{scores[n]['ranks'][index]}" for n in scores))
    if len(configs) > 1:
        held = leave_one_out(scores)
        print(f"leave-one-question-out over {len(configs)} settings: {figures(held)}")


if __name__ == "__main__":
    main()
