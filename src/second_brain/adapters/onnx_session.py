"""One way to open an ONNX model on the CPU, shared by the local embedder and the reranker."""

from pathlib import Path
from typing import Any


def cpu_session(model: Path | bytes, threads: int = 0) -> Any:
    """An onnxruntime session on the CPU, from a file or the model's bytes; `threads` 0 lets onnxruntime use every
    core."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    # Idle threads spinning for the next call would steal the cores the rest of the request needs.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    source = model if isinstance(model, bytes) else str(model)
    return onnxruntime.InferenceSession(source, options, providers=["CPUExecutionProvider"])
