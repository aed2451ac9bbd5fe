"""An embedder whose model loads on a thread, so a server answers before the model is in memory."""

import logging
import threading
from collections.abc import Callable, Sequence

import numpy as np

from ...domain.errors import SemanticUnavailable
from ...ports.embedder import Embedder

log = logging.getLogger("second_brain.embedder")


class BackgroundEmbedder:
    """Stands for the embedder `load` makes, which it starts making on a thread at once. Until it is made,
    `ready` is False: recall answers from keywords alone (and says `semantic_unavailable`); whatever must have
    vectors (a capture's duplicate check, indexing) waits for it. What the model is (id, dimension, query floor)
    is known before it loads: the vector index is opened with it."""

    def __init__(self, load: Callable[[], Embedder], model_id: str, dimension: int, query_floor: float) -> None:
        self.model_id = model_id
        self.dimension = dimension
        self.query_floor = query_floor
        self._load = load
        self._model: Embedder | None = None
        self._done = threading.Event()
        threading.Thread(target=self._run, name="embedder-load", daemon=True).start()

    @property
    def ready(self) -> bool:
        return self._model is not None

    @property
    def loading(self) -> bool:
        """Still loading (False once loaded, and once the load failed: then it will never be ready)."""
        return not self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Whether the model loaded (waiting at most `timeout` seconds for it)."""
        return self._done.wait(timeout) and self._model is not None

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return self._loaded().embed_batch(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._loaded().embed_query(text)

    def _loaded(self) -> Embedder:
        self._done.wait()
        if self._model is None:
            raise SemanticUnavailable("The embedding model failed to load: see the server log")
        return self._model

    def _run(self) -> None:
        try:
            model = self._load()
            if (model.model_id, model.dimension) != (self.model_id, self.dimension):
                raise RuntimeError(f"loaded {model.model_id} ({model.dimension}), expected {self.model_id} "
                                   f"({self.dimension})")
            self._model = model
        except Exception:  # the brain serves on, by keywords; what needs vectors is told it cannot have them
            log.exception("semantic search is unavailable: the embedding model failed to load")
        finally:
            self._done.set()
