"""A small real HTTP server speaking the OpenAI chat-completions protocol, for adapter and end-to-end tests."""

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    """Answers with `reply` (a text, or a function of the request body giving one), or misbehaves as told:
    mode 'ok', 'http500', 'garbage' or 'slow'."""

    def __init__(self, reply: "str | Callable[[dict], str]" = "Pricing floor is $6k.") -> None:
        self.reply = reply
        self.mode = "ok"
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                if fake.mode == "http500":
                    self.send_response(500)
                    self.end_headers()
                    return
                if fake.mode == "slow":
                    time.sleep(2)
                reply = fake.reply(body) if callable(fake.reply) else fake.reply
                self.send_response(200)
                if body.get("stream"):
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for word in reply.split(" "):
                        chunk = {"choices": [{"delta": {"content": word + " "}}]}
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                payload = b"{not json" if fake.mode == "garbage" else json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": reply}}]}).encode()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
