"""The Chat view in a real browser: the question is recalled, the memories found are shown and sent as the grounding,
and the scripted model's answer streams in (POST /chat's server-sent events); a model failing mid-answer and a brain
with no model at all are both said plainly, the memories found staying useful."""

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.support.openai_server import FakeOpenAI

from .browser import TOKEN_KEY, Dashboard, new_context
from .conftest import Server

ANSWER = "The pricing floor is six thousand, and finance approved it in May."


@pytest.fixture
def model_board(browser: Browser, tmp_path) -> Iterator[tuple[Dashboard, FakeOpenAI]]:
    """A signed-in tab on a brain whose language model is the scripted OpenAI-compatible server."""
    endpoint = FakeOpenAI(lambda body: ANSWER if body.get("stream") else "An insight.")
    server = Server(tmp_path / "brain", env={"BRAIN_LLM": "openai", "BRAIN_LLM_BASE_URL": endpoint.url,
                                             "BRAIN_LLM_MODEL": "tiny"}).start()
    context = new_context(browser)
    board = Dashboard(context.new_page(), server)
    board.page.set_default_timeout(10_000)
    board.page.goto(server.url + "/#/chat")
    board.page.evaluate(f"localStorage.setItem('{TOKEN_KEY}', '{server.token}')")
    board.page.reload()  # signed in, straight onto the view
    try:
        yield board, endpoint
        assert not board.errors, board.errors
    finally:
        context.close()
        server.stop()
        endpoint.close()


def seed(server: Server) -> list[str]:
    with server.client() as api:
        return [api.post("/capture", json={"content": content, "tags": ["pricing"]}).json()["id"] for content in (
            "Pricing floor is $6k for enterprise deals", "Finance approved the enterprise pricing floor in May")]


def test_the_answer_streams_from_the_memories_recall_found(model_board):
    board, endpoint = model_board
    ids = seed(board.server)
    page = board.page
    expect(page.locator("#chat-query")).to_be_visible()
    # Record every state the answer passes through: a streamed answer is written piece by piece.
    page.evaluate("""() => { window.seen = []; new MutationObserver(() => {
        const text = document.querySelector('#chat-answer .chat-text');
        if (text && text.textContent && window.seen.at(-1) !== text.textContent) window.seen.push(text.textContent);
      }).observe(document.getElementById('main'), {subtree: true, childList: true, characterData: true}); }""")
    page.fill("#chat-query", "What is the enterprise pricing floor?")
    page.get_by_role("button", name="Ask").click()
    answer = page.locator("#chat-answer")
    expect(answer).to_have_attribute("data-done", "true")
    expect(answer.locator(".chat-text")).to_have_text(ANSWER)
    expect(answer).to_have_attribute("aria-busy", "false")
    assert len(page.evaluate("window.seen")) > 1  # shown as it came, not all at the end
    used = page.locator("#chat-memories")
    for memory in ids:
        expect(used.locator(f'a[href="#/entry?id={memory}"]').first).to_be_visible()
    # The model was asked the question with the recalled memories as its grounding.
    asked = [r["messages"][-1]["content"] for r in endpoint.requests if r.get("stream")]
    assert len(asked) == 1 and all("Question: What is the enterprise pricing floor?" in a
                                   and "Pricing floor is $6k for enterprise deals" in a and "Finance approved" in a
                                   for a in asked), asked
    assert page.url.endswith("#/chat?q=What+is+the+enterprise+pricing+floor%3F")

    board.accessible_light_and_dark()
    page.emulate_media(color_scheme="light")
    board.screenshot("chat")
    board.accessible_at_phone_width()

    # The model failing once the stream has started: its sentence, in-band, shown as an error.
    endpoint.mode = "http500"
    page.fill("#chat-query", "And the discount policy?")
    page.keyboard.press("Enter")
    expect(page.locator("#chat-answer[data-done=true] [role=alert]")).to_contain_text("failed")


def test_without_a_model_the_api_sentence_is_shown_and_the_memories_stay(dashboard):
    ids = seed(dashboard.server)
    page = dashboard.open("chat?q=enterprise pricing floor")
    unavailable = page.locator("#chat-answer .chat-unavailable")
    # A person's sentence first; the settings to change only under "Details for whoever runs it" (issue 45).
    expect(unavailable.locator("p").first).to_have_text(re.compile(r"^Chat needs a language model, and none is "
                                                                   r"connected to this brain\."))
    expect(unavailable.locator("p").first).not_to_contain_text("BRAIN_")
    unavailable.get_by_text("Details for whoever runs it").click()
    expect(unavailable.locator("details p")).to_have_text("No language model is configured: set BRAIN_LLM=openai and "
                                                          "BRAIN_LLM_BASE_URL (Ollama, llama.cpp, vLLM...)")
    used = page.locator("#chat-memories")
    expect(used.locator("article.item")).to_have_count(2)
    for memory in ids:
        expect(used.locator(f'a[href="#/entry?id={memory}"]').first).to_be_visible()
    expect(used.get_by_role("link", name="See these in Recall, with scores")).to_be_visible()
    dashboard.accessible_light_and_dark()


def test_without_a_model_chat_says_so_before_anyone_asks(dashboard, model_board):
    """Issue 64 item 9: Chat said it needs a model only after a question was asked."""
    page = dashboard.open("chat")
    expect(page.locator("#chat-no-model")).to_be_visible()
    expect(page.locator("#chat-no-model")).to_contain_text("No language model is set up on this brain")
    board, _ = model_board
    with_model = board.open("chat")  # a brain with a model says nothing of the kind
    expect(with_model.locator("#chat-query")).to_be_visible()
    with_model.wait_for_timeout(300)  # past the one read that decides it
    expect(with_model.locator("#chat-no-model")).to_be_hidden()
