"""POST /chat over HTTP: streamed from a real OpenAI-compatible endpoint, and refused cleanly without one."""

import json

from tests.support.openai_server import FakeOpenAI

from .conftest import Server


def test_chat_streams_the_models_answer(tmp_path):
    endpoint = FakeOpenAI("The floor is six thousand.")
    server = Server(tmp_path / "brain", env={"BRAIN_LLM": "openai", "BRAIN_LLM_BASE_URL": endpoint.url,
                                             "BRAIN_LLM_MODEL": "tiny"}).start()
    try:
        with server.client() as api:
            with api.stream("POST", "/chat", json={"query": "What is the floor?",
                                                   "memories": "Pricing floor is $6k."}) as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                events = [line.removeprefix("data: ") for line in response.iter_lines() if line.startswith("data: ")]
            assert events[-1] == "[DONE]"
            assert "".join(json.loads(e)["response"] for e in events[:-1]).strip() == "The floor is six thousand."
            sent = endpoint.requests[0]
            assert sent["model"] == "tiny" and "Pricing floor is $6k." in sent["messages"][1]["content"]

            endpoint.mode = "http500"
            with api.stream("POST", "/chat", json={"query": "again?"}) as response:
                lines = list(response.iter_lines())
            lines = [line for line in lines if line]
            assert lines[0] == "event: error" and "failed" in json.loads(lines[1].removeprefix("data: "))["error"]
            assert lines[-1] == "data: [DONE]"
            assert api.post("/chat", json={"memories": "x"}).status_code == 400
    finally:
        server.stop()
        endpoint.close()


def test_chat_without_a_model_is_a_clear_503(api):
    response = api.post("/chat", json={"query": "hello"})
    assert response.status_code == 503
    assert response.json()["ok"] is False and "BRAIN_LLM" in response.json()["error"]


def test_recall_carries_the_models_insight_and_goes_on_without_it(tmp_path):
    endpoint = FakeOpenAI("Both notes say the floor is $6k; finance approved it.")
    server = Server(tmp_path / "brain", env={"BRAIN_LLM": "openai", "BRAIN_LLM_BASE_URL": endpoint.url,
                                             "BRAIN_LLM_MODEL": "tiny", "BRAIN_LLM_TIMEOUT": "1"}).start()
    try:
        with server.client() as api:
            api.post("/capture", json={"content": "Pricing floor is $6k for enterprise deals"})
            api.post("/capture", json={"content": "Finance approved the enterprise pricing floor in May"})
            recalled = api.get("/recall", params={"query": "enterprise pricing floor"}).json()
            assert len(recalled["results"]) == 2
            assert recalled["insight"] == "Both notes say the floor is $6k; finance approved it."
            # (the model also classifies each capture in the background: pick the insight's request)
            [asked] = [r["messages"][-1]["content"] for r in endpoint.requests
                       if r["messages"][-1]["content"].startswith("Question:")]
            assert "Question: enterprise pricing floor" in asked and "Finance approved" in asked
            one = api.get("/recall", params={"query": "May", "topK": 1}).json()
            assert one["insight"] is None  # one memory needs no synthesis
            endpoint.mode = "http500"
            failed = api.get("/recall", params={"query": "enterprise pricing floor"}).json()
            assert failed["insight"] is None and len(failed["results"]) == 2
    finally:
        server.stop()
        endpoint.close()
