"""Retriever protocol, the Index adapter, multi-index fusion, progress stages and tracing."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from scidx.errors import ConfigError, OutputError, QueryError
from scidx.index.index import Index, load_bytes
from scidx.index.retrieval import (
    STAGE_CONTEXT,
    STAGE_EMBEDDING,
    STAGE_FUSION,
    STAGE_RETRIEVAL,
    IndexRetriever,
    Match,
    RetrievalRequest,
    Retriever,
    StageEvent,
)
from scidx.pack.packer import pack_records
from scidx.rag.pipeline import (
    RRF_K,
    JsonlTracer,
    MultiIndexRetriever,
    NullTracer,
    Pipeline,
    TraceRecord,
    query_hash,
)

DOCS = [
    ("cache.md", "configure-the-cache", ["Cache", "Configure the cache"],
     "Set cache_ttl to keep responses longer. The cache lives in memory."),
    ("cache.md", "clear-the-cache", ["Cache", "Clear the cache"],
     "Run the clear command to empty the cache at once."),
    ("cors.md", "enable-cors", ["CORS", "Enable CORS"],
     "Allow other origins with allow_origins; browsers then accept the responses."),
    ("auth.md", "tokens", ["Authentication", "Tokens"],
     "Send an API token in the Authorization header with every request."),
    ("deploy.md", "docker", ["Deploy", "Docker"],
     "Build the image and run the container with the config mounted read-only."),
]  # fmt: skip


def make_index(prefix: str = "", url_template: str | None = None) -> Index:
    records = [
        {
            "id": f"{prefix}{src}:{anchor}:0",
            "text": text,
            "title": heads[0],
            "source": prefix + src,
            "anchor": anchor,
            "headingPath": heads,
        }
        for src, anchor, heads, text in DOCS
    ]
    result = pack_records(records, None, use_cache=False, url_template=url_template)
    assert result.data is not None
    return load_bytes(result.data, source=f"{prefix or 'docs'}.scidx")


@pytest.fixture
def index() -> Iterator[Index]:
    idx = make_index()
    yield idx
    idx.close()


def events_of(request_kwargs: dict[str, Any], retriever: Retriever) -> list[StageEvent]:
    events: list[StageEvent] = []
    retriever.retrieve(RetrievalRequest(on_progress=events.append, **request_kwargs))
    return events


# ---------------------------------------------------------------------------------------------
# IndexRetriever


def test_index_retriever_implements_the_protocol(index: Index) -> None:
    retriever = IndexRetriever(index)
    assert isinstance(retriever, Retriever)
    assert retriever.name == "docs.scidx"
    matches = retriever.retrieve(RetrievalRequest("how long does the cache keep responses", k=2))
    assert [m.anchor for m in matches][0] == "configure-the-cache"
    assert all(m.retriever == "docs.scidx" for m in matches)
    assert matches[0].link == "cache.md#configure-the-cache"
    assert matches[0].heading == "Cache > Configure the cache"


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "vector"])
def test_results_equal_index_search(index: Index, mode: str) -> None:
    q = "clear the cache"
    got = IndexRetriever(index).retrieve(RetrievalRequest(q, k=3, mode=mode))
    want = index.search(q, k=3, mode=mode)
    assert [(m.id, m.score) for m in got] == [(h.id, h.score) for h in want]


def test_keyword_mode_reports_no_embedding_stage(index: Index) -> None:
    events = events_of({"query": "cache", "mode": "keyword"}, IndexRetriever(index))
    assert [e.stage for e in events] == [STAGE_RETRIEVAL]
    assert events[0].count == 2 and events[0].seconds >= 0


def test_hybrid_mode_reports_embedding_retrieval_fusion(index: Index) -> None:
    events = events_of({"query": "cache", "mode": "hybrid"}, IndexRetriever(index))
    assert [e.stage for e in events] == [STAGE_EMBEDDING, STAGE_RETRIEVAL, STAGE_FUSION]
    assert all(e.retriever == "docs.scidx" for e in events)


def test_vector_mode_reports_embedding_and_retrieval(index: Index) -> None:
    events = events_of({"query": "cache", "mode": "vector"}, IndexRetriever(index))
    assert [e.stage for e in events] == [STAGE_EMBEDDING, STAGE_RETRIEVAL]


def test_empty_text_query_skips_the_keyword_leg(index: Index) -> None:
    r = IndexRetriever(index)
    q = "how long does the cache keep responses"
    hybrid = r.retrieve(RetrievalRequest(q, k=3, text_query=""))
    vector = r.retrieve(RetrievalRequest(q, k=3, mode="vector"))
    assert [(m.id, m.score) for m in hybrid] == [(m.id, m.score) for m in vector]
    assert r.retrieve(RetrievalRequest(q, k=3, mode="keyword", text_query="")) == []


def test_text_query_overrides_the_keyword_leg(index: Index) -> None:
    r = IndexRetriever(index)
    got = r.retrieve(
        RetrievalRequest("a question about nothing", mode="keyword", text_query="docker")
    )
    assert [m.anchor for m in got] == ["docker"]
    # hybrid: keyword leg on the override, vector leg on the question, fused by the index
    q, lexical = "how do browsers accept other origins", "allow_origins"
    got = r.retrieve(RetrievalRequest(q, k=3, text_query=lexical))
    want = index.search(lexical, k=3, query_vector=index.embed_query(q))
    assert [(m.id, m.score) for m in got] == [(h.id, h.score) for h in want]
    events = events_of({"query": q, "text_query": lexical}, r)
    assert [e.stage for e in events] == [STAGE_EMBEDDING, STAGE_RETRIEVAL, STAGE_FUSION]


def test_min_score_is_applied_after_counting_candidates(index: Index) -> None:
    r = IndexRetriever(index)
    events: list[StageEvent] = []
    all_matches = r.retrieve(RetrievalRequest("cache", k=5, mode="keyword"))
    cut = all_matches[0].score
    kept = r.retrieve(
        RetrievalRequest("cache", k=5, mode="keyword", min_score=cut, on_progress=events.append)
    )
    assert len(kept) == 1 < len(all_matches)
    assert events[0].count == len(all_matches)


def test_filters_are_passed_to_the_index(index: Index) -> None:
    r = IndexRetriever(index)
    got = r.retrieve(
        RetrievalRequest("browsers and responses", k=5, mode="vector", source="cors.md")
    )
    assert {m.source for m in got} == {"cors.md"}
    got = r.retrieve(RetrievalRequest("cache", k=5, mode="keyword", heading="clear"))
    assert [m.anchor for m in got] == ["clear-the-cache"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be a positive integer"),
        ({"mode": "fuzzy"}, "unknown search mode 'fuzzy'"),
        ({"text_query": 3}, "text_query must be a str or None"),
    ],
)
def test_invalid_requests(index: Index, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(QueryError, match=message):
        IndexRetriever(index).retrieve(RetrievalRequest("x", **kwargs))


def test_urls_become_links(tmp_path: Path) -> None:
    idx = make_index(url_template="https://docs.example.com/{path}#{anchor}")
    m = IndexRetriever(idx).retrieve(RetrievalRequest("docker", k=1, mode="keyword"))[0]
    assert m.link == "https://docs.example.com/deploy#docker"
    idx.close()


# ---------------------------------------------------------------------------------------------
# A custom retriever: a reranker wrapping another retriever


class ShortestFirstReranker:
    """Re-orders the inner retriever's candidates: shorter chunk text first (a toy reranker)."""

    name = "rerank"

    def __init__(self, inner: Retriever, pool: int = 5) -> None:
        self.inner = inner
        self.pool = pool

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        candidates = self.inner.retrieve(replace(request, k=max(request.k, self.pool)))
        ranked = sorted(candidates, key=lambda m: (len(m.text), m.id))
        return [replace(m, score=1.0 / (i + 1)) for i, m in enumerate(ranked[: request.k])]


def test_a_reranker_plugs_into_the_same_protocol(index: Index) -> None:
    reranker = ShortestFirstReranker(IndexRetriever(index))
    assert isinstance(reranker, Retriever)
    pipe = Pipeline(reranker)
    prepared = pipe.prepare(RetrievalRequest("cache", k=2, mode="keyword"))
    assert [m.anchor for m in prepared.matches] == ["clear-the-cache", "configure-the-cache"]
    assert prepared.prompt.blocks[0].match.anchor == "clear-the-cache"
    assert prepared.trace.retriever == "rerank"
    assert prepared.trace.candidates == 2  # the inner retriever's report, not k


# ---------------------------------------------------------------------------------------------
# Several indexes


class Fixed:
    """A retriever returning fixed matches (scores on its own scale)."""

    def __init__(self, name: str, scores: dict[str, float]) -> None:
        self.name = name
        self.scores = scores

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        ranked = sorted(self.scores.items(), key=lambda t: -t[1])[: request.k]
        return [Match(i, s, f"{i}.md", i, retriever=self.name) for i, s in ranked]


def test_interleaved_uses_reciprocal_rank_fusion_not_raw_scores() -> None:
    # "blog" scores on a scale 100x larger; RRF must not let that dominate.
    docs = Fixed("docs", {"d1": 0.9, "d2": 0.8, "d3": 0.1})
    blog = Fixed("blog", {"b1": 90.0, "b2": 80.0})
    multi = MultiIndexRetriever([docs, blog])
    got = multi.retrieve(RetrievalRequest("q", k=4))
    assert [(m.id, m.retriever) for m in got] == [
        ("d1", "docs"), ("b1", "blog"), ("d2", "docs"), ("b2", "blog"),
    ]  # fmt: skip
    assert got[0].score == pytest.approx(1 / (RRF_K + 1))
    assert got[2].score == pytest.approx(1 / (RRF_K + 2))
    assert got[1].raw_score == 90.0


def test_score_fusion_is_available_for_comparable_scores() -> None:
    docs = Fixed("docs", {"d1": 0.9, "d2": 0.2})
    blog = Fixed("blog", {"b1": 0.5})
    got = MultiIndexRetriever([docs, blog], fusion="score").retrieve(RetrievalRequest("q", k=3))
    assert [m.id for m in got] == ["d1", "b1", "d2"]
    assert got[1].raw_score is None and got[1].score == 0.5


def test_separate_keeps_per_index_blocks() -> None:
    docs = Fixed("docs", {"d1": 0.9, "d2": 0.8, "d3": 0.1})
    blog = Fixed("blog", {"b1": 90.0})
    multi = MultiIndexRetriever({"A": docs, "B": blog}, strategy="separate")
    got = multi.retrieve(RetrievalRequest("q", k=2))
    assert [(m.id, m.retriever) for m in got] == [("d1", "docs"), ("d2", "docs"), ("b1", "blog")]


def test_multi_index_over_real_indexes_reports_fusion() -> None:
    a, b = make_index("v1/"), make_index("v2/")
    multi = MultiIndexRetriever([IndexRetriever(a, name="v1"), IndexRetriever(b, name="v2")])
    events: list[StageEvent] = []
    got = multi.retrieve(RetrievalRequest("docker", k=2, mode="keyword", on_progress=events.append))
    assert [(m.source, m.retriever) for m in got] == [
        ("v1/deploy.md", "v1"),
        ("v2/deploy.md", "v2"),
    ]
    assert [e.stage for e in events] == [STAGE_RETRIEVAL, STAGE_RETRIEVAL, STAGE_FUSION]
    assert events[-1].retriever == "multi"
    a.close()
    b.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "zip"}, "unknown merge strategy 'zip'"),
        ({"fusion": "max"}, "unknown fusion 'max'"),
        ({"rrf_k": -1}, "rrf_k must be an integer >= 0"),
    ],
)
def test_multi_index_rejects_bad_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        MultiIndexRetriever([Fixed("a", {})], **kwargs)


def test_multi_index_names_must_be_unique() -> None:
    with pytest.raises(ConfigError, match="retriever names must be unique"):
        MultiIndexRetriever([Fixed("a", {}), Fixed("a", {})])
    with pytest.raises(ConfigError, match="at least one retriever"):
        MultiIndexRetriever([])


# ---------------------------------------------------------------------------------------------
# Tracing


class Collect:
    def __init__(self) -> None:
        self.records: list[TraceRecord] = []

    def record(self, trace: TraceRecord) -> None:
        self.records.append(trace)


def test_trace_holds_the_hash_never_the_text(index: Index, tmp_path: Path) -> None:
    question = "how do I clear the cache quickly"
    path = tmp_path / "traces" / "t.jsonl"
    with JsonlTracer(path) as tracer:
        pipe = Pipeline(IndexRetriever(index), tracer=tracer)
        pipe.prepare(question, k=3, mode="hybrid")
        pipe.retrieve(RetrievalRequest(question, k=2, mode="keyword"))
    raw = path.read_text(encoding="utf-8")
    assert "clear the cache" not in raw and "quickly" not in raw
    first, second = (json.loads(line) for line in raw.splitlines())
    assert first["querySha256"] == hashlib.sha256(question.encode()).hexdigest()
    assert first["querySha256"] == query_hash(question)
    assert first["queryChars"] == len(question)
    found = len(index.rank(question, k=3, mode="hybrid"))  # the chunks with a query term
    assert (first["mode"], first["k"], first["results"]) == ("hybrid", 3, found)
    assert found >= 2 and first["miss"] is False  # min_matches 1
    assert set(first["latencyMs"]) == {"embedding", "retrieval", "fusion", "context"}
    assert set(second["latencyMs"]) == {"retrieval"}  # keyword: no embedding, no prompt
    assert second["candidates"] >= second["results"] == 2
    assert first["topScore"] > 0 and first["totalMs"] >= first["latencyMs"]["retrieval"]


def test_a_miss_is_marked_when_too_few_matches_survive_min_score(index: Index) -> None:
    tracer = Collect()
    pipe = Pipeline(IndexRetriever(index), tracer=tracer, min_matches=2)
    pipe.retrieve(RetrievalRequest("cache", k=5, mode="keyword", min_score=1e9))
    pipe.retrieve(RetrievalRequest("cache", k=5, mode="keyword"))
    miss, hit = tracer.records
    assert (miss.miss, miss.results, miss.candidates, miss.top_score) == (True, 0, 2, None)
    assert miss.min_score == 1e9 and miss.min_matches == 2
    assert (hit.miss, hit.results) == (False, 2)


def test_pipeline_forwards_progress_and_adds_context(index: Index) -> None:
    events: list[StageEvent] = []
    pipe = Pipeline(IndexRetriever(index))
    pipe.prepare(RetrievalRequest("cache", k=2, mode="keyword", on_progress=events.append))
    assert [e.stage for e in events] == [STAGE_RETRIEVAL, STAGE_CONTEXT]
    assert events[-1].count == 2


def test_null_tracer_is_the_default(index: Index) -> None:
    pipe = Pipeline(IndexRetriever(index))
    assert isinstance(pipe.tracer, NullTracer)
    with pytest.raises(ConfigError, match="min_matches must be an integer >= 0"):
        Pipeline(IndexRetriever(index), min_matches=-1)


def test_jsonl_tracer_is_thread_safe(index: Index, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with JsonlTracer(path) as tracer:
        pipe = Pipeline(IndexRetriever(index), tracer=tracer)

        def work() -> None:
            for _ in range(20):
                pipe.retrieve(RetrievalRequest("cache", k=1, mode="keyword"))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 80
    assert all(json.loads(line)["results"] == 1 for line in lines)


def test_unwritable_trace_file_is_an_output_error(index: Index, tmp_path: Path) -> None:
    tracer = JsonlTracer(tmp_path)  # a folder, not a file
    pipe = Pipeline(IndexRetriever(index), tracer=tracer)
    with pytest.raises(OutputError, match=f"cannot write the trace file {tmp_path}"):
        pipe.retrieve(RetrievalRequest("cache", mode="keyword"))


def test_prepared_to_dict_is_json(index: Index) -> None:
    doc = Pipeline(IndexRetriever(index)).prepare("docker", mode="keyword").to_dict()
    assert json.loads(json.dumps(doc))["prompt"]["sources"][0]["link"] == "deploy.md#docker"


def test_runtime_modules_stay_light() -> None:
    code = (
        "import scidx.rag.pipeline, scidx.evaluation.metrics, scidx.evaluation.beir, sys; "
        "bad = {'openai', 'typer', 'rich', 'markdown_it', 'platformdirs'} & set(sys.modules); "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_index_is_a_retriever(tmp_path: Path) -> None:
    import scidx
    from scidx.index.retrieval import IndexRetriever, RetrievalRequest, Retriever

    out = tmp_path / "r.scidx"
    scidx.pack_records(
        [{"id": "a", "text": "rotate the logs daily"}, {"id": "b", "text": "install it"}],
        out,
        dimensions=16,
    )
    with scidx.load(out) as idx:
        assert isinstance(idx, Retriever)
        request = RetrievalRequest("rotate logs", k=1, mode="keyword")
        direct = idx.retrieve(request)
        assert [m.id for m in direct] == ["a"]
        assert direct == IndexRetriever(idx).retrieve(request)
