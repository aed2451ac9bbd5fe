"""Any OpenAI-compatible chat endpoint (Ollama, llama.cpp server, vLLM, OpenAI) over plain HTTP."""

import json
from collections.abc import Iterator, Sequence

import httpx

from ...domain.errors import LanguageModelUnavailable
from ...ports.llm import Message


class OpenAICompatibleModel:
    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 30.0,
                 client: httpx.Client | None = None) -> None:
        self.model_id = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(headers=headers, timeout=timeout)

    def complete(self, messages: Sequence[Message], max_tokens: int = 512) -> str:
        try:
            response = self._client.post(self._url, json=self._body(messages, max_tokens, stream=False))
            response.raise_for_status()
            return str(response.json()["choices"][0]["message"]["content"])
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise LanguageModelUnavailable(f"The language model at {self._url} failed: {exc}") from exc

    def stream(self, messages: Sequence[Message], max_tokens: int = 512) -> Iterator[str]:
        try:
            with self._client.stream("POST", self._url, json=self._body(messages, max_tokens, stream=True)) as response:
                response.raise_for_status()
                for line in response.iter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line.removeprefix("data:").strip()
                    if data == "[DONE]":
                        return
                    piece = json.loads(data)["choices"][0].get("delta", {}).get("content")
                    if piece:
                        yield piece
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise LanguageModelUnavailable(f"The language model at {self._url} failed: {exc}") from exc

    def _body(self, messages: Sequence[Message], max_tokens: int, stream: bool) -> dict:
        return {"model": self.model_id, "messages": list(messages), "max_tokens": max_tokens, "stream": stream}
