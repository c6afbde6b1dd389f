"""The query-rewrite stage: callables and plugins, the LLM rewriter (real openai SDK against a
loopback chat server), the stage order in traces, and ``query --rewrite ... --show-prompt``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import scidx
from scidx.errors import ChatMissingKeyError, ConfigError, QueryRewriteError
from scidx.index.retrieval import IndexRetriever, RetrievalRequest, StageEvent
from scidx.rag.pipeline import Pipeline, TraceRecord, query_hash
from scidx.rag.rewrite import MAX_REWRITE_CHARS, Rewrite, checked_rewrite
from scidx.rag.rewriters import LLMRewriter, load_rewriter
from support.chat_server import ChatServer, Reply
from support.cli import run as _run

KEY = "sk-test-rewrite-0123456789abcdef"
RECORDS = [
    {"id": "cache", "title": "Cache", "text": "Set cache_ttl to keep responses for a while."},
    {"id": "retry", "title": "Retries", "text": "The client retries failed requests three times."},
    {"id": "auth", "title": "Auth", "text": "Tokens are read from the environment."},
]


@pytest.fixture(scope="module")
def index_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rewrite") / "rw.scidx"
    scidx.pack_records(RECORDS, path, dimensions=64)
    return path


@pytest.fixture(scope="module")
def index(index_path: Path) -> Iterator[scidx.Index]:
    with scidx.load(index_path) as idx:
        yield idx


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as s:
        yield s


def test_retrieval_searches_the_rewrite_and_the_prompt_keeps_the_question(
    index: scidx.Index,
) -> None:
    events: list[StageEvent] = []
    traces: list[TraceRecord] = []

    class Keep:
        def record(self, trace: TraceRecord) -> None:
            traces.append(trace)

    def expand(question: str) -> Rewrite:
        return Rewrite("cache_ttl responses", text_query="cache_ttl")

    pipe = Pipeline(IndexRetriever(index, name="rw"), tracer=Keep(), rewriter=expand)
    question = "how long are things kept?"  # no word of it is in the index
    assert Pipeline(IndexRetriever(index)).prepare(question, mode="keyword").matches == []
    prepared = pipe.prepare(RetrievalRequest(question, k=2, on_progress=events.append))
    assert prepared.matches[0].id == "cache"
    assert prepared.rewrite == Rewrite("cache_ttl responses", "cache_ttl")
    assert f"Question: {question}" in prepared.prompt.user
    assert [e.stage for e in events] == [
        "query_rewrite",
        "embedding",
        "retrieval",
        "fusion",
        "context",
    ]
    assert traces[0].query_sha256 == query_hash(question)  # the user's question, not the rewrite
    assert "query_rewrite" in traces[0].latency_ms
    assert prepared.to_dict()["rewrite"] == {
        "query": "cache_ttl responses",
        "textQuery": "cache_ttl",
    }
    plain = Pipeline(IndexRetriever(index)).prepare("cache", k=1)
    assert plain.rewrite is None and "query_rewrite" not in plain.trace.latency_ms
    assert "rewrite" not in plain.to_dict()


def test_result_shapes_are_normalised() -> None:
    assert checked_rewrite(lambda q: "  cache \n ttl ", "x") == Rewrite("cache ttl")
    assert checked_rewrite(lambda q: ("a", "b"), "x") == Rewrite("a", "b")
    assert checked_rewrite(lambda q: ("", None), "the  question") == Rewrite("the question")
    long = checked_rewrite(lambda q: "w " * 5000, "x")
    assert len(long.query) == MAX_REWRITE_CHARS

    class Obj:
        name = "obj"

        def rewrite(self, question: str) -> str:
            return question.upper()

    assert checked_rewrite(Obj(), "cache") == Rewrite("CACHE")


def test_failures_are_query_rewrite_errors(index: scidx.Index) -> None:
    def broken(question: str) -> str:
        raise KeyError("no such prompt")

    with pytest.raises(QueryRewriteError, match="'broken' failed: KeyError"):
        Pipeline(IndexRetriever(index), rewriter=broken).prepare("cache")
    with pytest.raises(QueryRewriteError, match="returned int for the semantic query"):
        checked_rewrite(lambda q: 42, "cache")
    with pytest.raises(ConfigError, match="neither callable nor has a rewrite"):
        checked_rewrite(object(), "cache")


def test_llm_rewriter_through_the_chat_provider(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.default = Reply(answer='Here: {"query": "cache time to live", "keywords": "cache_ttl"}')
    rewriter = LLMRewriter("tiny-chat", base_url=server.base_url)
    assert checked_rewrite(rewriter, "how long is stuff kept") == Rewrite(
        "cache time to live", "cache_ttl"
    )
    sent = server.requests[-1].body
    assert sent["model"] == "tiny-chat"
    assert sent["messages"][0]["role"] == "system" and "JSON" in sent["messages"][0]["content"]
    assert sent["messages"][1] == {"role": "user", "content": "how long is stuff kept"}
    server.default = Reply(answer="cache expiry settings")  # not JSON: the whole reply
    assert checked_rewrite(rewriter, "q") == Rewrite("cache expiry settings")
    server.default = Reply(answer='{"query": "a", "keywords": ["b", "c"]}')
    assert checked_rewrite(rewriter, "q") == Rewrite("a", "b c")
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ChatMissingKeyError):
        checked_rewrite(rewriter, "q")


def test_plugins_by_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    info = site / "scidx_rw-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: scidx-rw\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[scidx.query_rewriters]\nsynonyms = scidx_rw\n")
    (site / "scidx_rw.py").write_text(
        "def from_options(model, **options):\n"
        "    table = {'ttl': 'time to live'}\n"
        "    def rewrite(q):\n"
        "        return ' '.join(table.get(w, w) for w in q.split()), q\n"
        "    rewrite.name = 'synonyms'\n"
        "    return rewrite\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "scidx_rw", raising=False)
    rewriter = load_rewriter("synonyms")
    assert checked_rewrite(rewriter, "cache ttl") == Rewrite("cache time to live", "cache ttl")
    with pytest.raises(ConfigError, match="no query rewriter named 'nope'"):
        load_rewriter("nope")


def test_cli_query_shows_the_rewrite(
    index_path: Path,
    server: ChatServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.default = Reply(answer='{"query": "cache_ttl responses", "keywords": "cache_ttl"}')
    base = ["query", str(index_path), "how long are things kept?", "--rewrite", "llm"]
    opts = ["--rewrite-option", f"base_url={server.base_url}", "--rewrite-model", "tiny-chat"]
    code, out, err = _run([*base, *opts, "--show-prompt"], capsys)
    assert code == 0, err
    assert "--- query rewrite (" in out
    assert "semantic: cache_ttl responses" in out and "lexical:  cache_ttl" in out
    assert "Question: how long are things kept?" in out
    code, out, err = _run([*base, *opts, "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["rewrite"] == {"query": "cache_ttl responses", "textQuery": "cache_ttl"}
    assert doc["matches"][0]["id"] == "cache"
    assert "query_rewrite" in doc["trace"]["latencyMs"]
    monkeypatch.delenv("OPENAI_API_KEY")
    code, out, err = _run([*base, *opts], capsys)
    assert code == 2 and "OPENAI_API_KEY is not set" in err and "Traceback" not in err
    code, out, err = _run(["query", str(index_path), "q", "--rewrite-model", "m"], capsys)
    assert code == 1 and "need --rewrite NAME" in err
