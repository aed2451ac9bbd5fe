"""A SageMaker endpoint serving a cross-encoder (bge-reranker-base, ms-marco-MiniLM) with Hugging Face's
text-embeddings-inference container, with an injected sagemaker-runtime client."""

import json
from collections.abc import Sequence
from typing import Any


class SageMakerReranker:
    def __init__(self, client: Any, endpoint: str, model: str = "bge-reranker-base") -> None:
        self.client = client
        self.endpoint = endpoint
        self.model_id = f"sagemaker:{model}"

    def rerank(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevance per passage (TEI's /rerank answers [{index, score}], best first)."""
        if not passages:
            return []
        response = self.client.invoke_endpoint(
            EndpointName=self.endpoint, ContentType="application/json", Accept="application/json",
            Body=json.dumps({"query": query, "texts": list(passages), "truncate": True}))
        scores = [0.0] * len(passages)
        for result in json.loads(response["Body"].read()):
            scores[int(result["index"])] = float(result["score"])
        return scores
