"""A stand-in for the model servers people run (Ollama, llama.cpp, vLLM, text-embeddings-inference, Infinity): a
real HTTP server on loopback answering the documented request shapes of `/v1/embeddings` and `/rerank`, with
deterministic answers, recording what it was sent."""

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WORD = re.compile(r"\w+")
DIMENSION = 48


def vector(text: str, model: str) -> list[float]:
    """Hashed words (the model's name salts the hash: another model, other vectors), not normalised."""
    out = [0.0] * DIMENSION
    for word in WORD.findall(text.lower()):
        slot = int.from_bytes(hashlib.blake2b(f"{model}\0{word}".encode(), digest_size=4).digest(), "little")
        out[slot % DIMENSION] += 3.0
    if not any(out):
        out[0] = 1.0
    return out


def overlap(query: str, passage: str) -> float:
    return float(len(set(WORD.findall(query.lower())) & set(WORD.findall(passage.lower()))))


class ModelServer:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.fail = False  # answer 500 to everything
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.requests.append((self.path, body))
                status, answer = server.answer(self.path, body, self.headers.get("Authorization"))
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    def answer(self, path: str, body: dict[str, Any], auth: str | None) -> tuple[int, Any]:
        if self.fail:
            return 500, {"error": "model crashed"}
        if path == "/v1/embeddings":
            texts = body.get("input")
            if not isinstance(body.get("model"), str) or not isinstance(texts, list) or not texts:
                return 422, {"error": "expected {model, input: [texts]}"}
            rows = [{"object": "embedding", "index": i, "embedding": vector(t, body["model"])}
                    for i, t in enumerate(texts)]
            return 200, {"object": "list", "model": body["model"], "data": rows[::-1]}  # any order: index says
        if path == "/rerank" and "documents" in body:  # Cohere's shape (Jina, Infinity, vLLM, llama.cpp)
            scored = [{"index": i, "relevance_score": overlap(body["query"], doc)}
                      for i, doc in enumerate(body["documents"])]
            return 200, {"results": sorted(scored, key=lambda r: -r["relevance_score"])[: body.get("top_n")]}
        if path == "/rerank" and "texts" in body:  # text-embeddings-inference's
            scored = [{"index": i, "score": overlap(body["query"], t)} for i, t in enumerate(body["texts"])]
            return 200, sorted(scored, key=lambda r: -r["score"])
        return 404, {"error": f"no route {path}"}

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()
