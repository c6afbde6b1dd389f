"""``scidx.http``, the one HTTP client behind every outbound call, against loopback servers.

The clients' own behaviour (reranker, chat, rewriter, embedder) is in test_http_clients.py; this
file pins the helper's rules: the deadline covers headers as well as the body, redirects come
back unfollowed, replies are bounded, JSON depth is measured outside strings, proxies are used
as ``urllib`` used them, and the ``openai`` SDK's client cannot reach a second origin.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable

import httpx2
import pytest

from scidx.http import (
    MAX_JSON_DEPTH,
    ConnectionPool,
    HttpFailure,
    ReplyError,
    json_depth,
    loads_json,
    origin,
    sdk_http_client,
    send,
)
from support.hostile_server import Hostile, HostileServer, KeepAliveServer


@pytest.fixture(autouse=True)
def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


def test_json_depth_counts_brackets_outside_strings() -> None:
    assert json_depth(b"") == 0
    assert json_depth(b'{"a": [1, [2]]}') == 3
    assert json_depth(b'{"a": "[[[[{{{{", "b": "\\"[["}') == 1
    assert json_depth(b"[" * 200_000) == 200_000
    assert json_depth(b"]]]][") == 0  # unbalanced text is json.loads's to refuse


def test_loads_json_limits() -> None:
    assert loads_json(b'{"a": [1]}') == {"a": [1]}
    deep = b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(ReplyError, match="the body nests 129 levels deep, over the limit of 128"):
        loads_json(deep)
    assert loads_json(deep[1:-1]) is not None
    with pytest.raises(ReplyError, match="the body is 11 bytes, over the 10-byte limit"):
        loads_json(b"[1,2,3,4,5]", max_bytes=10)
    with pytest.raises(ReplyError, match="not valid JSON"):
        loads_json(b"{")
    with pytest.raises(ReplyError, match="not UTF-8"):
        loads_json(b'"\xff"')


def test_origin() -> None:
    assert origin("https://API.example.com/v1") == ("https", "api.example.com", 443)
    assert origin("http://127.0.0.1:8080/x") == ("http", "127.0.0.1", 8080)
    assert origin("http://h") == ("http", "h", 80)


def test_dripped_headers_meet_the_same_deadline() -> None:
    """Not only the body: a status line and headers sent a byte at a time also run out of time."""
    head = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"y" * 100 + b"\r\n\r\n"
    with HostileServer(Hostile(b"", head, interval=0.1)) as server:
        start = time.monotonic()
        with pytest.raises(HttpFailure, match=r"no complete reply within 0\.5 s") as info:
            send("GET", server.base_url, timeout=0.5)
        # The drip alone would take 10 s or more; the margin is for a loaded CI machine.
        assert time.monotonic() - start < 2.5
    assert info.value.timeout and info.value.retryable


def test_a_dripped_tls_handshake_meets_the_deadline() -> None:
    """A server that drips a TLS record (header first, then a byte a tick) cannot hold a call."""
    record = b"\x16\x03\x03\x40\x00" + b"\x00" * 200  # a 16 KiB handshake record, slowly
    with HostileServer(Hostile(b"", record, interval=0.05, http=False)) as server:
        url = f"https://127.0.0.1:{server.port}/"
        start = time.monotonic()
        with pytest.raises(HttpFailure, match=r"within 0\.5 s") as info:
            send("GET", url, timeout=0.5)
        # The drip alone would take 10 s or more; the margin is for a loaded CI machine.
        assert time.monotonic() - start < 2.5
    assert info.value.timeout


def test_a_redirect_comes_back_unfollowed() -> None:
    with HostileServer(Hostile.ok(b"[]")) as other:
        with HostileServer(Hostile.redirect(other.base_url + "/x", 302)) as server:
            reply = send("POST", server.base_url, body=b"{}", timeout=2)
        assert other.seen == []
    assert reply.status == 302
    assert reply.headers["Location"] == other.base_url + "/x"


def test_replies_are_bounded() -> None:
    with HostileServer(Hostile.ok(b"x" * 100)) as server:
        with pytest.raises(HttpFailure, match="announces 100 bytes, over the 99-byte limit"):
            send("GET", server.base_url, timeout=2, max_bytes=99)
        assert send("GET", server.base_url, timeout=2, max_bytes=100).body == b"x" * 100
    unsized = Hostile(b"HTTP/1.0 200 OK\r\n\r\n", b"x" * 100)  # no Content-Length: read to EOF
    with HostileServer(unsized) as server:
        with pytest.raises(HttpFailure, match="larger than the 99-byte limit"):
            send("GET", server.base_url, timeout=2, max_bytes=99)
    gzipped = Hostile(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx")
    with HostileServer(gzipped) as server:
        with pytest.raises(HttpFailure, match=r"compressed \(gzip\)"):
            send("GET", server.base_url, timeout=2)
        assert server.seen[0].headers["accept-encoding"] == "identity"


def test_connection_refused_is_retryable() -> None:
    with pytest.raises(HttpFailure, match="connection error") as info:
        send("GET", "http://127.0.0.1:9/", timeout=2)
    assert info.value.retryable and not info.value.timeout
    with pytest.raises(HttpFailure, match="not an http:// or https:// URL"):
        send("GET", "ftp://127.0.0.1/", timeout=2)


def test_a_plain_http_proxy_gets_the_absolute_url(monkeypatch: pytest.MonkeyPatch) -> None:
    with HostileServer(Hostile.ok(b"[1]")) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://user:pa%20ss@127.0.0.1:{proxy.port}")
        reply = send("POST", "http://api.example.test/rerank?x=1", body=b"{}", timeout=2)
    assert reply.body == b"[1]"
    assert proxy.seen[0].line == "POST http://api.example.test/rerank?x=1 HTTP/1.1"
    assert proxy.seen[0].headers["host"] == "api.example.test"
    credentials = base64.b64encode(b"user:pa ss").decode()
    assert proxy.seen[0].headers["proxy-authorization"] == f"Basic {credentials}"


def test_https_goes_through_a_connect_tunnel(monkeypatch: pytest.MonkeyPatch) -> None:
    refusal = Hostile(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
    with HostileServer(refusal) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.port}")
        with pytest.raises(HttpFailure, match="the proxy refused to connect to api.example.test"):
            send("POST", "https://api.example.test/v1/x", body=b"secret", timeout=2)
    assert proxy.seen[0].line == "CONNECT api.example.test:443 HTTP/1.1"
    assert proxy.seen[0].body == b""  # nothing of the request itself went to the proxy


def test_loopback_and_no_proxy_bypass_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    with HostileServer(Hostile.ok(b"[]")) as server:
        assert send("GET", server.base_url, timeout=2).body == b"[]"


def test_the_sdk_client_talks_only_to_its_origin() -> None:
    """Even told to follow a redirect, the SDK's client sends nothing to another origin."""
    with HostileServer(Hostile.ok(b"[]")) as other:
        target = f"http://localhost:{other.port}/steal"
        with HostileServer(Hostile.redirect(target, 307)) as server:
            with sdk_http_client(server.base_url + "/v1", 2) as client:
                headers = {"Authorization": "Bearer sk-test-0123456789", "api-key": "k"}
                reply = client.post(server.base_url + "/v1/x", headers=headers, content=b"{}")
                assert reply.status_code == 307  # returned, not followed
                with pytest.raises(httpx2.RemoteProtocolError, match="refused to send"):
                    client.post(
                        server.base_url + "/v1/x",
                        headers=headers,
                        content=b"{}",
                        follow_redirects=True,
                    )
                with pytest.raises(httpx2.RemoteProtocolError, match="only talks to"):
                    client.get(target)
        assert other.seen == []


def test_the_sdk_client_maps_failures() -> None:
    with HostileServer(Hostile.drip(b"[" + b" " * 100 + b"]", 0.2)) as server:
        with sdk_http_client(server.base_url, 0.5) as client:
            with pytest.raises(httpx2.ReadTimeout, match="within 0.5 s"):
                client.get(server.base_url)
    with HostileServer(Hostile.ok(b"[" * 1000)) as server:
        with sdk_http_client(server.base_url, 2) as client:
            with pytest.raises(httpx2.RemoteProtocolError, match="nests 1000 levels"):
                client.get(server.base_url)


def test_a_pool_keeps_one_connection_for_many_calls() -> None:
    with KeepAliveServer() as server:
        pool = ConnectionPool()
        for _ in range(5):
            assert (
                send("POST", server.base_url + "/x", body=b"{}", timeout=2, pool=pool).body == b"[]"
            )
        assert server.connections == 1 and server.requests == 5 and len(pool) == 1
        pool.close()
        _wait_until(lambda: server.open_connections == 0)
        # Without a pool, each call has its own connection and closes it.
        for _ in range(2):
            send("GET", server.base_url, timeout=2)
        assert server.connections == 3


def test_a_connection_the_server_dropped_is_replaced_once() -> None:
    with KeepAliveServer(drop_second=True) as server:
        pool = ConnectionPool()
        for _ in range(3):
            assert send("POST", server.base_url, body=b"{}", timeout=2, pool=pool).body == b"[]"
        # Calls 2 and 3 each met their connection dropped and were sent again on a new one.
        assert server.requests == 5 and server.connections == 3
        pool.close()


def test_an_expired_or_closed_idle_connection_is_not_reused() -> None:
    with KeepAliveServer() as server:
        pool = ConnectionPool(idle_seconds=0.0)
        send("GET", server.base_url, timeout=2, pool=pool)
        send("GET", server.base_url, timeout=2, pool=pool)
        assert server.connections == 2  # the first had expired at once
        pool.close()
    with HostileServer(Hostile.ok(b"[]", extra="")) as closing:  # HTTP/1.1, closes after replying
        pool = ConnectionPool()
        send("GET", closing.base_url, timeout=2, pool=pool)
        assert len(pool) == 0  # "Connection: close": never kept


def test_the_sdk_client_keeps_connections_and_closes_them() -> None:
    with KeepAliveServer(body=b'{"ok": true}') as server:
        with sdk_http_client(server.base_url, 2) as client:
            for _ in range(4):
                assert client.get(server.base_url + "/v1/x").json() == {"ok": True}
        assert server.connections == 1
        _wait_until(lambda: server.open_connections == 0)


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
