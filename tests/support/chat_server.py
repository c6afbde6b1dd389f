"""A local OpenAI-compatible chat-completions server for tests (stdlib only, 127.0.0.1).

It answers ``POST /v1/chat/completions`` (and ``/chat/completions``) well enough for the real
``openai`` SDK. The answer text is scripted (default: a fixed sentence citing ``[1]``), every
request is recorded (body and headers) so tests can inspect the prompt that was sent, and
failures are scripted per request with :meth:`ChatServer.script` (status code, body,
``Retry-After``).

Example::

    with ChatServer() as server:
        server.script(Reply(status=429))
        ...  # the SDK, pointed at server.base_url, gets a 429 first
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["ChatServer", "Recorded", "Reply"]

DEFAULT_ANSWER = "Set `batch_size` in the [agent] table [1]."


@dataclass
class Reply:
    """What the server does with one request.

    Attributes:
        status: HTTP status; non-200 answers carry an OpenAI-style error body.
        answer: The assistant message for a 200 answer.
        message: The error message of a non-200 answer; ``{key}`` is replaced by the bearer
            token the client sent (to imitate a server that echoes the key).
        retry_after: ``Retry-After`` header value, if any.
        malformed: Answer 200 with a body that is not JSON.
        no_choices: Answer 200 with an empty ``choices`` list.
    """

    status: int = 200
    answer: str = DEFAULT_ANSWER
    message: str = "scripted failure"
    retry_after: str | None = "0"
    malformed: bool = False
    no_choices: bool = False


@dataclass
class Recorded:
    """One request the server received (header names lower-cased)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any] = field(default_factory=dict)


class ChatServer:
    """A threaded chat-completions server on 127.0.0.1 with an ephemeral port."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.default = Reply()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                headers = {k.lower(): v for k, v in self.headers.items()}
                server._record(Recorded(self.path, headers, body))
                reply = server._next()
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, None)
                    return
                if reply.status != 200:
                    token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                    error = {
                        "error": {
                            "message": reply.message.replace("{key}", token),
                            "type": "server_error" if reply.status >= 500 else "invalid_request",
                            "code": None,
                        }
                    }
                    self._send(reply.status, error, reply.retry_after)
                    return
                if reply.malformed:
                    self._raw(200, b"{not json", None)
                    return
                choices = (
                    []
                    if reply.no_choices
                    else [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply.answer},
                            "finish_reason": "stop",
                        }
                    ]
                )
                self._send(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "unknown"),
                        "choices": choices,
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    },
                    None,
                )

            def _send(self, status: int, doc: dict[str, Any], retry_after: str | None) -> None:
                self._raw(status, json.dumps(doc).encode(), retry_after)

            def _raw(self, status: int, data: bytes, retry_after: str | None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        # A short poll interval makes shutdown() return quickly at the end of each test.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The ``/v1`` base URL to give the SDK."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests (later requests get :attr:`default`)."""
        with self._lock:
            self._script.extend(replies)

    def _next(self) -> Reply:
        with self._lock:
            return self._script.popleft() if self._script else self.default

    def _record(self, item: Recorded) -> None:
        with self._lock:
            self.requests.append(item)

    def start(self) -> ChatServer:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
