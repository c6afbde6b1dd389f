"""Metrics against hand-computed values and pytrec_eval; eval fixtures; the baseline gate."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from scidx.errors import ConfigError, InputError
from scidx.evaluation.metrics import (
    QUALITY_EXIT_CODE,
    QualityRegressionError,
    compare_to_baseline,
    load_fixture,
    mean_metrics,
    mrr_at,
    ndcg_at,
    query_metrics,
    rank_by_score,
    recall_at,
    run_eval,
)
from scidx.pack.packer import pack_docs

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "docs" / "eval" / "kelpie.json"
BASELINE = ROOT / "docs" / "eval" / "kelpie.baseline.json"


def log2(x: float) -> float:
    return math.log2(x)


# ---------------------------------------------------------------------------------------------
# Hand-computed metric cases


def test_recall_counts_relevant_in_the_cut() -> None:
    qrels = {"a": 1, "b": 1, "c": 0, "d": 2}
    run = ["x", "a", "c", "d", "b"]
    assert recall_at(run, qrels, 1) == 0.0
    assert recall_at(run, qrels, 2) == pytest.approx(1 / 3)
    assert recall_at(run, qrels, 4) == pytest.approx(2 / 3)
    assert recall_at(run, qrels, 100) == 1.0


def test_mrr_is_first_relevant_within_the_cut() -> None:
    qrels = {"b": 1, "z": 0}
    assert mrr_at(["z", "a", "b"], qrels, 10) == pytest.approx(1 / 3)
    assert mrr_at(["z", "a", "b"], qrels, 2) == 0.0  # beyond the cut
    assert mrr_at([], qrels, 10) == 0.0


def test_ndcg_uses_linear_gain_and_log2_discount() -> None:
    qrels = {"a": 1, "b": 2, "c": 0}
    run = ["c", "a", "b"]
    dcg = 1 / log2(3) + 2 / log2(4)
    ideal = 2 / log2(2) + 1 / log2(3)
    assert ndcg_at(run, qrels, 10) == pytest.approx(dcg / ideal)


def test_ndcg_ideal_is_cut_at_k() -> None:
    qrels = dict.fromkeys("abcdefghijkl", 1)  # 12 relevant, only 10 fit
    run = list("abcdefghij")
    assert ndcg_at(run, qrels, 10) == pytest.approx(1.0)


def test_negative_grades_gain_nothing() -> None:
    qrels = {"a": 1, "b": -1}
    assert ndcg_at(["b", "a"], qrels, 10) == pytest.approx(1 / log2(3))
    assert recall_at(["b"], qrels, 10) == 0.0


def test_ties_are_broken_by_doc_id_descending() -> None:
    # trec_eval orders equal scores by document id, descending.
    assert rank_by_score({"a": 1.0, "c": 1.0, "b": 0.5, "z": 1.0}) == ["z", "c", "a", "b"]
    assert mrr_at({"a": 1.0, "b": 1.0}, {"a": 1}, 10) == 0.5
    assert mrr_at({"a": 1.0, "b": 1.0}, {"b": 1}, 10) == 1.0


def test_queries_without_relevant_docs_are_skipped_and_missing_runs_score_zero() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"x": 0}, "q3": {"d": 1}}
    runs: dict[str, Any] = {"q1": ["a"], "q2": ["x"]}  # q3 returned nothing
    means, per_query, skipped = mean_metrics(runs, qrels, ["ndcg@10", "recall@100"])
    assert skipped == ["q2"]
    assert set(per_query) == {"q1", "q3"}
    assert means == {"ndcg@10": 0.5, "recall@100": 0.5}


def test_unknown_metric_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown metric 'map@10'"):
        query_metrics([], {"a": 1}, ["map@10"])


def test_metrics_match_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {
        "q1": {"a": 1, "b": 2, "c": 0, "e": 1},
        "q2": {"x": 1},
        "q3": {"d": 3, "e": 1, "f": 2},
    }
    run = {
        "q1": {"c": 1.0, "a": 1.0, "b": 0.5, "z": 1.0, "e": 0.1},
        "q2": {"y": 2.0, "w": 1.5},
        "q3": {f"n{i}": 10.0 - i for i in range(12)} | {"d": 0.5, "f": 3.0},
    }
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut.10", "recall.1", "recall.5", "recall.100", "recip_rank"}
    )
    expected = evaluator.evaluate(run)
    for qid in qrels:
        got = query_metrics(run[qid], qrels[qid], ["ndcg@10", "recall@1", "recall@5", "recall@100"])
        assert got["ndcg@10"] == pytest.approx(expected[qid]["ndcg_cut_10"])
        assert got["recall@1"] == pytest.approx(expected[qid]["recall_1"])
        assert got["recall@5"] == pytest.approx(expected[qid]["recall_5"])
        assert got["recall@100"] == pytest.approx(expected[qid]["recall_100"])
        # recip_rank has no cut; every first relevant document here is within 12 ranks
        assert mrr_at(run[qid], qrels[qid], 100) == pytest.approx(expected[qid]["recip_rank"])


# ---------------------------------------------------------------------------------------------
# Fixtures


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


INLINE: dict[str, Any] = {
    "chunks": [
        {"chunkId": "cors", "content": "Enable CORS with the allow_origins setting.",
         "metadata": {"title": "CORS"}},
        {"chunkId": "auth", "content": "Authenticate requests with an API token header.",
         "metadata": {"title": "Auth", "tags": ["x"]}},
        {"chunkId": "cache", "content": "The cache keeps responses for ten minutes.",
         "metadata": {}},
    ],
    "queries": [
        {"id": "q1", "query": "allow origins for CORS", "relevantChunkIds": ["cors"]},
        {"id": "q2", "query": "API token", "relevantChunkIds": ["auth"]},
        {"id": "q3", "query": "how long are responses cached", "relevantChunkIds": ["cache"]},
    ],
}  # fmt: skip


def test_inline_fixture_is_packed_in_memory(tmp_path: Path) -> None:
    report = run_eval(write(tmp_path / "f.json", INLINE))
    assert set(report["modes"]) == {"hybrid", "keyword", "vector"}
    kw = report["modes"]["keyword"]
    assert kw["summary"]["recall@1"] == 1.0
    assert kw["summary"]["queries"] == 3
    assert kw["misses"] == []
    assert kw["queries"]["q1"]["top"][0] == "cors"
    assert report["index"] == "(inline chunks)"


def test_modes_can_be_restricted(tmp_path: Path) -> None:
    report = run_eval(write(tmp_path / "f.json", INLINE), modes=["keyword"])
    assert list(report["modes"]) == ["keyword"]


def test_misses_list_queries_with_nothing_relevant_in_the_top_10(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(INLINE))
    doc["queries"].append({"id": "q4", "query": "zzzz unknown", "relevantChunkIds": ["cache"]})
    report = run_eval(write(tmp_path / "f.json", doc), modes=["keyword"])
    assert report["modes"]["keyword"]["misses"] == ["q4"]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "the top level must be a JSON object"),
        ({"queries": []}, "`queries` must be a non-empty list"),
        ({"queries": [{"id": "a", "query": "x"}]}, "query #0 ('a') needs `relevant`"),
        ({"queries": [{"id": "", "query": "x", "relevant": ["a"]}]}, "non-empty string `id`"),
        (
            {"queries": [{"id": "a", "query": "x", "relevant": ["k"]}] * 2},
            "query id 'a' is used twice",
        ),
        ({"queries": [{"id": "a", "query": " ", "relevant": ["k"]}]}, "non-empty string `query`"),
        (
            {"modes": ["fast"], "queries": [{"id": "a", "query": "x", "relevant": ["k"]}]},
            "`modes` must be a non-empty list",
        ),
        (
            {"chunks": [], "queries": [{"id": "a", "query": "x", "relevantChunkIds": ["k"]}]},
            "`chunks` must be a non-empty list",
        ),
    ],
)
def test_malformed_fixtures_name_the_problem(tmp_path: Path, doc: Any, message: str) -> None:
    path = write(tmp_path / "f.json", doc)
    with pytest.raises(ConfigError) as info:
        load_fixture(path)
    assert str(info.value).startswith(f"eval fixture {path}: ")
    assert message in str(info.value)


def test_unreadable_fixture(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read eval fixture"):
        load_fixture(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="is not valid JSON"):
        load_fixture(tmp_path / "bad.json")


def test_graded_relevance_in_a_fixture(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(INLINE))
    doc["queries"] = [{"id": "g", "query": "CORS", "relevantChunkIds": {"cors": 2, "auth": 1}}]
    fx = load_fixture(write(tmp_path / "f.json", doc))
    assert fx.queries[0].relevant == {"cors": 2, "auth": 1}


def test_relevant_keys_missing_from_the_index_are_reported(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(INLINE))
    doc["queries"][0]["relevantChunkIds"] = ["cors", "gone"]
    with pytest.raises(ConfigError, match="query 'q1' names relevant chunks the index does not"):
        run_eval(write(tmp_path / "f.json", doc))


def test_fixture_without_index_needs_one(tmp_path: Path) -> None:
    path = write(tmp_path / "f.json", {"queries": [{"id": "a", "query": "x", "relevant": ["k"]}]})
    with pytest.raises(ConfigError, match="names no `index` and has no `chunks`"):
        run_eval(path)
    path = write(
        tmp_path / "g.json",
        {"index": "nope.scidx", "queries": [{"id": "a", "query": "x", "relevant": ["k"]}]},
    )
    with pytest.raises(ConfigError, match="does not exist; pack it first"):
        run_eval(path)


# ---------------------------------------------------------------------------------------------
# The gate


def report_with(mode: str, r5: float, ndcg: float, per_query: dict[str, float]) -> dict[str, Any]:
    return {
        "modes": {
            mode: {
                "summary": {"recall@5": r5, "ndcg@10": ndcg},
                "queries": {q: {"recall@5": v, "ndcg@10": v} for q, v in per_query.items()},
            }
        }
    }


def test_gate_is_relative_and_names_regressed_queries() -> None:
    base = report_with("hybrid", 0.80, 0.70, {"a": 1.0, "b": 0.5})
    within = report_with("hybrid", 0.761, 0.666, {"a": 1.0, "b": 0.5})  # -4.9 %
    assert compare_to_baseline(within, base).ok
    worse = report_with("hybrid", 0.75, 0.70, {"a": 0.0, "b": 0.5})  # recall@5 -6.25 %
    gate = compare_to_baseline(worse, base)
    assert not gate.ok
    assert [r.describe() for r in gate.failed] == ["hybrid mean: recall@5 0.8000 → 0.7500"]
    assert {(r.query, r.metric) for r in gate.queries} == {("a", "recall@5"), ("a", "ndcg@10")}
    assert compare_to_baseline(worse, base, tolerance=0.1).ok


def test_gate_skips_modes_missing_on_either_side() -> None:
    base = report_with("vector", 0.9, 0.9, {})
    gate = compare_to_baseline(report_with("keyword", 0.1, 0.1, {}), base)
    assert gate.ok and gate.compared == []


def test_gate_rejects_bad_input() -> None:
    with pytest.raises(ConfigError, match="tolerance must be in"):
        compare_to_baseline({}, {"modes": {}}, tolerance=1.5)
    with pytest.raises(ConfigError, match="not an eval report"):
        compare_to_baseline({}, {"x": 1})


def test_quality_error_has_its_own_exit_code() -> None:
    assert QualityRegressionError("x").exit_code == QUALITY_EXIT_CODE == 7


# ---------------------------------------------------------------------------------------------
# The shipped fixture over the example docs, gated against the shipped baseline


@pytest.fixture(scope="module")
def kelpie_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kelpie")
    shutil.copytree(ROOT / "fixtures" / "docs", root / "fixtures" / "docs")
    shutil.copy(ROOT / "staticcorpus.example.json", root / "staticcorpus.json")
    result = pack_docs(root / "staticcorpus.json", use_cache=False)
    assert result.output is not None
    return result.output


def test_shipped_fixture_passes_the_shipped_baseline(kelpie_index: Path) -> None:
    report = run_eval(FIXTURE, index=kelpie_index)
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    gate = compare_to_baseline(report, baseline, tolerance=0.05)
    assert gate.compared == ["hybrid", "keyword", "vector"]
    assert gate.ok, "; ".join(r.describe() for r in gate.failed + gate.queries)
    # The fixture covers every example page and at least 20 questions.
    fx = load_fixture(FIXTURE)
    assert len(fx.queries) >= 20
    pages = {key.split("#")[0].split(":")[0] for q in fx.queries for key in q.relevant}
    assert len(pages) == len(list((ROOT / "fixtures" / "docs").glob("*.md")))


def test_project_docs_fixture_passes_its_baseline(tmp_path: Path) -> None:
    """The gate over scidx's own README and docs/: a docs edit that hurts retrieval fails here.

    After an intended docs change, refresh the baseline with
    ``toolup-rag eval docs/eval/scidx-docs.json --out docs/eval/scidx-docs.baseline.json``.
    """
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("eval"))
    shutil.copy(ROOT / "staticcorpus.docs.json", tmp_path / "staticcorpus.json")
    result = pack_docs(tmp_path / "staticcorpus.json", use_cache=False)
    assert result.output is not None
    fixture = ROOT / "docs" / "eval" / "scidx-docs.json"
    report = run_eval(fixture, index=result.output)
    baseline = json.loads((ROOT / "docs/eval/scidx-docs.baseline.json").read_text("utf-8"))
    gate = compare_to_baseline(report, baseline, tolerance=0.05)
    assert gate.compared == ["hybrid", "keyword", "vector"]
    assert gate.ok, gate
