"""Measure the component every e5-small-v2 vector shares, and write it for the embedder to subtract.

Usage: .venv/bin/python tools/embedder_centre.py   (rewrites src/second_brain/adapters/embedder/e5_small_v2_centre.json)

The centre is the mean "passage: " vector of neutral text no evaluation uses: the first paragraphs of the Python
standard library's docstrings (technical English) and the synthetic notes of bench/scale.py (short personal and
work notes), in equal weight. Subtracting it and normalising again moves e5's cosines from 0.7-1.0 to about
MiniLM's scale, so the product's cosine thresholds keep their meaning; ranking by one query barely moves.
"""

import importlib
import inspect
import json
import random
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "bench")]

from second_brain.adapters.embedder import local  # noqa: E402

SKIP = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo"}


def docstrings(limit: int = 1500) -> list[str]:
    seen: dict[str, None] = {}
    for name in sorted(sys.stdlib_module_names):
        if name.startswith("_") or name in SKIP:
            continue
        try:
            module = importlib.import_module(name)
        except ImportError:  # platform-specific modules
            continue
        for obj in [module, *(v for v in vars(module).values() if inspect.isfunction(v) or inspect.isclass(v))]:
            paragraph = " ".join((inspect.getdoc(obj) or "").split("\n\n")[0].split())
            if 40 <= len(paragraph) <= 400 and not re.search(r"[<>{}=()]{3,}", paragraph):
                seen[paragraph] = None
    texts = list(seen)
    random.Random(7).shuffle(texts)
    return texts[:limit]


def notes(count: int = 1000) -> list[str]:
    import scale

    rng = random.Random(3)
    return [scale.note(rng, n, False) for n in range(count)]


def mean_vector(model: local.E5SmallEmbedder, texts: list[str]) -> np.ndarray:
    batches = [model._encode([f"passage: {t}" for t in texts[i : i + 64]]) for i in range(0, len(texts), 64)]
    return np.concatenate(batches).mean(axis=0)


def main() -> None:
    model = local.E5SmallEmbedder(threads=2)  # mean_vector reads raw vectors: the centre is not applied there
    corpora = {"stdlib docstrings": docstrings(), "bench/scale.py notes": notes()}
    centre = np.mean([mean_vector(model, texts) for texts in corpora.values()], axis=0)
    local.E5_CENTRE.write_text(json.dumps({
        "model_sha256": local.E5_SHA256,
        "made_by": "tools/embedder_centre.py",
        "texts": {name: len(texts) for name, texts in corpora.items()},
        "vector": [round(float(x), 6) for x in centre],
    }, indent=1) + "\n")
    print(f"wrote {local.E5_CENTRE} (norm {np.linalg.norm(centre):.3f}) from "
          + ", ".join(f"{len(t)} {name}" for name, t in corpora.items()))


if __name__ == "__main__":
    main()
