"""A loopback HTTP server that answers badly on purpose: drips, redirects, nests, breaks HTTP.

Each connection reads one request (headers and a ``Content-Length`` body), records it, and then
sends the raw bytes of the server's ``answer``: a :class:`Hostile` value saying what to send and
how slowly. It binds to 127.0.0.1 only and never blocks the test that stops it (every
connection thread is a daemon and gives up when the server stops).

Example::

    with HostileServer(Hostile.drip(b'{"results": []}')) as server:
        HttpReranker("tei", base_url=server.base_url, timeout=1).score_documents("q", ["a"])
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from types import TracebackType

__all__ = ["Hostile", "HostileServer", "Seen"]


@dataclass(frozen=True)
class Hostile:
    """What to send back: ``head`` at once, then ``body`` one ``step`` of bytes per ``interval``.

    Attributes:
        head: Sent at once (status line and headers, or anything else).
        body: Sent after ``head``, ``step`` bytes at a time.
        interval: Seconds between two steps of ``body`` (0: all at once).
        step: Bytes per step.
        http: Wait for a whole HTTP request first; ``False`` answers the first bytes of
            anything (a TLS ClientHello).
    """

    head: bytes
    body: bytes = b""
    interval: float = 0.0
    step: int = 1
    http: bool = True

    @staticmethod
    def ok(body: bytes, *, interval: float = 0.0, extra: str = "") -> Hostile:
        """A 200 JSON reply with the right ``Content-Length``, dripped if ``interval`` is set."""
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n"
        )
        return Hostile(head.encode("latin-1"), body, interval)

    @staticmethod
    def drip(body: bytes, interval: float = 0.5) -> Hostile:
        """Headers at once, then the body one byte every ``interval`` seconds."""
        return Hostile.ok(body, interval=interval)

    @staticmethod
    def redirect(location: str, status: int = 307) -> Hostile:
        """A redirect to ``location`` (307 keeps the method and body)."""
        head = (
            f"HTTP/1.1 {status} Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\n"
            "Connection: close\r\n\r\n"
        )
        return Hostile(head.encode("latin-1"))


@dataclass(frozen=True)
class Seen:
    """A request the server read: its request line, headers (lower-case names) and body."""

    line: str
    headers: dict[str, str]
    body: bytes


@dataclass
class HostileServer:
    """Answers every request with ``answer`` (see :class:`Hostile`); records what it was sent."""

    answer: Hostile
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.port = int(self._sock.getsockname()[1])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> Seen | None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
        return Seen(lines[0], headers, rest)

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            try:
                if self.answer.http:
                    seen = self._read_request(conn)
                else:
                    first = conn.recv(65536)
                    seen = Seen("", {}, first) if first else None
                if seen is None:
                    return
                with self._lock:
                    self.seen.append(seen)
                answer = self.answer
                conn.sendall(answer.head)
                if answer.interval <= 0:
                    conn.sendall(answer.body)
                    return
                for start in range(0, len(answer.body), answer.step):
                    if self._stop.wait(answer.interval):
                        return
                    conn.sendall(answer.body[start : start + answer.step])
            except OSError:
                return  # the client gave up: that is what the tests want


@dataclass
class KeepAliveServer:
    """An HTTP/1.1 server that keeps connections open; counts them and the requests on each.

    With ``drop_second``, the second request on any connection is read and then the connection
    is closed without a reply, as a server does whose idle timeout fired just as the request
    arrived; a client must then send it again on a new connection.
    """

    body: bytes = b"[]"
    drop_second: bool = False
    connections: int = 0
    requests: int = 0

    def __post_init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.port = int(self._sock.getsockname()[1])
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()

    @property
    def open_connections(self) -> int:
        """Connections the client has not closed yet."""
        with self._lock:
            return len(self._open)

    def __enter__(self) -> KeepAliveServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self.connections += 1
                self._open.add(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        buffer = b""
        served = 0
        try:
            while not self._stop.is_set():
                while b"\r\n\r\n" not in buffer:
                    try:
                        chunk = conn.recv(65536)
                    except TimeoutError:
                        if self._stop.is_set():
                            return
                        continue
                    if not chunk:
                        return  # the client closed it
                    buffer += chunk
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(buffer) < length:
                    buffer += conn.recv(65536)
                buffer = buffer[length:]
                served += 1
                with self._lock:
                    self.requests += 1
                if self.drop_second and served == 2:
                    return
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(self.body), self.body)
                )
        except OSError:
            return
        finally:
            with self._lock:
                self._open.discard(conn)
            conn.close()
