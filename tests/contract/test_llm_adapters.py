"""Language-model adapters against real peers: an HTTP server speaking OpenAI's protocol, and Bedrock's Stubber."""

import boto3
import pytest
from botocore.stub import Stubber

from second_brain.adapters.llm.bedrock import BedrockConverseModel
from second_brain.adapters.llm.none import NoLanguageModel
from second_brain.adapters.llm.openai_compat import OpenAICompatibleModel
from second_brain.domain.errors import LanguageModelUnavailable
from tests.support.openai_server import FakeOpenAI

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is the pricing floor?"}]


@pytest.fixture
def endpoint():
    server = FakeOpenAI()
    yield server
    server.close()


def test_openai_compatible_completion_and_stream(endpoint):
    model = OpenAICompatibleModel(endpoint.url, "llama3.2", api_key="k-123", timeout=5)
    assert model.complete(MESSAGES, max_tokens=50) == "Pricing floor is $6k."
    assert "".join(model.stream(MESSAGES)).strip() == "Pricing floor is $6k."
    first = endpoint.requests[0]
    assert (first["path"], first["auth"], first["model"], first["max_tokens"], first["stream"]) == (
        "/v1/chat/completions", "Bearer k-123", "llama3.2", 50, False)
    assert first["messages"] == MESSAGES


@pytest.mark.parametrize("mode", ["http500", "garbage", "slow"])
def test_openai_compatible_failures_are_one_error(endpoint, mode):
    endpoint.mode = mode
    model = OpenAICompatibleModel(endpoint.url, "m", timeout=0.5)
    with pytest.raises(LanguageModelUnavailable):
        model.complete(MESSAGES)
    if mode != "garbage":
        with pytest.raises(LanguageModelUnavailable):
            list(model.stream(MESSAGES))


def test_an_unreachable_endpoint_is_the_same_error():
    with pytest.raises(LanguageModelUnavailable):
        OpenAICompatibleModel("http://127.0.0.1:9/v1", "m", timeout=0.5).complete(MESSAGES)


def test_no_model_says_how_to_configure_one():
    with pytest.raises(LanguageModelUnavailable, match="BRAIN_LLM"):
        NoLanguageModel().complete(MESSAGES)


def bedrock():
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x")
    return client, Stubber(client)


def test_bedrock_converse_request_and_answer():
    client, stub = bedrock()
    stub.add_response(
        "converse",
        {"output": {"message": {"role": "assistant", "content": [{"text": "Pricing floor is $6k."}]}},
         "stopReason": "end_turn", "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
         "metrics": {"latencyMs": 100}},
        {"modelId": "anthropic.claude-3-haiku-20240307-v1:0",
         "messages": [{"role": "user", "content": [{"text": "What is the pricing floor?"}]}],
         "system": [{"text": "Be brief."}], "inferenceConfig": {"maxTokens": 64}},
    )
    with stub:
        model = BedrockConverseModel(client, "anthropic.claude-3-haiku-20240307-v1:0")
        assert model.complete(MESSAGES, max_tokens=64) == "Pricing floor is $6k."
    stub.assert_no_pending_responses()


def test_bedrock_errors_are_one_error():
    client, stub = bedrock()
    stub.add_client_error("converse", service_error_code="ThrottlingException", http_status_code=429)
    with stub, pytest.raises(LanguageModelUnavailable, match="ThrottlingException"):
        BedrockConverseModel(client, "m").complete(MESSAGES)


def test_bedrock_stream_reads_content_deltas():
    class StreamingClient:  # Stubber cannot build an event stream; the event shapes are Bedrock's own
        def converse_stream(self, **request):
            self.request = request
            return {"stream": [{"messageStart": {"role": "assistant"}},
                               {"contentBlockDelta": {"delta": {"text": "Pricing "}, "contentBlockIndex": 0}},
                               {"contentBlockDelta": {"delta": {"text": "floor."}, "contentBlockIndex": 0}},
                               {"messageStop": {"stopReason": "end_turn"}}]}

    client = StreamingClient()
    assert "".join(BedrockConverseModel(client, "m").stream(MESSAGES)) == "Pricing floor."
    assert client.request["system"] == [{"text": "Be brief."}]
