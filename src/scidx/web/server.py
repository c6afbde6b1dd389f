"""What bounds each connection of ``toolup-rag serve``: a request-read deadline and a cap.

uvicorn times out idle keep-alive connections, but not a client that sends its request slowly:
200 sockets sending a header byte every 5 s stayed open forever (slowloris), and nothing capped
how many connections are open at once. :func:`bounded_protocol` makes uvicorn's h11 protocol
class with both:

* **read deadline**: from a connection's opening, or the first byte of its next request, the
  whole request (headers and body) must arrive within ``read_timeout`` seconds; otherwise the
  server answers ``408`` (when part of a request came and nothing was answered yet) and closes
  the connection. A request being answered is not timed (searches take what they take), and an
  idle kept-alive connection is closed by uvicorn's keep-alive timeout;
* **connection cap**: beyond ``max_connections`` open connections, a new one gets ``503`` and is
  closed at once, so a flood of sockets cannot exhaust the process's descriptors.

uvicorn's own ``h11_max_incomplete_event_size`` still bounds the header bytes (16 KiB by
default).
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["DEFAULT_MAX_CONNECTIONS", "DEFAULT_READ_TIMEOUT", "bounded_protocol"]

DEFAULT_READ_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS = 512

_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
# Their states in which the whole request has arrived (or the connection is finished with).
_READ = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR, h11.SWITCHED_PROTOCOL)


def bounded_protocol(read_timeout: float, max_connections: int) -> type[asyncio.Protocol]:
    """The h11 protocol class of uvicorn, with a request-read deadline and a connection cap.

    Pass the result as ``uvicorn.Config(http=...)``.
    """

    class BoundedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                transport.write(_BUSY)
                transport.close()
                return
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._deadline is None and self.conn.their_state is h11.IDLE:
                self._arm()  # the first byte of the next request on a kept-alive connection
            super().data_received(data)
            if self.conn.their_state in _READ:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # A pipelined request already (partly) buffered gets the deadline now; an idle
            # kept-alive connection is left to uvicorn's keep-alive timeout.
            if (
                not self.transport.is_closing()
                and self.conn.their_state is h11.IDLE
                and self.conn.trailing_data[0]
            ):
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(read_timeout, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if self.transport.is_closing() or self.conn.their_state in _READ:
                return
            # Some of a request came (a connection that sent nothing is just closed) and no
            # response to it has started (our IDLE or SEND_RESPONSE): say why it is closed.
            started = self.conn.their_state is not h11.IDLE or self.conn.trailing_data[0]
            if started and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                self.transport.write(_TIMEOUT)
            self.transport.close()

    return BoundedH11Protocol
