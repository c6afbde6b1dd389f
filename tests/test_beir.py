"""BEIR reader and benchmark runner: file quirks, metrics, the CSV row, and SciFact train."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from scidx.errors import ConfigError, InputError, OutputError
from scidx.evaluation.beir import BENCH_COLUMNS, append_csv, read_beir, run_bench, run_bm25s
from support.datasets import make_beir


def test_reader_handles_crlf_and_the_header(tmp_path: Path) -> None:
    data = read_beir(make_beir(tmp_path / "tiny"), "test")
    assert data.name == "tiny" and data.split == "test"
    assert len(data.corpus) == 4
    assert data.corpus[0] == ("d1", "Vitamin D", "Vitamin D deficiency weakens bones.")
    assert data.qrels == {"1": {"d1": 1}, "2": {"d2": 2, "d4": 1}, "3": {"d3": 1}, "5": {"d9": 0}}
    assert list(data.queries) == ["1", "2", "3", "5"]  # judged queries only, qrels order
    lf = read_beir(make_beir(tmp_path / "lf", crlf=False, header=False), "test")
    assert lf.qrels == data.qrels


def test_reader_errors_name_file_and_line(tmp_path: Path) -> None:
    root = make_beir(tmp_path / "b")
    with pytest.raises(InputError, match=r"qrels/train\.tsv: No such file"):
        read_beir(root, "train")
    with pytest.raises(InputError, match="does not exist or is not a folder"):
        read_beir(tmp_path / "nope", "test")
    with pytest.raises(ConfigError, match="invalid split name"):
        read_beir(root, "../x")
    (root / "qrels" / "test.tsv").write_text("q\td\tscore\n1\td1\tx\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"test\.tsv:2: score 'x' is not an integer"):
        read_beir(root, "test")
    (root / "qrels" / "test.tsv").write_text("q\td\tscore\n9\td1\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match="judges 1 queries that queries.jsonl does not have"):
        read_beir(root, "test")
    (root / "corpus.jsonl").write_text('{"_id": "a"}\nnot json\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"corpus\.jsonl:2: not a JSON object"):
        read_beir(root, "test")


def test_bench_scores_a_tiny_dataset(tmp_path: Path) -> None:
    data = read_beir(make_beir(tmp_path / "tiny"), "test")
    rows = run_bench(data, modes=["keyword", "hybrid"], k=10)
    assert [r.mode for r in rows] == ["keyword", "hybrid"]
    kw = rows[0]
    # query 5 has no relevant document: left out
    assert kw.queries == 3
    assert (kw.provider, kw.model, kw.k) == ("hashing", "hashing-v2", 10)
    # every judged query finds its top document first; query 2 also needs d4 (grade 1)
    assert kw.mrr_10 == 1.0
    assert kw.recall_100 == pytest.approx((1 + 0.5 + 1) / 3)
    assert 0.0 < kw.ndcg_10 <= 1.0
    assert kw.ingest_s > 0 and kw.wall_s >= kw.ingest_s
    assert kw.query_p50_ms <= kw.query_p95_ms <= kw.query_p99_ms


def test_bench_limit_and_validation(tmp_path: Path) -> None:
    data = read_beir(make_beir(tmp_path / "tiny"), "test")
    assert run_bench(data, modes=["keyword"], limit=1)[0].queries == 1
    with pytest.raises(ConfigError, match="unknown mode 'fast'"):
        run_bench(data, modes=["fast"])
    with pytest.raises(ConfigError, match="unknown provider 'magic'"):
        run_bench(data, provider="magic")
    with pytest.raises(ConfigError, match="--limit must be >= 1"):
        run_bench(data, limit=0)


def test_bench_columns_reranker_vectors_replicate(tmp_path: Path) -> None:
    from collections.abc import Sequence

    data = read_beir(make_beir(tmp_path / "tiny"), "test")
    (plain,) = run_bench(data, modes=["keyword"], k=10)
    assert (plain.reranker, plain.vectors, plain.replicate) == ("", "int8", 1)
    assert plain.rerank_p50_ms is None and plain.to_dict()["rerank_p50_ms"] == ""

    class Reverse:
        """Ranks the retrieval candidates backwards (a real, if perverse, reranker)."""

        name = "reverse"

        def stamp(self) -> dict[str, object]:
            return {"provider": "reverse"}

        def rerank(self, query: str, candidates: Sequence[object]) -> list[float]:
            return [float(i) for i in range(len(candidates))]

    # A chunk every judged query also matches, so each candidate list has two entries (with the
    # hashing provider a text query's candidates are its keyword matches).
    root = make_beir(tmp_path / "shared")
    with (root / "corpus.jsonl").open("a", encoding="utf-8") as f:
        note = "Notes on vitamin, bone, aspirin, heart, sleep, memory and insulin."
        f.write(json.dumps({"_id": "d5", "title": "Notes", "text": note}) + "\n")
    shared = read_beir(root, "test")
    (vec,) = run_bench(shared, modes=["vector"], k=10)
    (rr,) = run_bench(shared, modes=["vector"], k=10, reranker=Reverse())
    assert rr.reranker == "reverse" and rr.rerank_p50_ms is not None and rr.rerank_p50_ms >= 0
    assert rr.mrr_10 < vec.mrr_10  # every candidate list is now upside down
    (i8,) = run_bench(data, modes=["vector"], k=10, vectors="int8")
    assert i8.vectors == "int8"
    (big,) = run_bench(data, modes=["keyword"], k=10, replicate=3)
    assert big.replicate == 3 and big.queries == plain.queries
    row = big.to_dict()
    assert row["ndcg@10"] == row["recall@100"] == row["mrr@10"] == ""
    with pytest.raises(ConfigError, match="--replicate must be an integer >= 1"):
        run_bench(data, replicate=0)
    with pytest.raises(ConfigError, match="vector encoding"):
        run_bench(data, vectors="fp16")


def test_replicated_corpus_has_distinct_ids(tmp_path: Path) -> None:
    import scidx.pack.packer as packer

    data = read_beir(make_beir(tmp_path / "tiny"), "test")
    seen: list[list[str]] = []
    real = packer.pack_records

    def spy(records: list[dict[str, str]], *args: object, **kwargs: object) -> object:
        seen.append([r["id"] for r in records])
        return real(records, *args, **kwargs)  # type: ignore[arg-type]

    packer.pack_records = spy  # type: ignore[assignment]
    try:
        run_bench(data, modes=["keyword"], k=10, replicate=2)
    finally:
        packer.pack_records = real
    ids = seen[0]
    base = [did for did, _, _ in data.corpus]
    assert ids == [*base, *(f"{d}~2" for d in base)] and len(set(ids)) == len(ids)


def test_csv_rows_are_appended_under_one_header(tmp_path: Path) -> None:
    data = read_beir(make_beir(tmp_path / "tiny"), "test")
    out = tmp_path / "bench.csv"
    append_csv(out, run_bench(data, modes=["keyword"], k=10))
    append_csv(out, run_bench(data, modes=["vector"], k=10))
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == list(BENCH_COLUMNS)
    assert [r["mode"] for r in rows] == ["keyword", "vector"]
    assert rows[0]["dataset"] == "tiny" and rows[0]["queries"] == "3"
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(OutputError, match="different header"):
        append_csv(other, [])


def test_scifact_train_keyword_beats_the_floor(shared_dir: Path) -> None:
    # Keyword mode over every judged train query (~10 s); the full three-mode run is
    # `toolup-rag bench --beir ../shared/beir/scifact --split train --mode all --bm25s`.
    data = read_beir(shared_dir / "beir" / "scifact", "train")
    assert (len(data.corpus), len(data.queries)) == (5183, 809)
    (row,) = run_bench(data, modes=["keyword"], k=100)
    assert row.queries == 809
    # bm25s with English stemming measures 0.696 / 0.928 / 0.666 here (shared/README.md);
    # a keyword leg far below that means the pipeline broke, not that tuning moved.
    assert row.ndcg_10 > 0.65
    assert row.recall_100 > 0.88
    assert row.mrr_10 > 0.62


def test_bm25s_reference_matches_the_published_numbers(shared_dir: Path) -> None:
    pytest.importorskip("bm25s")
    pytest.importorskip("Stemmer")
    data = read_beir(shared_dir / "beir" / "scifact", "train")
    row = run_bm25s(data)
    assert row.queries == 809
    # shared/README.md: nDCG@10 0.696, Recall@100 0.928, MRR@10 0.666 (bm25s 0.3.16)
    assert row.ndcg_10 == pytest.approx(0.696, abs=0.002)
    assert row.recall_100 == pytest.approx(0.928, abs=0.002)
    assert row.mrr_10 == pytest.approx(0.666, abs=0.002)


def test_bench_resolves_plugin_providers_through_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``bench --provider NAME`` finds a plugin as ``pack-docs`` does (the entry-point group)."""
    import types

    import scidx.embed.registry as registry
    from scidx.embed.hashing import HashingEmbedder

    class Tiny(HashingEmbedder):
        provider_id = "tinyemb"

    seen: list[object] = []

    def from_config(config: object) -> Tiny:
        seen.append(config)
        return Tiny(dimensions=getattr(config, "dimensions", None) or 32)

    def query_embedder_from_stamp(stamp: dict[str, int]) -> Tiny:
        return Tiny(dimensions=stamp["dimensions"])

    plugin = types.SimpleNamespace(
        from_config=from_config, query_embedder_from_stamp=query_embedder_from_stamp
    )
    entry = types.SimpleNamespace(name="tinyemb", value="tiny:plugin", load=lambda: plugin)
    monkeypatch.setattr(registry, "_plugins", {"tinyemb": entry})
    data = read_beir(make_beir(tmp_path / "tiny"), "test")
    (row,) = run_bench(data, provider="tinyemb", dimensions=24, modes=["vector"], k=10)
    assert row.provider == "tinyemb" and row.queries == 3
    assert [getattr(c, "dimensions", None) for c in seen] == [24]
    with pytest.raises(ConfigError, match="unknown provider 'magic'; use hashing, local, openai"):
        run_bench(data, provider="magic")


def test_bench_local_queries_with_the_model_it_packed_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bench --provider local --model DIR``: no $SCIDX_MODEL_DIR, no record of a pack."""
    from conftest import _need_shared
    from scidx.cli import main

    model = _need_shared("models/all-MiniLM-L6-v2-int8")
    monkeypatch.delenv("SCIDX_MODEL_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    root = make_beir(tmp_path / "tiny")
    argv = ["bench", "--beir", str(root), "--split", "test", "--provider", "local",
            "--model", str(model), "--mode", "vector,hybrid", "-k", "10", "--json"]  # fmt: skip
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    assert info.value.code == 0, err
    rows = json.loads(out)
    assert [r["mode"] for r in rows] == ["vector", "hybrid"]
    assert all(r["provider"] == "local" and r["queries"] == 3 for r in rows)
    assert rows[0]["mrr@10"] > 0.5
