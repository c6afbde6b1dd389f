"""Every outbound HTTP client gives up in time, keeps its key at home, and refuses bad replies.

Issue 39 (H1, H2, H3): the ``http`` reranker, chat ``complete()``, the ``llm`` query rewriter and
the OpenAI embedder, each against :class:`~support.hostile_server.HostileServer` on loopback:
a server that drips one body byte every 0.5 s (the call must end within ``timeout`` x attempts),
one that redirects to another origin (nothing may reach it), and ones whose replies nest
200,000 brackets deep or break HTTP (a scidx error, never ``RecursionError`` or an
``http.client`` exception).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scidx.embed.openai import OpenAIEmbedder
from scidx.errors import ChatProviderError, ProviderError, RerankError, ScidxError
from scidx.rag.chat import complete
from scidx.rag.rewriters import LLMRewriter
from scidx.rerank.http import HttpReranker
from support.cli import run
from support.hostile_server import Hostile, HostileServer

KEY = "sk-test-hostile-0123456789"
TIMEOUT = 0.6  # each attempt's deadline: small so a test takes about two seconds
RETRIES = 1  # so each client makes two attempts

Client = Callable[[str], object]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("TEI_API_KEY", KEY)
    for name in ("OPENAI_BASE_URL", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)


def _rerank(base: str) -> object:
    reranker = HttpReranker(
        "tei", base_url=base, timeout=TIMEOUT, max_retries=RETRIES, backoff_base=0.0
    )
    return reranker.score_documents("cache", ["the cache", "a disk"])


def _chat(base: str) -> object:
    messages = [{"role": "user", "content": "hi"}]
    return complete(messages, base_url=base + "/v1", timeout=TIMEOUT, max_retries=RETRIES)


def _rewrite(base: str) -> object:
    rewriter = LLMRewriter(base_url=base + "/v1", timeout=TIMEOUT, max_retries=RETRIES)
    return rewriter.rewrite("how do I cache?")


def _embed(base: str) -> object:
    embedder = OpenAIEmbedder(
        "text-embedding-3-small",
        8,
        base_url=base + "/v1",
        timeout=TIMEOUT,
        max_retries=RETRIES,
        backoff_base=0.0,
        backoff_max=0.0,
    )
    with embedder:
        return embedder.embed_query("how do I cache?")


CLIENTS: dict[str, tuple[Client, type[ScidxError]]] = {
    "rerank": (_rerank, RerankError),
    "chat": (_chat, ChatProviderError),
    "rewrite": (_rewrite, ChatProviderError),
    "embed": (_embed, ProviderError),
}


@pytest.fixture(params=sorted(CLIENTS))
def client(request: pytest.FixtureRequest) -> tuple[Client, type[ScidxError]]:
    return CLIENTS[request.param]


# A valid-looking JSON reply long enough to drip for far longer than the deadline.
DRIPPED = json.dumps({"results": [], "pad": "x" * 200}).encode()


def test_a_dripping_reply_ends_within_timeout_times_attempts(
    client: tuple[Client, type[ScidxError]],
) -> None:
    call, error = client
    with HostileServer(Hostile.drip(DRIPPED, 0.5)) as server:
        start = time.monotonic()
        with pytest.raises(error) as info:
            call(server.base_url)
        elapsed = time.monotonic() - start
    attempts = RETRIES + 1
    assert len(server.seen) == attempts
    # The bound is the deadline of every attempt; the margin covers backoff and thread start-up.
    assert elapsed < TIMEOUT * attempts + 2.5, elapsed
    assert "within 0.6 s" in str(info.value)
    assert KEY not in str(info.value)


@pytest.fixture
def elsewhere() -> Iterator[HostileServer]:
    """The other origin a redirect points to: it must never be sent anything."""
    with HostileServer(Hostile.ok(b"[]")) as server:
        yield server


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_to_another_origin_is_not_followed(
    client: tuple[Client, type[ScidxError]], elsewhere: HostileServer, status: int
) -> None:
    call, error = client
    target = f"http://localhost:{elsewhere.port}/steal"
    with HostileServer(Hostile.redirect(target, status)) as server:
        with pytest.raises(error) as info:
            call(server.base_url)
    assert server.seen and server.seen[0].headers.get("authorization") == f"Bearer {KEY}"
    assert elsewhere.seen == []  # neither the key nor the request body went there
    message = str(info.value)
    assert f"HTTP {status} redirect to http://localhost:{elsewhere.port}/steal" in message
    assert "redirects are not followed" in message
    assert len(server.seen) == 1  # a redirect is an answer, not a reason to retry


NESTED = b"[" * 200_000
BROKEN: dict[str, tuple[Hostile, str]] = {
    "nested": (Hostile.ok(NESTED), "nests 200000 levels deep, over the limit of 128"),
    "status line": (Hostile(b"HTTP/1.1 abc nope\r\n\r\n"), "not an HTTP status line"),
    "150 headers": (
        Hostile(
            b"HTTP/1.1 200 OK\r\n"
            + b"".join(b"X-Filler-%d: y\r\n" % i for i in range(150))
            + b"Content-Length: 2\r\n\r\n[]"
        ),
        "got more than 100 headers",
    ),
    "200 KB header line": (
        Hostile(
            b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 200_000 + b"\r\nContent-Length: 2\r\n\r\n[]"
        ),
        "longer than 65536 bytes",
    ),
    "truncated body": (
        Hostile(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n[1, 2"),
        "the reply ended early (5 bytes of the body arrived)",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_malformed_reply_is_a_scidx_error(
    client: tuple[Client, type[ScidxError]], case: str
) -> None:
    call, error = client
    answer, needle = BROKEN[case]
    with HostileServer(answer) as server:
        with pytest.raises(error) as info:
            call(server.base_url)
    assert needle in str(info.value)
    assert info.value.__cause__ is None or isinstance(info.value.__cause__, ScidxError)


@pytest.fixture
def keyword_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\n## Cache\n\nThe cache lives on disk.\n")
    config = tmp_path / "staticcorpus.json"
    config.write_text(json.dumps({"include": ["docs/*.md"], "output": "docs.scidx"}))
    assert run(["pack-docs", "--config", str(config), "--quiet"], capsys)[0] == 0
    return tmp_path / "docs.scidx"


@pytest.mark.parametrize("case", ["nested", "status line", "200 KB header line"])
def test_the_cli_reports_a_malformed_rerank_reply_in_one_line(
    keyword_index: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    answer, needle = BROKEN[case]
    with HostileServer(answer) as server:
        argv = ["search", str(keyword_index), "cache", "--mode", "keyword", "--rerank", "http"]
        for option in ("api=tei", f"base_url={server.base_url}", "timeout=2", "max_retries=0"):
            argv += ["--rerank-option", option]
        code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: http:tei at ") and needle in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
