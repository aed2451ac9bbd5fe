"""A cross-encoder you run yourself behind a `/rerank` endpoint of the common shape, over plain HTTP.

Two request shapes, chosen by `style`:
- `cohere` (Cohere, Jina, Infinity, vLLM, llama.cpp server): `POST {url} {"model": ..., "query": ...,
  "documents": [...], "top_n": n}`;
- `tei` (Hugging Face text-embeddings-inference): `POST {url} {"query": ..., "texts": [...]}`.
Either answer is read: `{"results": [{"index": i, "relevance_score": s}]}` or `[{"index": i, "score": s}]`."""

from collections.abc import Sequence
from typing import Any

import httpx

from ...domain.errors import SemanticUnavailable


class HttpReranker:
    def __init__(self, url: str, model: str = "", style: str = "cohere", api_key: str | None = None,
                 timeout: float = 10.0, client: httpx.Client | None = None) -> None:
        self._url = url
        self._model = model
        self._style = style
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(headers=headers, timeout=timeout)
        self.model_id = f"http:{model or url}"

    def rerank(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        body: dict[str, Any] = ({"query": query, "texts": list(passages), "truncate": True} if self._style == "tei"
                                else {"model": self._model, "query": query, "documents": list(passages),
                                      "top_n": len(passages)})
        try:
            response = self._client.post(self._url, json=body)
            response.raise_for_status()
            answer = response.json()
            rows = answer["results"] if isinstance(answer, dict) else answer
            scores: list[float | None] = [None] * len(passages)
            for row in rows:
                scores[int(row["index"])] = float(row["relevance_score"] if "relevance_score" in row else row["score"])
        except (httpx.HTTPError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise SemanticUnavailable(f"The reranker at {self._url} failed: {exc}") from exc
        if any(score is None for score in scores):
            raise SemanticUnavailable(f"The reranker at {self._url} scored {sum(s is not None for s in scores)} of "
                                      f"{len(passages)} passages")
        return [float(score) for score in scores if score is not None]
