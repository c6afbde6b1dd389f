"""Under ``serve``, a stuck embedding endpoint never blocks keyword searches (issue 39, H1).

An index packed with the OpenAI provider (the fake server on loopback) is served while its
query embeddings go to a server that sends headers and then one byte every half second. Hybrid
requests get ``503 query_embedding_timeout`` after ``embed_wait``; keyword requests, which need
no embedding, answer at once the whole time, with every search slot free for them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="scidx.web needs the serve extra")

import httpx  # noqa: E402

from scidx.errors import ConfigError  # noqa: E402
from scidx.web import IndexSet, WebSettings, create_app  # noqa: E402
from support.cli import run  # noqa: E402
from support.hostile_server import Hostile, HostileServer  # noqa: E402
from support.openai_server import FakeOpenAIServer  # noqa: E402
from support.web_server import UvicornThread  # noqa: E402

KEY = "sk-test-semantic-0123456789"
DOC = "# Guide\n\n## Logs\n\nRead the logs first, then open an issue.\n\n## Cache\n\nThe cache.\n"


@pytest.fixture
def openai_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(DOC)
    config = tmp_path / "staticcorpus.json"
    with FakeOpenAIServer() as fake:
        config.write_text(
            json.dumps(
                {
                    "include": ["docs/*.md"],
                    "output": "docs.scidx",
                    "embeddingProvider": "openai",
                    "model": "text-embedding-3-small",
                    "dimensions": 16,
                    "baseUrl": fake.base_url,
                }
            )
        )
        assert run(["pack-docs", "--config", str(config), "--quiet"], capsys)[0] == 0
    return tmp_path / "docs.scidx"


@pytest.fixture
def served(openai_index: Path) -> Iterator[tuple[str, HostileServer]]:
    dripping = json.dumps({"data": [], "pad": "x" * 400}).encode()
    with HostileServer(Hostile.drip(dripping, 0.5)) as endpoint:
        indexes = IndexSet(
            {"docs": openai_index},
            embedder_options={"base_url": endpoint.base_url + "/v1", "max_retries": 0},
        )
        settings = WebSettings(token_env=None, search_threads=2, embed_threads=2, embed_wait=2.0)
        app = create_app(indexes, settings)
        with UvicornThread(app) as server:
            yield server.url, endpoint
        indexes.close()


def _get(url: str, results: list[tuple[float, httpx.Response]]) -> None:
    start = time.monotonic()
    response = httpx.get(url, timeout=20)
    results.append((time.monotonic() - start, response))


def test_keyword_searches_go_on_while_the_embedding_endpoint_drips(
    served: tuple[str, HostileServer],
) -> None:
    url, endpoint = served
    assert httpx.get(f"{url}/search?q=logs&mode=keyword", timeout=20).status_code == 200
    hybrid: list[tuple[float, httpx.Response]] = []
    threads = [
        threading.Thread(target=_get, args=(f"{url}/search?q=logs+{i}&mode=hybrid", hybrid))
        for i in range(6)  # more than the search slots and the embedding threads together
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.3)  # the hybrid requests are now waiting on the dripping endpoint
    for _ in range(3):
        start = time.monotonic()
        response = httpx.get(f"{url}/search?q=logs&mode=keyword", timeout=20)
        assert response.status_code == 200
        assert response.json()["hits"][0]["anchor"] == "logs"
        # Well under embed_wait: the keyword search did not wait for the hybrid ones to give up.
        assert time.monotonic() - start < 1.5
    for thread in threads:
        thread.join(10)
    assert len(hybrid) == 6
    for elapsed, response in hybrid:
        assert response.status_code == 503
        error: dict[str, Any] = response.json()["error"]
        assert error["code"] == "query_embedding_timeout"
        assert "semantic part of this search is unavailable" in error["message"]
        assert elapsed < 6.0  # embed_wait (2 s) and some scheduling, never the drip's ~3 minutes
    # Only two embedding threads ever ran, however many requests asked.
    assert 1 <= len(endpoint.seen) <= 2


def test_embedding_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="embed_threads must be in 1..256"):
        WebSettings(embed_threads=0).validate()
    with pytest.raises(ConfigError, match="embed_wait must be in"):
        WebSettings(embed_wait=float("nan")).validate()


def test_the_page_says_the_semantic_part_is_unavailable(
    served: tuple[str, HostileServer], tmp_path: Path
) -> None:
    """The page's hybrid search gets the 503, shows keyword matches and says what is missing."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (test extra)")
    from support.browser import FLAGS, chromium

    url, _ = served
    executable = chromium()
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=executable,
            headless=True,
            args=FLAGS,
        )
        try:
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url + "/")
            page.locator("#q").fill("logs")
            page.wait_for_function(
                "(text) => document.getElementById('status').textContent.includes(text)",
                arg="Semantic search is unavailable right now",
                timeout=15_000,
            )
            assert "showing keyword matches only" in page.locator("#status").inner_text()
            assert page.locator("section.page").count() >= 1
            assert "logs" in [m.lower() for m in page.locator("mark").all_inner_texts()]
        finally:
            context.close()
    assert errors == []
