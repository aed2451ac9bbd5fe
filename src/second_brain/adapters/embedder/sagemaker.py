"""A SageMaker endpoint serving a sentence-embedding model with Hugging Face's text-embeddings-inference
container (bge-small-en-v1.5 or all-MiniLM-L6-v2), with an injected sagemaker-runtime client."""

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...domain.errors import SemanticUnavailable
from ...ports.embedder import QueryAsPassage

BATCH = 32  # texts per request: TEI's default max client batch size


class SageMakerEmbedder(QueryAsPassage):
    def __init__(self, client: Any, endpoint: str, dimension: int = 384, model: str = "bge-small-en-v1.5") -> None:
        self.client = client
        self.endpoint = endpoint
        self.dimension = dimension
        self.model_id = f"sagemaker:{model}:{dimension}"

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), BATCH):
            chunk = list(texts[start : start + BATCH])
            try:
                response = self.client.invoke_endpoint(
                    EndpointName=self.endpoint, ContentType="application/json", Accept="application/json",
                    Body=json.dumps({"inputs": chunk, "normalize": True, "truncate": True}))
                vectors = np.asarray(json.loads(response["Body"].read()), dtype=np.float32)
            except Exception as exc:  # botocore errors, a model error, a malformed answer: all one failure
                raise SemanticUnavailable(f"SageMaker endpoint {self.endpoint} failed: {exc}") from exc
            if vectors.shape != (len(chunk), self.dimension):
                raise SemanticUnavailable(f"SageMaker endpoint {self.endpoint} returned shape {vectors.shape}, "
                                          f"expected ({len(chunk)}, {self.dimension})")
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            rows.append(vectors / np.where(norms == 0, 1, norms))
        return np.vstack(rows) if rows else np.zeros((0, self.dimension), dtype=np.float32)
