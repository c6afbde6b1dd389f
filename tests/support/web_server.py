"""scidx.web test helpers: uvicorn on 127.0.0.1 in a thread, the test records, error checks.

The socket is bound before uvicorn starts (port 0: a free one), so the URL is known at once::

    with UvicornThread(app) as server:
        httpx.get(server.url + "/search?q=cors")
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any

import httpx
import uvicorn

__all__ = ["OTHER", "RECORDS", "URL_TEMPLATE", "UvicornThread", "assert_error"]


class UvicornThread:
    """uvicorn serving ``app`` on a loopback port until the ``with`` block ends."""

    def __init__(self, app: Any, **config: Any) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        options = {"log_level": "warning", "access_log": False, "lifespan": "on", **config}
        self.server = uvicorn.Server(uvicorn.Config(app, **options))
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    def __enter__(self) -> UvicornThread:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=20)
        self._sock.close()


URL_TEMPLATE = "https://docs.example.com/{page}#{anchor}"


def rec(source: str, anchor: str, text: str, title: str, meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"{source}:{anchor}:0",
        "source": source,
        "anchor": anchor,
        "title": title,
        "headingPath": [title, anchor.capitalize()],
        "text": text,
        "metadata": meta,
    }


RECORDS = [
    rec(
        "guide/install.md",
        "install",
        "Install kubectl with your package manager, then check the version.",
        "Install guide",
        {"section": "guide", "level": 1},
    ),
    rec(
        "guide/install.md",
        "cors",
        "Configure CORS with the allow_origins setting of the gateway.",
        "Install guide",
        {"section": "guide", "level": 1},
    ),
    rec(
        "ops/logs.md",
        "rotate",
        "Rotate nginx logs daily with logrotate and keep two weeks of logs.",
        "Logs",
        {"section": "ops", "level": 2},
    ),
    rec(
        "ops/logs.md",
        "ship",
        "Ship nginx logs to the collector over TLS; the collector indexes logs by host.",
        "Logs",
        {"section": "ops", "level": 2},
    ),
    rec(
        "ops/cache.md",
        "cache",
        "Configure the cache size and the eviction policy; logs show cache misses.",
        "Cache",
        {"section": "ops", "level": 3},
    ),
]

OTHER = [
    rec(
        "faq.md",
        "logs",
        "Where are the logs? Logs live in /var/log/app and rotate weekly.",
        "FAQ",
        {"section": "faq"},
    ),
]


def assert_error(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert "Traceback" not in response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    for word in words:
        assert word in error["message"], error
    return error
