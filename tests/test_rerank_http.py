"""The ``http`` reranker against loopback servers speaking the Cohere, Jina, Voyage and TEI APIs.

The server answers each API's documented request shape (and refuses anything else); the vendors'
official SDKs (``cohere``, ``voyageai``) are run against the same server first, so the server's
shapes are the ones those clients really send and parse. Then scidx's client (stdlib only) is
checked against it: scores, the key from the environment, retries and bad answers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import scidx
from scidx.errors import ConfigError, RerankError
from scidx.index.params import SearchParams
from scidx.rerank.http import HttpReranker
from scidx.rerank.registry import load_reranker

KEY = "sk-test-secret-0123456789"


def relevance(query: str, text: str) -> float:
    words = set(query.lower().split())
    return round(sum(w in words for w in text.lower().split()) / (1 + len(text.split())), 6)


class RerankServer(ThreadingHTTPServer):
    """Records requests; answers scripted failures first, then each API's real answer."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[dict[str, Any]] = []
        self.script: list[tuple[int, dict[str, str], Any]] = []  # (status, headers, body)
        self.reply: Any = None  # replaces the computed answer when set
        self.lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: RerankServer

    def log_message(self, *args: object) -> None:
        return None

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        auth = self.headers.get("Authorization", "")
        with self.server.lock:
            self.server.requests.append({"path": self.path, "body": body, "auth": auth})
            scripted = self.server.script.pop(0) if self.server.script else None
        if scripted is not None:
            status, headers, payload = scripted
            self._send(status, payload, headers)
            return
        api = self._api(body)
        if api is None:
            self._send(400, {"message": f"unexpected request to {self.path}: {sorted(body)}"})
            return
        if api != "tei" and auth != f"Bearer {KEY}":
            self._send(401, {"message": f"invalid api token {auth}"})
            return
        docs = body["texts"] if api == "tei" else body["documents"]
        scored = sorted(
            ((relevance(body["query"], d), i) for i, d in enumerate(docs)), key=lambda t: -t[0]
        )
        if self.server.reply is not None:
            self._send(200, self.server.reply)
            return
        if api == "tei":
            self._send(200, [{"index": i, "score": s} for s, i in scored])
        elif api == "voyage":
            data = [{"index": i, "relevance_score": s} for s, i in scored[: body["top_k"]]]
            self._send(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body["model"],
                    "usage": {"total_tokens": 7},
                },
            )
        else:
            results = [{"index": i, "relevance_score": s} for s, i in scored[: body["top_n"]]]
            self._send(
                200, {"id": "r1", "results": results, "meta": {"api_version": {"version": "2"}}}
            )

    def _api(self, body: dict[str, Any]) -> str | None:
        """Which documented request shape this is (None: none of them)."""
        if self.path == "/v2/rerank" and {"model", "query", "documents"} <= set(body):
            return "cohere"
        if self.path == "/v1/rerank" and "top_k" in body and "documents" in body:
            return "voyage"
        if self.path == "/v1/rerank" and "documents" in body:
            return "jina"
        if self.path == "/rerank" and {"query", "texts"} <= set(body):
            return "tei"
        return None


@pytest.fixture
def server() -> Iterator[RerankServer]:
    srv = RerankServer()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("COHERE_API_KEY", "JINA_API_KEY", "VOYAGE_API_KEY", "TEI_API_KEY", "CO_API_URL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)


DOCS = ["the cache settings", "retry the server", "cache cache disk", "nothing here"]
QUERY = "cache disk"


def test_cohere_sdk_and_scidx_agree(server: RerankServer, monkeypatch: pytest.MonkeyPatch) -> None:
    cohere = pytest.importorskip("cohere")
    client = cohere.ClientV2(api_key=KEY, base_url=server.base, max_retries=0)
    sdk = client.rerank(model="rerank-v3.5", query=QUERY, documents=DOCS, top_n=len(DOCS))
    by_sdk = {r.index: r.relevance_score for r in sdk.results}
    sent_by_sdk = server.requests[-1]
    monkeypatch.setenv("COHERE_API_KEY", KEY)
    ours = HttpReranker("cohere", "rerank-v3.5", base_url=server.base)
    scores = ours.score_documents(QUERY, DOCS)
    assert scores == [by_sdk[i] for i in range(len(DOCS))]
    assert scores == [relevance(QUERY, d) for d in DOCS]
    mine = server.requests[-1]
    assert mine["path"] == sent_by_sdk["path"] == "/v2/rerank"
    assert mine["auth"] == sent_by_sdk["auth"]
    for key in ("model", "query", "documents", "top_n"):
        assert mine["body"][key] == sent_by_sdk["body"][key]


def test_voyage_sdk_and_scidx_agree(server: RerankServer, monkeypatch: pytest.MonkeyPatch) -> None:
    voyageai = pytest.importorskip("voyageai")
    client = voyageai.Client(api_key=KEY, base_url=f"{server.base}/v1", max_retries=0)
    sdk = client.rerank(QUERY, DOCS, model="rerank-2.5", top_k=len(DOCS))
    by_sdk = {r.index: r.relevance_score for r in sdk.results}
    sent_by_sdk = server.requests[-1]
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    ours = HttpReranker("voyage", "rerank-2.5", base_url=f"{server.base}/v1")
    assert ours.score_documents(QUERY, DOCS) == [by_sdk[i] for i in range(len(DOCS))]
    mine = server.requests[-1]
    assert mine["path"] == sent_by_sdk["path"] == "/v1/rerank"
    for key in ("model", "query", "documents", "top_k"):
        assert mine["body"][key] == sent_by_sdk["body"][key]


def test_jina_and_tei(server: RerankServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JINA_API_KEY", KEY)
    jina = HttpReranker("jina", "jina-reranker-v2-base-multilingual", base_url=f"{server.base}/v1")
    assert jina.score_documents(QUERY, DOCS) == [relevance(QUERY, d) for d in DOCS]
    body = server.requests[-1]["body"]
    assert body["return_documents"] is False and body["top_n"] == len(DOCS)
    tei = HttpReranker("tei", base_url=server.base)  # no key needed for a private TEI server
    assert tei.score_documents(QUERY, DOCS) == [relevance(QUERY, d) for d in DOCS]
    assert server.requests[-1]["body"] == {"query": QUERY, "texts": DOCS, "truncate": True}
    assert server.requests[-1]["auth"] == ""


def test_search_through_the_registry(
    server: RerankServer, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "h.scidx"
    scidx.pack_records(
        [{"id": f"d{i}", "title": "", "text": t} for i, t in enumerate(DOCS)], path, dimensions=16
    )
    reranker = load_reranker("http", None, api="tei", base_url=server.base, max_retries="0")
    with scidx.load(path) as idx:
        hits = idx.search_with(
            "cache", SearchParams(k=2, group=None, mode="keyword", rerank=reranker)
        )
        candidates = idx.search_with("cache", SearchParams(k=20, group=None, mode="keyword"))
    sent = server.requests[-1]["body"]["texts"]
    assert sent == [h.text for h in candidates]
    best = sorted(candidates, key=lambda h: -relevance("cache", h.text))[:2]
    assert [h.id for h in hits] == [h.id for h in best]


def test_missing_key_and_the_key_never_shows(
    server: RerankServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = HttpReranker("cohere", "m", base_url=server.base, max_retries=0)
    with pytest.raises(RerankError, match="set the COHERE_API_KEY environment variable"):
        ours.score_documents(QUERY, DOCS)
    assert server.requests == []  # nothing was sent
    monkeypatch.setenv("COHERE_API_KEY", "sk-wrong-key-987654")
    with pytest.raises(RerankError) as info:
        ours.score_documents(QUERY, DOCS)
    assert "HTTP 401" in str(info.value)
    assert "sk-wrong-key-987654" not in str(info.value)  # the server echoed it; scrubbed
    assert "<redacted>" in str(info.value)
    assert len(server.requests) == 1  # 401 is not retried
    assert KEY not in repr(ours) and "sk-wrong" not in repr(ours)
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    custom = HttpReranker("voyage", "m", base_url=server.base, key_env="MY_RERANK_KEY")
    with pytest.raises(RerankError, match="set the MY_RERANK_KEY environment variable"):
        custom.score_documents(QUERY, DOCS)


def test_retries_429_and_5xx_honouring_retry_after(server: RerankServer) -> None:
    server.script = [
        (429, {"Retry-After": "0.05"}, {"message": "slow down"}),
        (503, {}, {"message": "busy"}),
    ]
    ours = HttpReranker("tei", base_url=server.base, backoff_base=0.01, max_retries=2)
    assert ours.score_documents(QUERY, DOCS) == [relevance(QUERY, d) for d in DOCS]
    assert ours.requests == 3
    server.script = [(500, {}, {"message": "down"})] * 3
    with pytest.raises(RerankError, match=r"failed after 3 attempts: HTTP 500"):
        ours.score_documents(QUERY, DOCS)


def test_connection_errors_are_retried_then_reported() -> None:
    ours = HttpReranker("tei", base_url="http://127.0.0.1:9", backoff_base=0.0, max_retries=1)
    with pytest.raises(RerankError, match="after 2 attempts: connection error"):
        ours.score_documents(QUERY, DOCS)
    assert ours.requests == 2


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        ([{"index": 0, "score": 1.0}], "3 of 4 candidates have no score"),
        ([{"index": 9, "score": 1.0}], "a result has index 9; expected 0..3"),
        ([{"index": 0, "score": "high"}], "result 0 has no numeric 'score'"),
        ([{"index": i, "score": 1.0} for i in (0, 0, 1, 2)], "index 0 is returned twice"),
        ({"results": []}, "no result list"),
    ],
)
def test_bad_answers_are_rerank_errors(server: RerankServer, reply: Any, needle: str) -> None:
    server.reply = reply
    ours = HttpReranker("tei", base_url=server.base, max_retries=3)
    with pytest.raises(RerankError, match="invalid response") as info:
        ours.score_documents(QUERY, DOCS)
    assert needle in str(info.value)
    assert ours.requests == 1  # a malformed answer is not retried


def test_bad_settings() -> None:
    with pytest.raises(ConfigError, match="unknown rerank api 'bing'"):
        HttpReranker("bing", "m")
    with pytest.raises(ConfigError, match="needs a model"):
        HttpReranker("cohere")
    with pytest.raises(ConfigError, match="needs a base URL"):
        HttpReranker("tei")
    with pytest.raises(ConfigError, match="needs an api"):
        load_reranker("http", "m")
    with pytest.raises(ConfigError, match="timeout must be a number"):
        load_reranker("http", "m", api="cohere", timeout="soon")
