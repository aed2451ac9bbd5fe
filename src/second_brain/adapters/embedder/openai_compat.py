"""An embedding model you run yourself behind an OpenAI-compatible `/v1/embeddings` endpoint (Ollama, llama.cpp
server, vLLM, text-embeddings-inference, Infinity, LM Studio, OpenAI itself), over plain HTTP.

Request `POST {base_url}/embeddings {"model": ..., "input": [texts]}`; answer `{"data": [{"index": i,
"embedding": [floats]}, ...]}` (rows are put back in `index` order). Vectors are normalised here, so an endpoint
that does not normalise ranks alike. Models trained with instructions ("query: " / "passage: " for e5,
"search_query: " / "search_document: " for nomic-embed-text) get them from the settings; they are part of the
model's id, so changing them re-embeds the brain as a change of model does."""

import hashlib
from collections.abc import Sequence

import httpx
import numpy as np

from ...domain.errors import SemanticUnavailable

BATCH = 32  # texts per request: what every server named above accepts by default


class OpenAICompatibleEmbedder:
    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 query_prefix: str = "", passage_prefix: str = "", query_floor: float = 0.3,
                 client: httpx.Client | None = None) -> None:
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._query_prefix, self._passage_prefix = query_prefix, passage_prefix
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(headers=headers, timeout=timeout)
        self.query_floor = query_floor
        self.dimension = len(self._embed(["dimension probe"])[0])  # asked once: the index is made for it
        said = hashlib.sha256(f"{query_prefix}\0{passage_prefix}".encode()).hexdigest()[:8]
        self.model_id = f"openai:{model}:{self.dimension}:{said}"

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        rows = [self._embed([self._passage_prefix + t for t in texts[start : start + BATCH]])
                for start in range(0, len(texts), BATCH)]
        return np.vstack(rows) if rows else np.zeros((0, self.dimension), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([self._query_prefix + text])[0]

    def _embed(self, texts: list[str]) -> np.ndarray:
        try:
            response = self._client.post(self._url, json={"model": self._model, "input": texts})
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda row: int(row["index"]))
            vectors = np.asarray([row["embedding"] for row in data], dtype=np.float32)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            raise SemanticUnavailable(f"The embedding model at {self._url} failed: {exc}") from exc
        expected = getattr(self, "dimension", None)  # unknown until the first answer
        if vectors.ndim != 2 or len(vectors) != len(texts) or expected not in (None, vectors.shape[1]):
            raise SemanticUnavailable(f"The embedding model at {self._url} answered vectors of shape {vectors.shape} "
                                      f"for {len(texts)} texts (expected {expected or 'any'} dimensions)")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)
