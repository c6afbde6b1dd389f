"""The vector-store API through the official ``openai`` SDK against uvicorn on 127.0.0.1.

The SDK builds the requests and parses the answers into its own typed models, so these tests
check the wire shapes, not hand-written JSON. Bad bodies the SDK would never send go through
httpx.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import openai
import pytest

pytest.importorskip("starlette", reason="scidx.web needs the serve extra")
pytest.importorskip("uvicorn", reason="scidx.web needs the serve extra")

from scidx.index.index import load  # noqa: E402
from scidx.web import WebSettings, create_app  # noqa: E402
from support.web_server import UvicornThread, assert_error  # noqa: E402


@pytest.fixture(scope="module")
def server(index_dir: Path) -> Iterator[UvicornThread]:
    app = create_app(
        [index_dir / "docs.scidx", index_dir / "faq.scidx"],
        WebSettings(token_env=None, max_body_bytes=4096),
    )
    with UvicornThread(app) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: UvicornThread) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(api_key="unused", base_url=server.url + "/v1", max_retries=0) as c:
        yield c


@pytest.fixture(scope="module")
def http(server: UvicornThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as c:
        yield c


def test_search_with_the_sdk(client: openai.OpenAI, index_dir: Path) -> None:
    page = client.vector_stores.search("docs", query="rotate nginx logs", max_num_results=3)
    results = list(page)
    assert 1 <= len(results) <= 3
    best = results[0]
    assert best.file_id == "ops/logs.md" and best.filename == "ops/logs.md"
    assert best.content[0].type == "text"
    assert best.content[0].text.startswith("Rotate nginx logs daily")
    assert best.attributes is not None
    assert best.attributes["anchor"] == "rotate"
    assert best.attributes["url"] == "https://docs.example.com/ops/logs/#rotate"
    assert best.attributes["section"] == "ops" and best.attributes["level"] == "2"
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    # The same ranking as the library's hybrid search.
    with load(index_dir / "docs.scidx") as idx:
        expected = idx.search("rotate nginx logs", k=3)
    assert [r.attributes["chunk_id"] for r in results if r.attributes] == [h.id for h in expected]
    assert [r.score for r in results] == pytest.approx([h.score for h in expected])


def test_query_list_threshold_and_options(client: openai.OpenAI) -> None:
    both = list(
        client.vector_stores.search(
            "docs", query=["nginx logs", "collector"], rewrite_query=True, max_num_results=5
        )
    )
    assert both[0].attributes and both[0].attributes["anchor"] == "ship"
    everything = list(client.vector_stores.search("docs", query="logs", max_num_results=50))
    assert len(everything) >= 2 and everything[0].score > everything[-1].score
    threshold = (everything[0].score + everything[-1].score) / 2
    cut = list(
        client.vector_stores.search(
            "docs",
            query="logs",
            max_num_results=50,
            ranking_options={"ranker": "none", "score_threshold": threshold},
        )
    )
    assert cut == [r for r in everything if r.score >= threshold]
    assert 0 < len(cut) < len(everything)


def test_filters(client: openai.OpenAI) -> None:
    def anchors(filters: object) -> list[str]:
        results = client.vector_stores.search(
            "docs",
            query="logs configure",
            max_num_results=10,
            filters=filters,  # type: ignore[arg-type]
        )
        return sorted(r.attributes["anchor"] for r in results if r.attributes)

    assert anchors({"type": "eq", "key": "section", "value": "ops"}) == ["cache", "rotate", "ship"]
    assert anchors({"type": "ne", "key": "section", "value": "ops"}) == ["cors"]
    assert anchors({"type": "gte", "key": "level", "value": 3}) == ["cache"]
    assert anchors({"type": "lt", "key": "level", "value": 2}) == ["cors"]
    assert anchors({"type": "in", "key": "anchor", "value": ["ship", "cors", "x"]}) == [
        "cors",
        "ship",
    ]
    assert anchors({"type": "nin", "key": "source", "value": ["ops/logs.md"]}) == [
        "cache",
        "cors",
    ]
    assert anchors(
        {
            "type": "or",
            "filters": [
                {"type": "eq", "key": "anchor", "value": "cache"},
                {
                    "type": "and",
                    "filters": [
                        {"type": "eq", "key": "section", "value": "ops"},
                        {"type": "lte", "key": "heading", "value": "Logs > Rotate"},
                    ],
                },
            ],
        }
    ) == ["cache", "rotate"]
    assert anchors({"type": "eq", "key": "missing", "value": "x"}) == []
    assert anchors({"type": "ne", "key": "missing", "value": "x"}) == []
    # k filtered results come back when that many exist, however far down the ranking.
    one = client.vector_stores.search(
        "docs",
        query="logs",
        max_num_results=1,
        filters={"type": "eq", "key": "anchor", "value": "install"},
    )
    assert [r.attributes["anchor"] for r in one if r.attributes] in (["install"], [])


def test_list_and_retrieve(client: openai.OpenAI, index_dir: Path) -> None:
    stores = list(client.vector_stores.list())
    assert sorted(s.id for s in stores) == ["docs", "faq"]
    docs = client.vector_stores.retrieve("docs")
    assert docs.object == "vector_store" and docs.status == "completed"
    assert docs.file_counts.completed == 3 and docs.file_counts.total == 3
    assert docs.usage_bytes == (index_dir / "docs.scidx").stat().st_size
    assert docs.metadata and docs.metadata["chunks"] == "5"
    assert docs.metadata["provider"] == "hashing"
    first = client.vector_stores.list(limit=1, order="asc")
    assert len(first.data) == 1 and first.has_more


def test_sdk_errors(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        client.vector_stores.search("nope", query="logs")
    assert "No vector store found with id 'nope'" in str(missing.value)
    with pytest.raises(openai.NotFoundError):
        client.vector_stores.retrieve("nope")
    with pytest.raises(openai.BadRequestError) as bad:
        client.vector_stores.search("docs", query="logs", max_num_results=0)
    assert bad.value.body and "max_num_results must be between 1 and 50" in str(bad.value.body)
    with pytest.raises(openai.BadRequestError) as unknown:
        client.vector_stores.search("docs", query="logs", extra_body={"top_k": 3})
    assert "Unrecognized request argument supplied: top_k" in str(unknown.value)
    # Writes are refused with 405 and an OpenAI error object.
    for call in (
        lambda: client.vector_stores.create(name="x"),
        lambda: client.vector_stores.delete("docs"),
        lambda: client.vector_stores.update("docs", name="y"),
        lambda: client.vector_stores.files.create("docs", file_id="file-1"),
    ):
        with pytest.raises(openai.APIStatusError) as refused:
            call()
        assert refused.value.status_code == 405
        assert "read-only" in str(refused.value)


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (b"{", 400, ("not valid JSON",)),
        (b"[1, 2]", 400, ("must be a JSON object",)),
        (b'{"query": "x", "max_num_results": NaN}', 400, ("not valid JSON",)),
        (b"\xff\xfe", 400, ("not UTF-8",)),
        (b"[" * 5000 + b"]" * 5000, 413, ("larger than 4096 bytes",)),
        (b'{"query": ' + b"[" * 1500 + b"]" * 1500 + b"}", 400, ()),
        (b'{"query": "logs", "k": 3}', 400, ("Unrecognized request argument supplied: k",)),
        (b'{"max_num_results": 3}', 400, ("query is required",)),
        (b'{"query": ""}', 400, ("query must not be empty",)),
        (b'{"query": []}', 400, ("query must be a string or an array",)),
        (b'{"query": [1]}', 400, ("query must be a string or an array",)),
        (b'{"query": "lo\\u0000gs"}', 400, ("query contains a NUL character",)),
        (b'{"query": "\\ud800"}', 400, ("query contains a lone surrogate",)),
        (b'{"query": ["ok", "\\udfff"]}', 400, ("query[1] contains a lone surrogate",)),
        (b'{"query": "x", "max_num_results": 51}', 400, ("between 1 and 50, got 51",)),
        (b'{"query": "x", "max_num_results": -1}', 400, ("between 1 and 50",)),
        (b'{"query": "x", "max_num_results": 1e9}', 400, ("must be an integer",)),
        (b'{"query": "x", "max_num_results": true}', 400, ("must be an integer",)),
        (b'{"query": "x", "ranking_options": {"score_threshold": 2}}', 400, ("between 0 and 1",)),
        (b'{"query": "x", "ranking_options": {"ranker": "best"}}', 400, ("ranker must be",)),
        (b'{"query": "x", "ranking_options": {"boost": 1}}', 400, ("ranking_options.boost",)),
        (b'{"query": "x", "rewrite_query": "yes"}', 400, ("rewrite_query must be a boolean",)),
        (b'{"query": "x", "filters": {"type": "eq", "key": "a"}}', 400, ("value is required",)),
        (b'{"query": "x", "filters": {"type": "like", "key": "a", "value": 1}}', 400, ("type",)),
        (b'{"query": "x", "filters": {"type": "in", "key": "a", "value": 1}}', 400, ("array",)),
        (b'{"query": "x", "filters": {"type": "and", "filters": []}}', 400, ("non-empty",)),
        (b'{"query": "x", "filters": {"type": "eq", "key": "a", "value": 1, "z": 0}}', 400, ()),
    ],
)
def test_bad_search_bodies(
    http: httpx.Client, body: bytes, status: int, words: tuple[str, ...]
) -> None:
    response = http.post(
        "/v1/vector_stores/docs/search", content=body, headers={"Content-Type": "application/json"}
    )
    assert_error(response, status, *words)


def test_deeply_nested_filters_are_refused(http: httpx.Client) -> None:
    node: dict[str, object] = {"type": "eq", "key": "a", "value": 1}
    for _ in range(20):
        node = {"type": "and", "filters": [node]}
    response = http.post("/v1/vector_stores/docs/search", json={"query": "x", "filters": node})
    assert_error(response, 400, "nested at most 8 deep")


def test_oversized_chunked_body(http: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(100):
            yield b"x" * 100
        yield b'"}'

    response = http.post("/v1/vector_stores/docs/search", content=chunks())
    assert_error(response, 413, "larger than 4096 bytes")


def test_embeddings_for_local_providers(client: openai.OpenAI, index_dir: Path) -> None:
    with load(index_dir / "docs.scidx") as idx:
        expected = idx.embed_query("rotate logs")
        model = idx.stamp["model"]
    got = client.embeddings.create(model="docs", input=["rotate logs", "cache"])
    assert len(got.data) == 2 and got.data[1].index == 1
    assert np.allclose(got.data[0].embedding, expected, atol=1e-6)
    assert got.model == model and got.usage.prompt_tokens == 3
    by_model = client.embeddings.create(model=model, input="rotate logs")
    assert np.allclose(by_model.data[0].embedding, expected, atol=1e-6)
    packed = client.embeddings.create(model="docs", input="rotate logs", encoding_format="base64")
    raw = packed.data[0].embedding
    vector = np.frombuffer(base64.b64decode(raw), dtype="<f4") if isinstance(raw, str) else raw
    assert np.allclose(vector, expected, atol=1e-6)
    with pytest.raises(openai.NotFoundError) as unknown:
        client.embeddings.create(model="text-embedding-3-small", input="x")
    assert "does not exist or cannot embed here" in str(unknown.value)
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model="docs", input="x", dimensions=3)
    with pytest.raises(openai.BadRequestError) as tokens:
        client.embeddings.create(model="docs", input=[[1, 2, 3]])
    assert "token arrays are not supported" in str(tokens.value)
