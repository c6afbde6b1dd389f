"""The reranking stage: where it runs in search, its contract, the pipeline, plugins, the CLI.

The rerankers here are small real implementations of the protocol (they score by words in the
passage); the built-in models are tested in test_rerank_cross_encoder.py and test_rerank_http.py.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

import scidx
from scidx.errors import ConfigError, QueryError, RerankError
from scidx.index.hits import Hit
from scidx.index.params import SearchParams
from scidx.index.rerank import DEFAULT_RERANK_TOP, passage
from scidx.index.retrieval import IndexRetriever, RetrievalRequest, StageEvent
from scidx.rag.pipeline import MultiIndexRetriever, Pipeline, TraceRecord
from scidx.rerank import registry
from scidx.rerank.base import CachedReranker

RECORDS = [
    {
        "id": f"doc{i:02d}",
        "title": f"Doc {i}",
        "text": f"cache settings entry {i} " + ("zebra " * (i % 5)) + "cache " * (20 - i),
    }
    for i in range(20)
]


class WordCount:
    """Scores a passage by how often ``word`` occurs in it (a real, deterministic reranker)."""

    def __init__(self, word: str = "zebra") -> None:
        self.word = word
        self.name = f"count:{word}"
        self.seen: list[tuple[str, list[str]]] = []

    def stamp(self) -> Mapping[str, object]:
        return {"provider": "count", "model": self.word}

    def rerank(self, query: str, candidates: Sequence[Hit]) -> list[float]:
        self.seen.append((query, [h.id for h in candidates]))
        return [float(passage(h).split().count(self.word)) for h in candidates]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> scidx.Index:
    path = tmp_path_factory.mktemp("rerank") / "r.scidx"
    scidx.pack_records(RECORDS, path, dimensions=32)
    return scidx.load(path)


def test_no_reranker_is_the_old_path(index: scidx.Index) -> None:
    plain = index.search_with("cache settings", SearchParams(k=5, group=None))
    again = index.search("cache settings", k=5, group=None)
    assert [(h.id, h.score) for h in plain] == [(h.id, h.score) for h in again]


def test_reranker_reorders_the_top_candidates(index: scidx.Index) -> None:
    base = index.search_with("cache settings", SearchParams(k=20, group=None, mode="keyword"))
    reranker = WordCount()
    hits = index.search_with(
        "cache settings",
        SearchParams(k=3, group=None, mode="keyword", rerank=reranker, rerank_top=8),
    )
    query, seen = reranker.seen[-1]
    assert query == "cache settings"
    assert seen == [h.id for h in base[:8]]  # the best 8 retrieval candidates, in order
    counts = {h.id: passage(h).split().count("zebra") for h in base[:8]}
    expected = sorted(seen, key=lambda i: (-counts[i], seen.index(i)))[:3]
    assert [h.id for h in hits] == expected
    assert [h.score for h in hits] == [float(counts[i]) for i in expected]


def test_index_search_and_rank_take_the_reranker(index: scidx.Index) -> None:
    reranker = WordCount()
    hits = index.search("cache", k=3, group=None, rerank=reranker, rerank_top=8)
    again = index.search_with("cache", SearchParams(k=3, group=None, rerank=reranker, rerank_top=8))
    assert [(h.id, h.score) for h in hits] == [(h.id, h.score) for h in again]
    assert index.rank("cache", k=3, rerank=reranker, rerank_top=8) == [
        (h.id, h.score) for h in hits
    ]
    # Parameters holding a reranker are never served from the validated-parameters memo.
    other = WordCount("entry")
    index.search("cache", k=3, group=None, rerank=other, rerank_top=8)
    assert other.seen and len(reranker.seen) == 3  # search, search_with, rank


def test_rerank_top_defaults_and_is_never_below_k(index: scidx.Index) -> None:
    reranker = WordCount()
    index.search_with("cache", SearchParams(k=2, group=None, rerank=reranker))
    assert len(reranker.seen[-1][1]) == DEFAULT_RERANK_TOP
    index.search_with("cache", SearchParams(k=6, group=None, rerank=reranker, rerank_top=3))
    assert len(reranker.seen[-1][1]) == 6


def test_grouping_and_rank_apply_after_reranking(index: scidx.Index) -> None:
    reranker = WordCount()
    grouped = index.search_with("cache", SearchParams(k=3, rerank=reranker, group="page"))
    assert [h.score for h in grouped] == sorted((h.score for h in grouped), reverse=True)
    ranked = index._live().rank("cache", SearchParams(k=3, rerank=reranker, group=None))
    raw = index.search_with("cache", SearchParams(k=3, rerank=reranker, group=None))
    assert ranked == [(h.id, h.score) for h in raw]


@pytest.mark.parametrize(
    ("scores", "needle"),
    [
        ([1.0], "returned 1 scores for 4 candidates"),
        ([1.0, float("nan"), 0.0, 0.0], "non-finite score (nan) for candidate 1"),
        ("abcd", "returned str, not a list of numbers"),
        (None, "returned NoneType, not a list of numbers"),
    ],
)
def test_bad_scores_are_a_rerank_error(index: scidx.Index, scores: object, needle: str) -> None:
    class Bad:
        name = "bad"

        def stamp(self) -> Mapping[str, object]:
            return {"provider": "bad"}

        def rerank(self, query: str, candidates: Sequence[Hit]) -> object:
            return scores

    with pytest.raises(RerankError) as info:
        index.search_with("cache", SearchParams(k=2, group=None, rerank=Bad(), rerank_top=4))
    assert needle in str(info.value)
    assert "'bad'" in str(info.value)


def test_bad_settings_are_query_errors() -> None:
    with pytest.raises(QueryError, match="rerank_top must be a positive integer"):
        SearchParams(rerank_top=0)
    with pytest.raises(QueryError, match="rerank must be a Reranker"):
        SearchParams(rerank="cross-encoder")  # type: ignore[arg-type]


def test_pipeline_reports_the_reranking_stage(index: scidx.Index) -> None:
    traces: list[TraceRecord] = []
    events: list[StageEvent] = []

    class Keep:
        def record(self, trace: TraceRecord) -> None:
            traces.append(trace)

    pipe = Pipeline(IndexRetriever(index, name="r"), tracer=Keep(), reranker=WordCount())
    request = RetrievalRequest("cache settings", k=3, on_progress=events.append)
    prepared = pipe.prepare(request)
    stages = [e.stage for e in events]
    assert stages == ["embedding", "retrieval", "fusion", "reranking", "context"]
    assert traces[0].reranker == "count:zebra"
    assert "reranking" in prepared.trace.latency_ms
    assert prepared.trace.to_dict()["reranker"] == "count:zebra"
    plain = Pipeline(IndexRetriever(index, name="r")).prepare("cache settings", k=3)
    assert "reranking" not in plain.trace.latency_ms and plain.trace.reranker == ""


def test_the_reranker_judges_the_question_not_the_lexical_override(index: scidx.Index) -> None:
    reranker = WordCount()
    request = RetrievalRequest(
        "which entry has zebras", k=2, text_query="cache", rerank=reranker, group=None
    )
    IndexRetriever(index).retrieve(request)
    assert reranker.seen[-1][0] == "which entry has zebras"
    MultiIndexRetriever(
        [IndexRetriever(index, name="a"), IndexRetriever(index, name="b")]
    ).retrieve(request)
    assert [q for q, _ in reranker.seen[-2:]] == ["which entry has zebras"] * 2


def _plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    """A real installed distribution registering ``wordcount`` in ``scidx.rerankers``."""
    site = tmp_path / "site"
    info = site / "scidx_wordcount-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: scidx-wordcount\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[scidx.rerankers]\nwordcount = scidx_wordcount\n")
    (site / "scidx_wordcount.py").write_text(body)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_plugins", None)
    monkeypatch.delitem(sys.modules, "scidx_wordcount", raising=False)


PLUGIN = """
class WordCount:
    def __init__(self, word):
        self.word = word
        self.name = "wordcount:" + word
        self.calls = 0

    def stamp(self):
        return {"provider": "wordcount", "model": self.word}

    def rerank(self, query, candidates):
        self.calls += 1
        if self.word == "boom":
            raise ValueError("the plugin broke")
        return [h.text.split().count(self.word) for h in candidates]


def from_options(model, **options):
    return WordCount(model or "zebra", **options)
"""


def test_plugins_register_by_entry_point_and_share_the_cache(
    index: scidx.Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plugin(tmp_path, monkeypatch, PLUGIN)
    assert "wordcount" in registry.reranker_names()
    reranker = registry.load_reranker("wordcount", "zebra")
    assert isinstance(reranker, CachedReranker)
    params = SearchParams(k=3, group=None, rerank=reranker, rerank_top=10)
    first = index.search_with("cache", params)
    assert reranker.calls == 10
    second = index.search_with("cache", params)
    assert reranker.calls == 10  # every pair came from the cache
    assert [(h.id, h.score) for h in first] == [(h.id, h.score) for h in second]
    other = registry.load_reranker("wordcount", "entry")  # another stamp: its own scores
    index.search_with("cache", SearchParams(k=3, group=None, rerank=other, rerank_top=10))
    assert other.calls == 10


def test_plugin_failures_are_rerank_errors(
    index: scidx.Index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _plugin(tmp_path, monkeypatch, PLUGIN)
    broken = registry.load_reranker("wordcount", "boom")
    with pytest.raises(RerankError, match="'wordcount:boom' failed: ValueError: the plugin broke"):
        index.search_with("cache", SearchParams(k=3, group=None, rerank=broken))
    with pytest.raises(ConfigError, match="no reranker named 'nope' is installed"):
        registry.load_reranker("nope")
    with pytest.raises(ConfigError, match="reranker 'wordcount'"):
        registry.load_reranker("wordcount", "x", colour="red")


def test_plugin_that_fails_to_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _plugin(tmp_path, monkeypatch, "raise RuntimeError('no GPU here')\n")
    with pytest.raises(RerankError, match="failed to import: RuntimeError: no GPU here"):
        registry.load_reranker("wordcount")


def test_cli_search_and_query_rerank(
    index: scidx.Index,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from scidx.cli.run import main

    _plugin(tmp_path, monkeypatch, PLUGIN)
    path = str(index.source)
    argv = ["search", path, "cache", "--json", "--group", "none", "-k", "3"]
    with pytest.raises(SystemExit) as done:
        main([*argv, "--rerank", "wordcount", "--rerank-model", "zebra", "--rerank-top", "10"])
    assert done.value.code == 0
    rows = json.loads(capsys.readouterr().out)
    expected = index.search_with(
        "cache",
        SearchParams(k=3, group=None, rerank=registry.load_reranker("wordcount"), rerank_top=10),
    )
    assert [(r["id"], r["score"]) for r in rows] == [(h.id, h.score) for h in expected]

    with pytest.raises(SystemExit) as done:
        main(["query", path, "cache", "--json", "--rerank", "wordcount", "-k", "2"])
    assert done.value.code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["trace"]["reranker"] == "wordcount:zebra"
    assert "reranking" in doc["trace"]["latencyMs"]

    with pytest.raises(SystemExit) as done:
        main(
            ["query", "--postgres", "postgresql://127.0.0.1:9/x", "cache", "--rerank", "wordcount"]
        )
    assert done.value.code == 1
    assert "does not apply to --postgres" in capsys.readouterr().err

    for bad, code, needle in [
        (["--rerank-top", "5"], 1, "--rerank-top needs --rerank NAME"),
        (["--rerank", "nope"], 1, "no reranker named 'nope'"),
        (["--rerank", "wordcount", "--rerank-option", "oops"], 1, "write it as KEY=VALUE"),
        (["--rerank", "wordcount", "--rerank-model", "boom"], 2, "the plugin broke"),
    ]:
        with pytest.raises(SystemExit) as done:
            main([*argv, *bad])
        err = capsys.readouterr().err
        assert done.value.code == code, err
        assert needle in err and "Traceback" not in err
