"""Where a recall's time goes, stage by stage, on a brain already on disk (one that bench/scale.py left behind).

Usage: .venv/bin/python bench/stages.py DATA_DIR [--repeat 30]

Opens the brain in-process (its server must be stopped), then asks the diverse workload (bench/workload.py: 50
distinct rare-word, everyday and paraphrase queries, each asked once, interleaved) through `operations.recall`, the
call GET /recall makes, recall counting included, and prints per kind the mean milliseconds each stage took: the
stages are timed by wrapping the methods that do them, so nothing else in the path changes. Whatever is left of
the total is parsing, fusion, ranking signals and the Python between the stages. With --repeated, the three fixed
bench/scale.py queries instead, each asked --repeat times (warm caches: what the old bench measured).
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

import workload  # noqa: E402
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
    parser.add_argument("--repeated", action="store_true", help="the three fixed queries, --repeat times each")
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
    timed(read_model, "spellings", "spelling (words one slip away)")
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
    if args.repeated:
        for name, query in QUERIES.items():
            for _ in range(3):
                operations.recall(brain, ctx, query, 10)
            SPENT.clear()
            for _ in range(args.repeat):
                operations.recall(brain, ctx, query, 10)
            report(f"{name!r} ({query!r}), asked {args.repeat} times", dict(SPENT))
    else:
        spent: dict[str, dict[str, list[float]]] = collections.defaultdict(lambda: collections.defaultdict(list))
        for query in workload.queries():
            SPENT.clear()
            operations.recall(brain, ctx, query.text, 10)
            for stage, times in SPENT.items():
                spent[query.kind][stage].append(sum(times))
        for kind, stages in spent.items():
            report(f"{kind}: {len(stages['total (operations.recall)'])} distinct queries, each once", stages)
    brain.close()


def report(title: str, stages: dict[str, list[float]]) -> None:
    """Mean ms per recall of each stage (a stage a recall never reached counts 0 for it)."""
    totals = stages["total (operations.recall)"]
    total = statistics.mean(totals)
    print(f"\n{title}: {total:.1f} ms mean, p50 {statistics.median(totals):.1f} ms")
    for stage, times in sorted(stages.items(), key=lambda item: -sum(item[1])):
        if not stage.startswith("total"):
            share = sum(times) / len(totals)
            print(f"  {stage:<36} {share:6.2f} ms  ({100 * share / total:4.1f}%)")


if __name__ == "__main__":
    main()
