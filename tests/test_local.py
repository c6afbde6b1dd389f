"""The ``local`` embedding provider: a real ONNX model (all-MiniLM-L6-v2, int8) from ../shared.

Every test embeds a handful of short texts so the module stays fast on 2 cores. The model files
are checked against the sha256 sums in their PROVENANCE.md before any test uses them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scidx.embed.base import DEFAULT_FUSION
from scidx.embed.local import FUSION, LocalEmbedder, model_identity, read_model_files
from scidx.errors import ConfigError, ProviderError, QueryEmbeddingError
from scidx.index.index import load
from scidx.pack.packer import pack_docs, pack_records
from support.cli import run
from support.models import DOCS, copy_model, make_project
from support.onnx_models import constant_model, nan_model

pytestmark = pytest.mark.usefixtures("_no_model_env")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def embedder(minilm: Path) -> LocalEmbedder:
    return LocalEmbedder(minilm)


def tree_bytes(folder: Path) -> dict[str, bytes]:
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# ---------------------------------------------------------------------------------------------
# The embedder


def test_reads_the_sentence_transformers_files(minilm: Path, embedder: LocalEmbedder) -> None:
    files = read_model_files(minilm)
    assert (files.name, files.pooling, files.max_tokens) == ("all-MiniLM-L6-v2-int8", "mean", 256)
    assert (files.dimensions, files.vocab_size, files.position_limit) == (384, 30522, 512)
    stamp = embedder.stamp()
    assert stamp == {
        "provider": "local",
        "model": f"all-MiniLM-L6-v2-int8@{embedder.identity[:16]}",
        "dimensions": 384,
        "normalization": "l2",
        "modelHash": embedder.identity,
        "pooling": "mean",
        "maxTokens": 256,
    }
    assert embedder.identity == model_identity(files, pooling="mean", max_tokens=256)


def test_vectors_are_unit_length_and_semantic(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed(
        ["A cat sleeps on the sofa.", "The kitten is napping on the couch.", "Tax law of 1990."]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    sims = vectors @ vectors.T
    assert sims[0, 1] > 0.5 > sims[0, 2] + 0.3


def test_same_bytes_whatever_the_batching_order_and_threads(minilm: Path) -> None:
    texts = ["short", "a somewhat longer sentence about cats", "x " * 300, "dogs bark", ""]
    first = LocalEmbedder(minilm, threads=1, batch_size=1).embed(texts)
    other = LocalEmbedder(minilm, threads=2, batch_size=4)
    assert other.embed(texts).tobytes() == first.tobytes()
    reordered = other.embed(texts[::-1])[::-1]
    assert reordered.tobytes() == first.tobytes()


def test_other_kernels_agree_to_1e5(minilm: Path, embedder: LocalEmbedder) -> None:
    # Another graph-optimisation level picks other kernels, as another CPU does: the vectors
    # agree closely but need not be bit-identical (docs/providers.md, "Determinism").
    texts = ["how do I ship nginx logs", "a cat is a small furry animal"]
    basic = LocalEmbedder(minilm, optimization="basic").embed(texts)
    assert np.abs(basic - embedder.embed(texts)).max() < 1e-5


def test_long_inputs_are_truncated_in_the_request_only(minilm: Path) -> None:
    emb = LocalEmbedder(minilm, max_tokens=16)
    emb.describe_input = {"long " * 40: "doc.md:long:0"}.get
    vectors = emb.embed(["short text", "long " * 40])
    assert emb.truncated == ["'doc.md:long:0'"]
    rows = emb.tokenize(["long " * 40])
    assert len(rows[0]) == 16
    assert np.isfinite(vectors).all()


def test_query_embedding_matches_batch_embedding(embedder: LocalEmbedder) -> None:
    query = "where do cats sleep"
    assert embedder.embed_query(query).tobytes() == embedder.embed([query])[0].tobytes()


def test_loads_lazily(minilm: Path) -> None:
    emb = LocalEmbedder(minilm)
    assert not emb.loaded  # the dimensions come from 1_Pooling/config.json
    emb.embed(["x"])
    assert emb.loaded


# ---------------------------------------------------------------------------------------------
# Packing and searching


def test_pack_search_and_warm_repack(
    minilm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = make_project(tmp_path, minilm)
    code, out, err = run(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 0, err
    assert re.search(
        r"4 distinct texts, 0 duplicates; cache hits 0/4; embedded 4; .* chunks/s\)", out
    ), out
    index = tmp_path / "docs.scidx"
    with load(index, model_dir=minilm) as idx:
        assert idx.meta["fusion"] == dict(FUSION)
        hits = idx.search("which pet purrs and sleeps all day", k=2, mode="vector")
        assert hits[0].id == "docs/pets.md:cats:0"
        assert idx.search("which pet purrs and sleeps all day", k=1)[0].id == "docs/pets.md:cats:0"
    before = index.read_bytes()
    # Warm: every vector from the cache (or the previous index), no model run at all.
    result = pack_docs(cfg, force=True)
    assert (result.embedded, result.cache_hits) == (0, 4)
    assert index.read_bytes() == before
    code, out, _ = run(["pack-docs", "--config", str(cfg), "--check"], capsys)
    assert code == 0, out


def test_warm_repack_never_starts_the_model(minilm: Path, tmp_path: Path) -> None:
    cfg = make_project(tmp_path, minilm)
    pack_docs(cfg)
    code = (
        "import sys; from scidx.pack.packer import pack_docs; "
        f"r = pack_docs({str(cfg)!r}, force=True); "
        "assert r.embedded == 0, r; assert 'onnxruntime' not in sys.modules, 'model loaded'"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_index_is_reproducible_from_the_committed_index(minilm: Path, tmp_path: Path) -> None:
    # Machine A packs; machine B (fresh cache, only the committed index) rebuilds the same
    # bytes without running the model, even though its kernels might round differently.
    a = tmp_path / "a"
    cfg = make_project(a, minilm)
    pack_docs(cfg)
    b = tmp_path / "b"
    shutil.copytree(a / "docs", b / "docs")
    shutil.copyfile(a / "docs.scidx", b / "docs.scidx")
    shutil.copyfile(cfg, b / "staticcorpus.json")
    os.environ["SCIDX_CACHE_DIR"] = str(tmp_path / "fresh-cache")
    check = pack_docs(b / "staticcorpus.json", check=True)
    assert not check.stale and check.embedded == 0
    rebuilt = pack_docs(b / "staticcorpus.json", force=True)
    assert rebuilt.embedded == 0
    assert (b / "docs.scidx").read_bytes() == (a / "docs.scidx").read_bytes()


def test_a_different_model_at_the_same_path_is_stale(
    minilm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = copy_model(minilm, tmp_path / "model")
    cfg = make_project(tmp_path / "p", model)
    first = pack_docs(cfg)
    assert first.embedded == 4
    # Same path, other tokenizer bytes: another model as far as the vectors are concerned.
    tok = model / "tokenizer.json"
    tok.write_text(tok.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    code, out, _ = run(["pack-docs", "--config", str(cfg), "--check"], capsys)
    assert code == 6, out
    second = pack_docs(cfg)
    assert (second.embedded, second.cache_hits) == (4, 0)  # the cache missed too
    assert not second.up_to_date


def test_search_finds_the_model_by_env_and_refuses_another(
    minilm: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    packed_with = copy_model(minilm, tmp_path / "packed" / "all-MiniLM-L6-v2-int8")
    cfg = make_project(tmp_path, packed_with)
    pack_docs(cfg)
    shutil.rmtree(packed_with)  # not where it was packed any more (test_local_where_packed.py)
    index = str(tmp_path / "docs.scidx")
    # Keyword search needs no model; vector search names where to point.
    code, out, _ = run(["search", index, "cat", "--mode", "keyword"], capsys)
    assert code == 0 and "pets.md" in out
    code, _, err = run(["search", index, "cat"], capsys)
    assert code == 2
    assert "all-MiniLM-L6-v2-int8" in err and "SCIDX_MODEL_DIR" in err and "--model-dir" in err
    # The parent folder works too: the model is found by its name.
    monkeypatch.setenv("SCIDX_MODEL_DIR", str(minilm.parent))
    code, out, err = run(["search", index, "which pet purrs and sleeps all day", "-k", "1"], capsys)
    assert code == 0 and "pets.md#cats" in out, err
    other = copy_model(minilm, tmp_path / "other" / "all-MiniLM-L6-v2-int8")
    (other / "tokenizer.json").write_bytes((minilm / "tokenizer.json").read_bytes() + b" ")
    monkeypatch.delenv("SCIDX_MODEL_DIR")
    code, _, err = run(["search", index, "cat", "--model-dir", str(other)], capsys)
    assert code == 2 and "different model" in err and str(other) in err


def test_semantic_hits_clear_the_floor_and_nonsense_finds_nothing(
    minilm: Path, tmp_path: Path
) -> None:
    pack_docs(make_project(tmp_path, minilm))
    with load(tmp_path / "docs.scidx", model_dir=minilm) as idx:
        floor = idx.meta["fusion"]["vectorFloor"]
        assert floor == FUSION["vectorFloor"] == 0.4
        # No query term is in the docs: the cats section is found by meaning alone (cosine
        # 0.55, above the floor); the dogs section (0.345, below it) is not.
        assert idx.rank("feline napping", mode="keyword") == []
        for mode in ("vector", "hybrid"):
            assert [i for i, _ in idx.rank("feline napping", mode=mode)] == ["docs/pets.md:cats:0"]
        hits = idx.search_vector(idx.embed_query("feline napping"), k=4)
        by_vector = {h.id: h.score for h in hits}  # a query vector alone is not filtered
        assert by_vector["docs/pets.md:cats:0"] >= floor > by_vector["docs/pets.md:dogs:0"]
        for query in ("xyzzyplugh", "qwv zzkr"):
            for mode in ("keyword", "vector", "hybrid"):
                assert idx.rank(query, mode=mode) == [], (query, mode)


def test_alpha_comes_from_the_header_and_can_be_overridden(minilm: Path, tmp_path: Path) -> None:
    cfg = make_project(tmp_path, minilm)
    pack_docs(cfg)
    with load(tmp_path / "docs.scidx", model_dir=minilm) as idx:
        default = idx.rank("installer for windows", k=6)
        assert default == idx.rank("installer for windows", k=6, alpha=FUSION["alpha"])
        assert default != idx.rank("installer for windows", k=6, alpha=0.0)
    hashing = pack_records([{"id": "a", "text": "hello"}], None)
    assert hashing.data is not None
    path = tmp_path / "h.scidx"
    path.write_bytes(hashing.data)
    with load(path) as idx:
        assert idx.meta["fusion"] == DEFAULT_FUSION


def test_query_time_imports_nothing_until_a_vector_query(minilm: Path, tmp_path: Path) -> None:
    cfg = make_project(tmp_path, minilm)
    pack_docs(cfg)
    code = (
        "import sys, scidx\n"
        f"idx = scidx.load({str(tmp_path / 'docs.scidx')!r}, model_dir={str(minilm)!r})\n"
        "idx.search('cat', mode='keyword')\n"
        "assert 'onnxruntime' not in sys.modules and 'tokenizers' not in sys.modules\n"
        "hit = idx.search('which pet purrs and sleeps all day', k=1)[0]\n"
        "assert hit.id == 'docs/pets.md:cats:0', hit.id\n"
        "assert 'onnxruntime' in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_missing_extra_is_a_clear_error_and_keyword_still_works(
    minilm: Path, tmp_path: Path
) -> None:
    cfg = make_project(tmp_path, minilm)
    pack_docs(cfg)
    index = str(tmp_path / "docs.scidx")
    # sys.modules[name] = None makes `import name` fail exactly as if it were not installed.
    code = (
        "import sys; sys.modules['onnxruntime'] = None\n"
        "from scidx.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    base = [sys.executable, "-c", code, "search", index, "cat", "--model-dir", str(minilm)]
    proc = subprocess.run(base, capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'toolup-rag[local]'" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([*base, "--mode", "keyword"], capture_output=True, text=True)
    assert proc.returncode == 0 and "pets.md" in proc.stdout, proc.stderr
    packing = [
        sys.executable,
        "-c",
        code,
        "pack-docs",
        "--config",
        str(cfg),
        "--force",
        "--no-cache",
    ]
    proc = subprocess.run(packing, capture_output=True, text=True)
    assert proc.returncode == 2 and "pip install 'toolup-rag[local]'" in proc.stderr, proc.stderr


def test_hugging_face_id_resolves_through_the_local_cache_only(
    minilm: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hub = tmp_path / "hub"
    repo = hub / "models--sentence-transformers--all-MiniLM-L6-v2"
    copy_model(minilm, repo / "snapshots" / "0123abcd")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd", encoding="utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    cfg = make_project(tmp_path / "p", "sentence-transformers/all-MiniLM-L6-v2")
    code, out, err = run(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 0, err
    index = str(tmp_path / "p" / "docs.scidx")
    with load(index) as idx:  # found again through the cache, by the id in the stamp
        assert idx.stamp["model"].startswith("sentence-transformers/all-MiniLM-L6-v2@")
        assert idx.search("which pet purrs and sleeps all day", k=1)[0].id == "docs/pets.md:cats:0"
    # A model that is not cached fails at once, without a download attempt.
    cfg = make_project(tmp_path / "q", "sentence-transformers/not-cached")
    code, _, err = run(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 1 and "allowDownload" in err and "not-cached" in err
    # Allowed, but offline: a prompt, clear failure (exit 2), not a hang.
    cfg = make_project(tmp_path / "r", "sentence-transformers/not-cached", allowDownload=True)
    code, _, err = run(["pack-docs", "--config", str(cfg)], capsys)
    assert code == 2 and "could not download" in err, err


# ---------------------------------------------------------------------------------------------
# Bad input: exit codes, nothing written, cache untouched


@pytest.fixture
def warm(minilm: Path, tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    """A packed project whose model folder is a private copy: (config, model, cache bytes)."""
    model = copy_model(minilm, tmp_path / "model")
    cfg = make_project(tmp_path / "p", model)
    (tmp_path / "p" / "docs" / "pets.md").write_text(DOCS["pets.md"] + "\n## Fish\n\nFish swim.\n")
    pack_docs(cfg)
    cache = Path(os.environ["SCIDX_CACHE_DIR"])
    return cfg, model, tree_bytes(cache)


def _fails(cfg: Path, capsys: pytest.CaptureFixture[str], code: int, *needles: str) -> str:
    index = cfg.parent / "docs.scidx"
    before = index.read_bytes()
    cache = Path(os.environ["SCIDX_CACHE_DIR"])
    cached = tree_bytes(cache)
    got, out, err = run(["pack-docs", "--config", str(cfg), "--force"], capsys)
    assert got == code, (out, err)
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    assert index.read_bytes() == before
    assert tree_bytes(cache) == cached
    return err


def test_folder_without_model_onnx(
    warm: tuple[Path, Path, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, model, _ = warm
    (model / "model.onnx").unlink()
    _fails(cfg, capsys, 1, "no model.onnx", str(model))


def test_folder_without_tokenizer(
    warm: tuple[Path, Path, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, model, _ = warm
    (model / "tokenizer.json").unlink()
    _fails(cfg, capsys, 1, "no tokenizer.json", str(model))


def test_missing_model_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = make_project(tmp_path, tmp_path / "nowhere")
    got, _, err = run(["pack-docs", "--config", str(cfg)], capsys)
    assert got == 1 and "model folder not found" in err
    assert not (tmp_path / "docs.scidx").exists()


def test_corrupt_onnx(
    warm: tuple[Path, Path, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, model, _ = warm
    onnx = model / "model.onnx"
    data = onnx.read_bytes()
    onnx.unlink()  # a hard link to the shared file: replace it, do not write through it
    onnx.write_bytes(data[: len(data) // 3])
    _fails(cfg, capsys, 2, str(onnx), "cannot load this model")


def test_tokenizer_of_another_model(
    warm: tuple[Path, Path, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, model, _ = warm
    # A tokenizer whose vocabulary is larger than the model's embedding table.
    tok = json.loads((model / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = tok["model"]["vocab"]
    for i in range(2000):
        vocab[f"extra{i}"] = len(vocab)
    (model / "tokenizer.json").write_text(json.dumps(tok), encoding="utf-8")
    (model / "config.json").unlink()  # so the embedding-table probe, not config.json, tells
    _fails(cfg, capsys, 2, "tokenizer.json does not belong to this model", "32521")


def test_tokenizer_larger_than_config_vocab(
    warm: tuple[Path, Path, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, model, _ = warm
    tok = json.loads((model / "tokenizer.json").read_text(encoding="utf-8"))
    tok["model"]["vocab"]["zzzextra"] = len(tok["model"]["vocab"])
    (model / "tokenizer.json").write_text(json.dumps(tok), encoding="utf-8")
    _fails(cfg, capsys, 2, "30523 tokens", "30522", "belongs to another model")


def test_dimensions_setting_differs_from_the_model(
    minilm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = make_project(tmp_path, minilm, dimensions=512)
    got, _, err = run(["pack-docs", "--config", str(cfg)], capsys)
    assert got == 1 and '"dimensions" is 512' in err and "set it to 384" in err
    assert not (tmp_path / "docs.scidx").exists()


def test_model_output_differs_from_its_pooling_config(
    warm: tuple[Path, Path, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, model, _ = warm
    (model / "model.onnx").unlink()
    (model / "model.onnx").write_bytes(constant_model(8))
    _fails(cfg, capsys, 2, "8-dimensional", "1_Pooling/config.json says 384")


def test_nan_outputs(
    warm: tuple[Path, Path, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, model, _ = warm
    (model / "model.onnx").unlink()
    (model / "model.onnx").write_bytes(nan_model(384))
    _fails(cfg, capsys, 2, "NaN", str(model / "model.onnx"))


def test_bad_settings_are_config_errors(minilm: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="maxTokens 1000 is above the model's limit of 512"):
        LocalEmbedder(minilm, max_tokens=1000)
    with pytest.raises(ConfigError, match="threads must be a positive integer"):
        LocalEmbedder(minilm, threads=0)
    cfg = tmp_path / "staticcorpus.json"
    cfg.write_text(
        json.dumps({"include": ["*.md"], "output": "x.scidx", "embeddingProvider": "local"})
    )
    with pytest.raises(ConfigError, match='"model" is required for embeddingProvider "local"'):
        pack_docs(cfg)
    cfg.write_text(json.dumps({"include": ["*.md"], "output": "x.scidx", "threads": 2}))
    with pytest.raises(
        ConfigError, match='"threads" must be absent for embeddingProvider "hashing"'
    ):
        pack_docs(cfg)


def test_nan_model_fails_at_query_time_too(minilm: Path, tmp_path: Path) -> None:
    model = copy_model(minilm, tmp_path / "m")
    (model / "model.onnx").unlink()
    (model / "model.onnx").write_bytes(nan_model(384))
    emb = LocalEmbedder(model)
    with pytest.raises(ProviderError, match="NaN or infinite values for the probe input"):
        emb.embed_query("cat")


def test_query_embedder_refuses_a_wrong_stamp(minilm: Path, tmp_path: Path) -> None:
    cfg = make_project(tmp_path, minilm)
    pack_docs(cfg)
    model = copy_model(minilm, tmp_path / "m")
    emb = LocalEmbedder(model, max_tokens=128)  # another identity: the cut changes vectors
    with pytest.raises(QueryEmbeddingError, match="the query embedder is local/"):
        load(tmp_path / "docs.scidx", query_embedder=emb)


# ---------------------------------------------------------------------------------------------
# The shipped eval gate with the local provider


def test_shipped_eval_gate_passes_with_the_local_provider(
    minilm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Kelpie fixture over the example docs, packed by ``staticcorpus.example.local.json``.

    Refresh after an intended change: ``SCIDX_MODEL_DIR=../shared/models/all-MiniLM-L6-v2-int8
    toolup-rag pack-docs --config staticcorpus.example.local.json && toolup-rag eval
    docs/eval/kelpie.json --index fixtures.local.scidx --out docs/eval/kelpie.local.baseline.json``
    """
    from scidx.evaluation.metrics import compare_to_baseline, run_eval

    shutil.copytree(ROOT / "fixtures" / "docs", tmp_path / "fixtures" / "docs")
    settings = json.loads((ROOT / "staticcorpus.example.local.json").read_text(encoding="utf-8"))
    assert settings["model"] == "../shared/models/all-MiniLM-L6-v2-int8"
    settings["model"] = str(minilm)  # the same model, from the temp project
    (tmp_path / "staticcorpus.json").write_text(json.dumps(settings), encoding="utf-8")
    result = pack_docs(tmp_path / "staticcorpus.json", use_cache=False)
    assert result.output is not None
    monkeypatch.setenv("SCIDX_MODEL_DIR", str(minilm))
    report = run_eval(ROOT / "docs" / "eval" / "kelpie.json", index=result.output)
    baseline_path = ROOT / "docs" / "eval" / "kelpie.local.baseline.json"
    baseline = json.loads(baseline_path.read_text(encoding="utf-8"))
    gate = compare_to_baseline(report, baseline, tolerance=0.05)
    assert gate.compared == ["hybrid", "keyword", "vector"]
    assert gate.ok, "; ".join(r.describe() for r in gate.failed + gate.queries)
    # The semantic vector leg beats the hashing one on this fixture (0.937 vs 0.857 nDCG@10).
    hashing = json.loads((ROOT / "docs/eval/kelpie.baseline.json").read_text(encoding="utf-8"))
    local_ndcg = report["modes"]["vector"]["summary"]["ndcg@10"]
    assert local_ndcg > hashing["modes"]["vector"]["summary"]["ndcg@10"]
