"""Amazon Titan Text Embeddings v2 on Bedrock, with an injected bedrock-runtime client."""

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...domain.errors import SemanticUnavailable
from ...ports.embedder import QueryAsPassage

TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_DIMENSIONS = (256, 512, 1024)  # Titan v2 offers only these: there is no 384


class BedrockTitanEmbedder(QueryAsPassage):
    """One InvokeModel call per text (Titan has no batch call); vectors normalised by the model and again here."""

    def __init__(self, client: Any, model: str = TITAN_V2, dimension: int = 1024) -> None:
        if dimension not in TITAN_DIMENSIONS:
            raise ValueError(f"Titan v2 embeds in {', '.join(map(str, TITAN_DIMENSIONS))} dimensions, not {dimension}")
        self.client = client
        self.model = model
        self.dimension = dimension
        self.model_id = f"bedrock:{model}:{dimension}"  # a different dimension is a different index

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            body = json.dumps({"inputText": text, "dimensions": self.dimension, "normalize": True})
            try:
                response = self.client.invoke_model(modelId=self.model, body=body, accept="application/json",
                                                     contentType="application/json")
                vector = np.asarray(json.loads(response["body"].read())["embedding"], dtype=np.float32)
            except Exception as exc:  # botocore errors, throttling, a malformed answer: all one failure
                raise SemanticUnavailable(f"Bedrock {self.model} failed: {exc}") from exc
            if vector.shape != (self.dimension,):
                raise SemanticUnavailable(f"Bedrock {self.model} returned {vector.shape[0]} dimensions, "
                                          f"not {self.dimension}")
            out[row] = _unit(vector)
        return out


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector
