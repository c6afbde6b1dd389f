"""A local OpenAI-compatible embeddings server for tests and benchmarks.

It speaks just enough of ``POST /v1/embeddings`` for the real ``openai`` SDK to talk to it: the
vectors are deterministic functions of the input text (seeded by ``xxh64`` of its UTF-8 bytes),
``dimensions`` shortens them the way ``text-embedding-3-*`` does (truncate, the client
renormalises), and every request is recorded so tests can count requests and inputs.

Faults are scripted per request: :meth:`FakeOpenAIServer.script` queues :class:`Behaviour`
objects, and each incoming request pops the next one (requests beyond the script behave normally,
with the server-wide ``latency`` and ``shuffle`` settings). The server binds to 127.0.0.1 only.

Example::

    with FakeOpenAIServer() as server:
        server.script(Behaviour(status=429, retry_after="0.2"))
        client = openai.OpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0)
"""

from __future__ import annotations

import json
import random
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import numpy as np
import xxhash

__all__ = ["Behaviour", "FakeOpenAIServer", "RecordedRequest", "fake_vector"]


def fake_vector(text: str, dimensions: int, native: int = 1536) -> np.ndarray:
    """The server's raw (unnormalised) vector for ``text``, shortened to ``dimensions``.

    Tests use it as the oracle: the embedder's output must equal this, L2-normalised.
    """
    seed = xxhash.xxh64_intdigest(text.encode("utf-8"))
    full = np.random.default_rng(seed).standard_normal(native)
    return full[:dimensions]


def _drop_last(array_json: str) -> str:
    """Remove the last element of a JSON array of numbers (``[a, b, c]`` -> ``[a, b]``)."""
    return array_json[: array_json.rindex(",")] + "]"


@dataclass
class Behaviour:
    """What the server does with one request.

    Attributes:
        status: HTTP status to answer with; non-200 answers carry an OpenAI-style error body.
        retry_after: Value of the ``Retry-After`` header (seconds or an HTTP date), if any.
        sleep: Seconds to wait before answering (to provoke a client timeout, or add latency).
        malformed: Answer 200 with a body that is not valid JSON.
        drop_item: Answer with one item fewer than requested.
        duplicate_index: Give the last item the index of the first.
        extra_dims: Add this many components to every vector (wrong dimensions).
        nan: Put a NaN into the first vector.
        shuffle: Return the items in a shuffled order (indices stay correct).
        message: Error message for non-200 answers; ``{key}`` is replaced by the bearer token
            the client sent, to imitate a server that echoes the key back.
    """

    status: int = 200
    retry_after: str | None = None
    sleep: float = 0.0
    malformed: bool = False
    drop_item: bool = False
    duplicate_index: bool = False
    extra_dims: int = 0
    nan: bool = False
    shuffle: bool = False
    message: str = "scripted failure"


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """Ignore clients that hang up mid-request (the timeout and cancellation tests do)."""


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    inputs: list[str]
    model: str
    dimensions: int | None
    encoding_format: str | None
    authorization: str
    behaviour: Behaviour


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    script: deque[Behaviour] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    in_flight: int = 0
    max_in_flight: int = 0


class FakeOpenAIServer:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint on ``127.0.0.1:<random port>``.

    Args:
        native_dimensions: Length of the full vectors (before ``dimensions`` shortening).
        latency: Seconds added to every request not scripted otherwise.
        shuffle: Return items in shuffled order for every request not scripted otherwise.
        expected_key: If set, requests without ``Authorization: Bearer <expected_key>`` get 401.
        on_request: Called (in the server's handler thread) with the 1-based request number as
            each request arrives, before it is answered; used to interrupt a run mid-way.
    """

    def __init__(
        self,
        *,
        native_dimensions: int = 1536,
        latency: float = 0.0,
        shuffle: bool = False,
        expected_key: str | None = None,
        on_request: Callable[[int], None] | None = None,
    ) -> None:
        self.native_dimensions = native_dimensions
        self.latency = latency
        self.shuffle = shuffle
        self.expected_key = expected_key
        self.on_request = on_request
        self._state = _State()
        self._fragments: dict[tuple[str, int], str] = {}
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The URL to pass as ``base_url`` to the SDK (ends in ``/v1``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeOpenAIServer:
        """Serve in a background thread."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake any sleeping handler and release the socket."""
        self._state.stop.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- scripting and inspection -----------------------------------------------------------

    def script(self, *behaviours: Behaviour) -> None:
        """Queue behaviours for the next requests, in arrival order."""
        with self._state.lock:
            self._state.script.extend(behaviours)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def request_count(self) -> int:
        """How many requests have arrived."""
        with self._state.lock:
            return len(self._state.requests)

    @property
    def input_count(self) -> int:
        """How many inputs (texts) all requests carried together."""
        with self._state.lock:
            return sum(len(r.inputs) for r in self._state.requests)

    @property
    def max_in_flight(self) -> int:
        """The largest number of requests that were being answered at the same time."""
        with self._state.lock:
            return self._state.max_in_flight

    def reset(self) -> None:
        """Forget recorded requests, the in-flight high-water mark and any unused script."""
        with self._state.lock:
            self._state.requests.clear()
            self._state.script.clear()
            self._state.max_in_flight = 0

    def _enter(self) -> None:
        with self._state.lock:
            self._state.in_flight += 1
            self._state.max_in_flight = max(self._state.max_in_flight, self._state.in_flight)

    def _leave(self) -> None:
        with self._state.lock:
            self._state.in_flight -= 1

    # -- request handling -------------------------------------------------------------------

    def _next(self, request: RecordedRequest) -> tuple[int, Behaviour]:
        with self._state.lock:
            behaviour = (
                self._state.script.popleft()
                if self._state.script
                else Behaviour(sleep=self.latency, shuffle=self.shuffle)
            )
            request.behaviour = behaviour
            self._state.requests.append(request)
            return len(self._state.requests), behaviour

    def _answer(self, payload: dict[str, Any], auth: str) -> tuple[int, dict[str, str], bytes]:
        raw_inputs = payload.get("input", [])
        inputs = [raw_inputs] if isinstance(raw_inputs, str) else list(raw_inputs)
        dims_raw = payload.get("dimensions")
        request = RecordedRequest(
            inputs=inputs,
            model=str(payload.get("model", "")),
            dimensions=dims_raw if isinstance(dims_raw, int) else None,
            encoding_format=payload.get("encoding_format"),
            authorization=auth,
            behaviour=Behaviour(),
        )
        number, behaviour = self._next(request)
        if self.on_request is not None:
            self.on_request(number)
        if behaviour.sleep:
            # An Event wait, not time.sleep, so that stop() releases sleeping handlers at once.
            self._state.stop.wait(behaviour.sleep)

        headers: dict[str, str] = {}
        key = auth.removeprefix("Bearer ")
        if self.expected_key is not None and key != self.expected_key and behaviour.status == 200:
            behaviour = Behaviour(status=401, message="Incorrect API key provided: {key}.")
        if behaviour.status != 200:
            if behaviour.retry_after is not None:
                headers["Retry-After"] = behaviour.retry_after
            error = {
                "error": {
                    "message": behaviour.message.replace("{key}", key),
                    "type": "invalid_request_error" if behaviour.status < 500 else "server_error",
                    "code": None,
                }
            }
            return behaviour.status, headers, json.dumps(error).encode()
        if behaviour.malformed:
            return 200, headers, b'{"object": "list", "data": [{"embedding": [0.1, '

        dims = request.dimensions or self.native_dimensions
        items: list[tuple[int, str]] = []
        for i, text in enumerate(inputs):
            encoded = self._vector_json(text, dims)
            if behaviour.extra_dims:
                encoded = encoded[:-1] + ", 0.5" * behaviour.extra_dims + "]"
            items.append((i, encoded))
        if behaviour.nan and items:
            # The non-standard ``NaN`` literal, as a misbehaving server would send it.
            items[0] = (0, _drop_last("[NaN, " + items[0][1][1:]))
        if behaviour.drop_item and items:
            items.pop()
        if behaviour.duplicate_index and len(items) > 1:
            items[-1] = (items[0][0], items[-1][1])
        if behaviour.shuffle:
            random.Random(number).shuffle(items)
        # Built by hand from cached fragments: json.dumps of every float would make this
        # in-process server, not the client under test, the bottleneck of the benchmark.
        data = ", ".join(
            f'{{"object": "embedding", "index": {i}, "embedding": {e}}}' for i, e in items
        )
        model = json.dumps(request.model)
        body = (
            f'{{"object": "list", "data": [{data}], "model": {model}, '
            '"usage": {"prompt_tokens": 0, "total_tokens": 0}}'
        )
        return 200, headers, body.encode()

    def _vector_json(self, text: str, dims: int) -> str:
        key = (text, dims)
        encoded = self._fragments.get(key)
        if encoded is None:
            encoded = json.dumps(fake_vector(text, dims, self.native_dimensions).tolist())
            if len(self._fragments) < 200_000:
                self._fragments[key] = encoded
        return encoded

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/embeddings":
                    self._send(404, {}, b'{"error": {"message": "not found"}}')
                    return
                try:
                    payload = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, {}, b'{"error": {"message": "request body is not JSON"}}')
                    return
                server._enter()
                try:
                    status, headers, body = server._answer(
                        payload, self.headers.get("Authorization", "")
                    )
                finally:
                    server._leave()
                self._send(status, headers, body)

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's naming
                # Counters for a server running in another process (the benchmark's).
                if not self.path.rstrip("/").endswith("/stats"):
                    self._send(404, {}, b'{"error": {"message": "not found"}}')
                    return
                stats = {
                    "requests": server.request_count,
                    "inputs": server.input_count,
                    "max_in_flight": server.max_in_flight,
                }
                self._send(200, {}, json.dumps(stats).encode())

            def do_PUT(self) -> None:  # noqa: N802 - the stdlib's naming
                # Change ``latency``/``shuffle`` of a server running in another process.
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.rstrip("/").endswith("/settings"):
                    self._send(404, {}, b'{"error": {"message": "not found"}}')
                    return
                settings = json.loads(raw or b"{}")
                server.latency = float(settings.get("latency", server.latency))
                server.shuffle = bool(settings.get("shuffle", server.shuffle))
                self._send(200, {}, b"{}")

            def do_DELETE(self) -> None:  # noqa: N802 - the stdlib's naming
                if not self.path.rstrip("/").endswith("/stats"):
                    self._send(404, {}, b'{"error": {"message": "not found"}}')
                    return
                server.reset()
                self._send(200, {}, b"{}")

            def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    # The client gave up (timeout test); nothing to answer to.
                    self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                """Stay quiet: test output is for the tests."""

        return Handler


def main() -> None:
    """Serve in the foreground until stdin closes (the benchmark runs it as a child process).

    The first line printed is the base URL. ``GET /stats`` returns the counters,
    ``DELETE /stats`` resets them and ``PUT /settings`` with ``{"latency": s, "shuffle": b}``
    changes how later requests are answered.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="Fake OpenAI embeddings server on 127.0.0.1")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    parser.add_argument("--shuffle", action="store_true", help="shuffle response items")
    args = parser.parse_args()
    with FakeOpenAIServer(latency=args.latency, shuffle=args.shuffle) as server:
        sys.stdout.write(server.base_url + "\n")
        sys.stdout.flush()
        sys.stdin.read()  # returns when the parent closes our stdin or exits


if __name__ == "__main__":
    main()
