"""Bedrock Converse, with an injected bedrock-runtime client."""

from collections.abc import Iterator, Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ...domain.errors import LanguageModelUnavailable
from ...ports.llm import Message


class BedrockConverseModel:
    def __init__(self, client: Any, model_id: str) -> None:
        self.client = client
        self.model_id = model_id

    def complete(self, messages: Sequence[Message], max_tokens: int = 512) -> str:
        try:
            response = self.client.converse(**self._request(messages, max_tokens))
            blocks = response["output"]["message"]["content"]
            return "".join(block.get("text", "") for block in blocks)
        except (ClientError, BotoCoreError, KeyError, TypeError) as exc:
            raise LanguageModelUnavailable(f"Bedrock {self.model_id} failed: {exc}") from exc

    def stream(self, messages: Sequence[Message], max_tokens: int = 512) -> Iterator[str]:
        try:
            response = self.client.converse_stream(**self._request(messages, max_tokens))
            for event in response["stream"]:
                piece = event.get("contentBlockDelta", {}).get("delta", {}).get("text")
                if piece:
                    yield piece
        except (ClientError, BotoCoreError, KeyError, TypeError) as exc:
            raise LanguageModelUnavailable(f"Bedrock {self.model_id} failed: {exc}") from exc

    def _request(self, messages: Sequence[Message], max_tokens: int) -> dict[str, Any]:
        system = [{"text": m["content"]} for m in messages if m["role"] == "system"]
        turns = [{"role": m["role"], "content": [{"text": m["content"]}]} for m in messages if m["role"] != "system"]
        request: dict[str, Any] = {"modelId": self.model_id, "messages": turns,
                                   "inferenceConfig": {"maxTokens": max_tokens}}
        if system:
            request["system"] = system
        return request
