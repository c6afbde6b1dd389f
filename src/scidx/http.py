"""The one HTTP client of outbound calls: a deadline per call, no redirects, bounded replies.

Every client that talks to another program over HTTP (the ``http`` reranker, the OpenAI
embedder, chat ``complete()`` and the ``llm`` query rewriter, and any plugin that wants the same
rules) goes through :func:`send`; the ``openai`` SDK is given :func:`sdk_http_client`, an
``httpx2`` client whose transport is :func:`send`, so both paths keep the same rules:

* **A deadline per call**, not per socket read (a kept-alive connection, :class:`ConnectionPool`,
  gets the same deadline on each call): connecting, sending and receiving the status
  line, every header and every body byte must all finish within ``timeout`` seconds, else
  :class:`HttpFailure` (``timeout``). A server that drips one byte every half second cannot hold
  a caller past it; a client that retries waits at most ``timeout`` x attempts plus backoff.
* **No redirects**, ever: a ``3xx`` reply is returned as it is (callers report it with
  :func:`redirect_message`), so credentials and request bodies never reach a host they were not
  meant for. The SDK transport is also pinned to its base URL's origin and refuses any other.
* **Bounded replies**: at most ``max_bytes`` of body (``Content-Length`` checked first), the
  standard library's line (64 KiB) and header-count (100) limits, ``identity`` encoding only
  (no decompression bombs), and :func:`loads_json` refuses JSON nested deeper than
  :data:`MAX_JSON_DEPTH` (it would otherwise raise ``RecursionError``).
* **One failure type**: every transport problem (refused or reset connections, TLS errors, a bad
  status line, too many or too long headers, a truncated body) is an :class:`HttpFailure` with a
  one-line ``what`` and whether a retry may help. It is not a scidx error on purpose: each
  client maps it to its own (``RerankError``, ``ProviderError``, ``ChatProviderError``).
* Proxies from ``HTTP_PROXY``/``HTTPS_PROXY``/``NO_PROXY`` (``http://`` proxies; ``CONNECT``
  for ``https://`` URLs) are honoured, as ``urllib`` did; loopback addresses never go through
  a proxy.

Only the standard library is used (``httpx2`` only inside :func:`sdk_http_client`).
"""

from __future__ import annotations

import base64
import functools
import http.client
import io
import ipaddress
import itertools
import json
import operator
import re
import select
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_REPLY_BYTES",
    "ConnectionPool",
    "HttpFailure",
    "Reply",
    "ReplyError",
    "json_depth",
    "loads_json",
    "origin",
    "redirect_message",
    "sdk_http_client",
    "send",
]

#: The largest reply body :func:`send` reads unless told otherwise (64 MiB).
MAX_REPLY_BYTES = 64 << 20

#: The deepest JSON nesting :func:`loads_json` accepts; real API replies nest 3 to 6 levels.
MAX_JSON_DEPTH = 128

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Opening brackets become 2 and closing ones 0, everything else is deleted: the running sum
# minus the position is then the nesting depth, computed at C speed (itertools, operator).
_BRACKETS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[{]}")


class HttpFailure(Exception):
    """One HTTP exchange failed: no reply within the deadline, no connection, a malformed reply.

    Attributes:
        what: One line saying what happened, for the caller's error message.
        retryable: Whether trying again may help (timeouts and connection errors).
        timeout: The deadline passed.
    """

    def __init__(self, what: str, *, retryable: bool, timeout: bool = False) -> None:
        super().__init__(what)
        self.what = what
        self.retryable = retryable
        self.timeout = timeout


class ReplyError(ValueError):
    """A reply body is not the JSON it should be: too large, nested too deep, or not JSON."""


@dataclass(frozen=True)
class Reply:
    """A complete HTTP reply.

    Attributes:
        status: The status code.
        reason: The reason phrase.
        headers: The headers (``get`` is case-insensitive).
        body: The whole body (at most the ``max_bytes`` asked for).
    """

    status: int
    reason: str
    headers: http.client.HTTPMessage
    body: bytes


def origin(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of ``url``, the unit credentials are bound to."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or (443 if scheme == "https" else 80)


def redirect_message(status: int, location: str | None) -> str:
    """What to say about a ``3xx`` reply: where it pointed and that it was not followed."""
    target = urllib.parse.urlsplit(location or "")
    where = f"{target.scheme}://{target.netloc}" if target.netloc else "the same server"
    return (
        f"HTTP {status} redirect to {where}{target.path[:80]}; redirects are not followed "
        "(credentials and requests stay with the URL configured): set the base URL to the "
        "address the server redirects to"
    )


def json_depth(data: bytes) -> int:
    """The deepest bracket nesting of JSON text ``data`` (brackets inside strings not counted)."""
    brackets = _STRING.sub(b"", data).translate(_BRACKETS, _NOT_BRACKETS)
    # Past a stray closing bracket the count runs low, but a JSON parser stops there anyway.
    depths = map(operator.sub, itertools.accumulate(brackets), itertools.count(1))
    return max(0, max(depths, default=0))


def loads_json(
    data: bytes, *, max_bytes: int = MAX_REPLY_BYTES, max_depth: int = MAX_JSON_DEPTH
) -> Any:
    """Parse a reply body as JSON, within size and depth limits.

    Raises:
        ReplyError: Larger than ``max_bytes``, nested deeper than ``max_depth``, not UTF-8, or
            not JSON. The message says which.
    """
    if len(data) > max_bytes:
        raise ReplyError(f"the body is {len(data)} bytes, over the {max_bytes}-byte limit")
    depth = json_depth(data)
    if depth > max_depth:
        raise ReplyError(f"the body nests {depth} levels deep, over the limit of {max_depth}")
    try:
        return json.loads(data)
    except UnicodeDecodeError:
        raise ReplyError("the body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the body is not valid JSON ({exc.msg} at byte {exc.pos})") from None
    except RecursionError:  # a deep stack at the call site; the depth check makes this rare
        raise ReplyError("the body nests too deep to parse") from None


# -- the deadline -----------------------------------------------------------------------------


class _DeadlineReader(io.RawIOBase):
    """A socket's read side that refuses to wait past the call's deadline, however it drips."""

    def __init__(self, sock: socket.socket, deadline: float, timeout: float) -> None:
        self._sock = sock
        self._deadline = deadline
        self._timeout = timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"no complete reply within {self._timeout:g} s")
        # Each read may wait only for what is left of the whole call, so the sum cannot exceed it.
        self._sock.settimeout(remaining)
        return self._sock.recv_into(buffer)


class _DeadlineSocket:
    """What ``http.client`` sees as its socket: reads and writes bounded by one deadline."""

    def __init__(self, sock: socket.socket, deadline: float, timeout: float) -> None:
        self._sock = sock
        self._deadline = deadline
        self._timeout = timeout

    def sendall(self, data: Any) -> None:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"the request could not be sent within {self._timeout:g} s")
        self._sock.settimeout(remaining)  # sendall's timeout covers the whole send (3.5+)
        self._sock.sendall(data)

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline, self._timeout))

    def close(self) -> None:
        # http.client closes its socket as soon as a reply says ``Connection: close``, before
        # the body is read; :func:`send` closes the real socket when it is done with it.
        pass


@functools.lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    # Loading the trust store takes milliseconds; one context serves every thread.
    return ssl.create_default_context()


def _proxy_for(scheme: str, host: str) -> str | None:
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        if host == "localhost":
            return None
    proxies = urllib.request.getproxies()
    proxy = proxies.get(scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return proxy


def _connect(
    scheme: str, host: str, port: int, deadline: float, timeout: float
) -> tuple[socket.socket, bool, dict[str, str]]:
    """An open (TLS) socket to ``host``, through an ``http://`` proxy if one is configured.

    Returns the socket, whether the request goes to a plain-HTTP proxy (so its target must be
    the absolute URL) and the extra headers (``Proxy-Authorization``) that request needs.
    """
    proxy = _proxy_for(scheme, host)
    extra: dict[str, str] = {}
    absolute = False
    via = urllib.parse.urlsplit(proxy) if proxy else None
    if via is not None and via.scheme != "http":
        raise HttpFailure(f"unsupported proxy {via.scheme}://{via.hostname}", retryable=False)
    address = (via.hostname or "", via.port or 80) if via is not None else (host, port)
    if via is not None and via.username:
        pair = f"{urllib.parse.unquote(via.username)}:{urllib.parse.unquote(via.password or '')}"
        extra["Proxy-Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    sock = socket.create_connection(address, timeout=max(deadline - time.monotonic(), 0.001))
    try:
        # http.client sends the headers and the body in two writes: without this, Nagle holds
        # the body until the server's delayed ACK (40 ms a request on a kept-alive connection).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if via is not None and scheme == "https":
            _tunnel(sock, host, port, extra, deadline, timeout)
            extra = {}
        elif via is not None:
            absolute = True
        if scheme == "https":
            # CPython bounds a whole handshake by the socket's timeout (one deadline across its
            # reads), so this is what is left of the call, however slowly the server answers.
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            sock = _tls_context().wrap_socket(sock, server_hostname=host)
    except BaseException:
        sock.close()
        raise
    return sock, absolute, extra


def _tunnel(
    sock: socket.socket,
    host: str,
    port: int,
    headers: Mapping[str, str],
    deadline: float,
    timeout: float,
) -> None:
    bounded = _DeadlineSocket(sock, deadline, timeout)
    lines = [f"CONNECT {host}:{port} HTTP/1.1", f"Host: {host}:{port}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    bounded.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    reply = http.client.HTTPResponse(bounded, method="CONNECT")  # type: ignore[arg-type]
    reply.begin()
    if reply.status != 200:
        raise HttpFailure(
            f"the proxy refused to connect to {host}:{port}: HTTP {reply.status} {reply.reason}",
            retryable=reply.status >= 500,
        )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, http.client.LineTooLong):
        return "malformed reply: a status or header line is longer than 65536 bytes"
    if isinstance(exc, http.client.BadStatusLine):
        line = str(exc)[:60]
        return f"malformed reply: not an HTTP status line ({line!r})"
    if isinstance(exc, http.client.IncompleteRead):
        return f"the reply ended early ({len(exc.partial)} bytes of the body arrived)"
    if isinstance(exc, http.client.HTTPException):
        text = " ".join(str(exc).split())[:120]
        return f"malformed reply: {text or type(exc).__name__}"
    if isinstance(exc, ssl.SSLError):
        return f"TLS error: {exc.reason or exc}"
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"connection error: {reason}"


def send(
    method: str,
    url: str,
    *,
    body: bytes | None = None,
    headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
    timeout: float,
    max_bytes: int = MAX_REPLY_BYTES,
    pool: ConnectionPool | None = None,
) -> Reply:
    """One HTTP exchange within ``timeout`` seconds, start to last byte; redirects not followed.

    Args:
        method: ``GET``, ``POST`` ...
        url: An ``http://`` or ``https://`` URL.
        body: The request body.
        headers: Request headers (a mapping or pairs). ``Accept-Encoding`` is always
            ``identity``.
        timeout: The deadline of the whole call, in seconds.
        max_bytes: The largest body accepted.
        pool: Keep the connection open for the next call of this client (see
            :class:`ConnectionPool`); without one, each call has its own connection.

    Returns:
        The :class:`Reply`, whatever its status (``3xx`` included: see :func:`redirect_message`).

    Raises:
        HttpFailure: The deadline passed, no connection, or a malformed or too large reply.

    Example:
        >>> reply = send("GET", "http://127.0.0.1:8080/health", timeout=5)  # doctest: +SKIP
    """
    deadline = time.monotonic() + timeout
    scheme, host, port = origin(url)
    if scheme not in ("http", "https") or not host:
        raise HttpFailure(f"not an http:// or https:// URL: {url[:80]!r}", retryable=False)
    parts = urllib.parse.urlsplit(url)
    pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
    # The body is sent whole, with the length http.client computes; the reply is never
    # compressed; without a pool the connection ends with the exchange.
    skip = ("accept-encoding", "connection", "content-length", "transfer-encoding")
    pairs = [(k, v) for k, v in pairs if k.lower() not in skip]
    pairs.append(("Accept-Encoding", "identity"))
    if pool is None:
        pairs.append(("Connection", "close"))
    exchange = _Exchange(
        method,
        url.split("#", 1)[0],
        (parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
        body,
        pairs,
        (scheme, host, port),
        deadline,
        timeout,
        max_bytes,
    )
    try:
        kept = pool.take(exchange.origin) if pool is not None else None
        if kept is not None:
            try:
                return exchange.run(kept, pool, reused=True)
            except _Stale:
                pass  # the server had closed the idle connection: once more, on a new one
        return exchange.run(_connect(scheme, host, port, deadline, timeout), pool)
    except HttpFailure:
        raise
    except TimeoutError:
        raise HttpFailure(
            f"no complete reply within {timeout:g} s", retryable=True, timeout=True
        ) from None
    except http.client.HTTPException as exc:
        # A dropped connection may succeed next time; a reply that breaks the protocol will not.
        dropped = isinstance(exc, (http.client.RemoteDisconnected, http.client.IncompleteRead))
        raise HttpFailure(_describe(exc), retryable=dropped) from None
    except (OSError, ValueError) as exc:  # ValueError: a header value http.client refuses
        raise HttpFailure(_describe(exc), retryable=isinstance(exc, OSError)) from None


class _Stale(Exception):
    """Internal: a kept-alive connection turned out closed before any reply byte."""


_Link = tuple[socket.socket, bool, dict[str, str]]  # socket, absolute target?, extra headers


@dataclass(frozen=True)
class _Exchange:
    method: str
    url: str
    target: str
    body: bytes | None
    headers: list[tuple[str, str]]
    origin: tuple[str, str, int]
    deadline: float
    timeout: float
    max_bytes: int

    def run(self, link: _Link, pool: ConnectionPool | None, *, reused: bool = False) -> Reply:
        sock, absolute, extra = link
        keep = False
        try:
            scheme, host, port = self.origin
            conn = http.client.HTTPConnection(host, port)
            if scheme == "https":
                conn.default_port = 443  # so the Host header leaves out the default port
            conn.sock = _DeadlineSocket(sock, self.deadline, self.timeout)
            try:
                conn.request(
                    self.method,
                    self.url if absolute else self.target,
                    body=self.body,
                    headers=dict([*self.headers, *extra.items()]),
                )
                response = conn.getresponse()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if reused:
                    raise _Stale from None
                raise
            try:
                reply = self._read(response)
            finally:
                response.close()
            keep = pool is not None and not response.will_close
            return reply
        finally:
            if keep and pool is not None:
                pool.give(self.origin, link)
            else:
                sock.close()

    def _read(self, response: http.client.HTTPResponse) -> Reply:
        max_bytes = self.max_bytes
        declared = response.getheader("Content-Length")
        if declared and declared.strip().isdigit() and int(declared) > max_bytes:
            raise HttpFailure(
                f"the reply announces {int(declared)} bytes, over the {max_bytes}-byte limit",
                retryable=False,
            )
        encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
        if encoding != "identity":
            raise HttpFailure(
                f"the reply is compressed ({encoding[:20]}) although identity was asked for",
                retryable=False,
            )
        data = response.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise HttpFailure(
                f"the reply is larger than the {max_bytes}-byte limit", retryable=False
            )
        if response.length:  # read(amt) returns a short body instead of raising
            raise http.client.IncompleteRead(data, response.length)
        if not response.isclosed():
            response.will_close = True  # a body not read to its end cannot share the socket
        return Reply(response.status, response.reason, response.msg, data)


class ConnectionPool:
    """Idle kept-alive connections of one client, for :func:`send` to reuse; thread-safe.

    A connection is kept only after a reply read to its end that did not say
    ``Connection: close``; it is reused at most ``idle_seconds`` later (servers close idle
    connections after a few seconds) and only if the server has not closed it meanwhile; a
    request that finds it closed all the same is sent again, once, on a new connection.

    Args:
        max_idle: Idle connections kept per origin (more are closed).
        idle_seconds: How long an idle connection stays usable.
    """

    def __init__(self, max_idle: int = 8, idle_seconds: float = 4.0) -> None:
        self.max_idle = max_idle
        self.idle_seconds = idle_seconds
        self._idle: dict[tuple[str, str, int], list[tuple[_Link, float]]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def __len__(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._idle.values())

    def take(self, key: tuple[str, str, int]) -> _Link | None:
        """The most recently idle, still open connection to ``key``, or None."""
        while True:
            with self._lock:
                found = self._idle.get(key)
                if not found:
                    return None
                link, since = found.pop()
            if time.monotonic() - since < self.idle_seconds and not _readable(link[0]):
                return link
            link[0].close()  # expired, or closed (or chattering) while idle

    def give(self, key: tuple[str, str, int], link: _Link) -> None:
        """Keep ``link`` for the next call, unless the pool is closed or full."""
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if not self._closed and len(idle) < self.max_idle:
                idle.append((link, time.monotonic()))
                return
        link[0].close()

    def close(self) -> None:
        """Close every idle connection; later connections are not kept."""
        with self._lock:
            self._closed = True
            links = [link for idle in self._idle.values() for link, _ in idle]
            self._idle.clear()
        for sock, _, _ in links:
            sock.close()


def _readable(sock: socket.socket) -> bool:
    # An idle HTTP connection has nothing to read: readable means closed (EOF) or broken.
    try:
        ready, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(ready)


# -- the openai SDK's client -------------------------------------------------------------------


def sdk_http_client(base_url: str, timeout: float, *, max_bytes: int = MAX_REPLY_BYTES) -> Any:
    """An ``httpx2.Client`` for the ``openai`` SDK whose every request goes through :func:`send`.

    Connections are kept alive between requests (a :class:`ConnectionPool` per client, closed
    with it). The transport answers only ``base_url``'s origin (anything else, such as a
    redirect the SDK was told to follow, is refused before a byte is sent) and refuses JSON
    replies nested deeper than :data:`MAX_JSON_DEPTH`, so the SDK never parses one. Failures
    reach the SDK as ``httpx2`` errors (a timeout as ``ReadTimeout``) whose text is
    :class:`HttpFailure`'s.

    Args:
        base_url: The API base URL the client may talk to.
        timeout: The deadline of each request, in seconds.
        max_bytes: The largest reply body accepted.
    """
    import httpx2

    pinned = origin(base_url)

    class _Refused(httpx2.RemoteProtocolError):
        """The transport refused a reply (malformed, too large, too deep) or a request."""

        refused = True  # what the SDK's callers look for on ``__cause__``

    class _Transport(httpx2.BaseTransport):
        def __init__(self) -> None:
            self.pool = ConnectionPool()

        def close(self) -> None:
            self.pool.close()

        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            url = str(request.url)
            if origin(url) != pinned:
                scheme, host, port = origin(url)
                raise _Refused(
                    f"refused to send a request to {scheme}://{host}:{port}: this client only "
                    f"talks to {pinned[0]}://{pinned[1]}:{pinned[2]}",
                    request=request,
                )
            try:
                reply = send(
                    request.method,
                    url,
                    body=request.read(),
                    headers=[(k, v) for k, v in request.headers.multi_items()],
                    timeout=timeout,
                    max_bytes=max_bytes,
                    pool=self.pool,
                )
            except HttpFailure as exc:
                if exc.timeout:
                    raise httpx2.ReadTimeout(exc.what, request=request) from None
                if exc.retryable:
                    raise httpx2.ConnectError(exc.what, request=request) from None
                raise _Refused(exc.what, request=request) from None
            depth = json_depth(reply.body)
            if depth > MAX_JSON_DEPTH:
                raise _Refused(
                    f"the reply nests {depth} levels deep, over the limit of {MAX_JSON_DEPTH}",
                    request=request,
                )
            return httpx2.Response(
                reply.status,
                headers=[
                    (k, v)
                    for k, v in reply.headers.items()
                    if k.lower() not in ("transfer-encoding", "content-encoding")
                ],
                content=reply.body,
                request=request,
            )

    return httpx2.Client(
        transport=_Transport(), follow_redirects=False, timeout=timeout, trust_env=False
    )
