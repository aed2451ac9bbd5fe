"""Bedrock Rerank (Cohere Rerank 3.5) through bedrock-agent-runtime, with an injected client."""

from collections.abc import Sequence
from typing import Any

COHERE_RERANK = "cohere.rerank-v3-5:0"  # amazon.rerank-v1:0 is not offered in us-east-1


class BedrockReranker:
    def __init__(self, client: Any, region: str, model: str = COHERE_RERANK) -> None:
        self.client = client
        self.model_arn = f"arn:aws:bedrock:{region}::foundation-model/{model}"
        self.model_id = f"bedrock:{model}"

    def rerank(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevance per passage; errors propagate, and the recall pipeline keeps its own order."""
        if not passages:
            return []
        response = self.client.rerank(
            queries=[{"type": "TEXT", "textQuery": {"text": query}}],
            sources=[{"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": p}}}
                     for p in passages],
            rerankingConfiguration={"type": "BEDROCK_RERANKING_MODEL", "bedrockRerankingConfiguration": {
                "numberOfResults": len(passages), "modelConfiguration": {"modelArn": self.model_arn}}},
        )
        scores = [0.0] * len(passages)
        for result in response["results"]:
            scores[result["index"]] = float(result["relevanceScore"])
        return scores
