"""Where a recall's time goes, stage by stage, on a brain already on disk (one that bench/scale.py left behind).

Usage: .venv/bin/python bench/stages.py DATA_DIR [--repeat 30]

Opens the brain in-process (its server must be stopped), then asks the bench/scale.py queries through
`operations.recall`, the call GET /recall makes, recall counting included, and prints the mean milliseconds each
stage took: the stages are timed by wrapping the methods that do them, so nothing else in the path changes.
Whatever is left of the total is parsing, fusion, ranking signals and the Python between the stages.
"""

import argparse
import collections
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from scale import QUERIES  # noqa: E402

from second_brain.app import operations  # noqa: E402
from second_brain.app.memories.service import Context  # noqa: E402
from second_brain.app.recall import pipeline, ranking  # noqa: E402
from second_brain.bootstrap import build  # noqa: E402
from second_brain.settings import Settings  # noqa: E402

SPENT: dict[str, list[float]] = collections.defaultdict(list)


def timed(owner: object, name: str, stage: str) -> None:
    """Replace owner.name by a wrapper adding its time to `stage`."""
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            SPENT[stage].append((time.perf_counter() - started) * 1000)

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--member", help="ask as this team member (by name) instead of the owner")
    args = parser.parse_args()
    brain = build(Settings(data_dir=args.data_dir))
    if brain.worker:
        brain.worker.stop()
    identity = brain.team.owner_identity()
    if args.member:
        member = next(m for m in brain.team.state().active() if m.name == args.member)
        identity = brain.team.member_identity(member.token_hash)
    ctx = Context(identity, "stages")
    recall, read_model = brain.recall, brain.recall.read_model
    timed(recall.embedder, "embed_query", "query embedding")
    timed(read_model, "term_stats", "keyword arm: term statistics")
    timed(read_model, "keyword_search", "keyword arm: full-text search")
    timed(read_model, "scan_search", "keyword arm: full-text search")
    timed(recall.vectors, "search", "vector arm: k-NN")
    timed(read_model, "hydrate", "reading candidates (hydrate)")
    timed(recall, "_complete", "scoring candidates on both arms")
    timed(ranking, "fuse", "fusion")
    timed(read_model, "neighbours", "episodic context")
    timed(ranking, "mmr", "diversity (MMR)")
    timed(pipeline, "snippet", "snippets")
    timed(brain.config, "recall_config", "reading settings")
    recall.config = brain.config.recall_config  # the service holds the method it was built with
    timed(brain.memories, "record_recalls", "recall counting")
    timed(operations, "recall", "total (operations.recall)")
    for name, query in QUERIES.items():
        SPENT.clear()
        for _ in range(3):
            operations.recall(brain, ctx, query, 10)
        SPENT.clear()
        for _ in range(args.repeat):
            operations.recall(brain, ctx, query, 10)
        total = statistics.mean(SPENT["total (operations.recall)"])
        print(f"\n{name!r} ({query!r}): {total:.1f} ms in total, p50 "
              f"{statistics.median(SPENT['total (operations.recall)']):.1f} ms")
        for stage, times in sorted(SPENT.items(), key=lambda item: -sum(item[1])):
            if not stage.startswith("total"):
                share = sum(times) / args.repeat
                print(f"  {stage:<36} {share:6.2f} ms  ({100 * share / total:4.1f}%)")
    brain.close()


if __name__ == "__main__":
    main()
