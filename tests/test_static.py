"""The ``static`` provider: WordPiece parity, distillation, the token table, packing and search."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import scidx
from scidx.embed.distill import distill, distill_bytes
from scidx.embed.static import COUNTS_ARRAY, DEFAULT_TABLE, StaticEmbedder, load_table
from scidx.embed.static_table import MAGIC, parse_table, read_table
from scidx.embed.wordpiece import WordPiece
from scidx.errors import ConfigError, CorruptIndexError, EmbeddingError, QueryEmbeddingError
from scidx.pack.config import config_from_dict
from scidx.pack.packer import pack_docs, pack_records
from support.indexes import rewrite
from support.onnx_models import nan_model, token_table_model

MODEL = "models/all-MiniLM-L6-v2-int8"
CORPORA = sorted(
    [
        "commonmark-spec",
        "fastapi-docs-de",
        "fastapi-docs-en",
        "gemini-cli-docs",
        "kubernetes-website-en",
        "mkdocs-material-docs",
        "myst-parser-docs",
        "nonebot2-docs-zh",
        "openai-agents-python-docs-en",
        "opentelemetry-docs-ja",
        "rails-guides",
        "react-native-website-docs",
        "rust-book",
        "starlight-docs-en",
        "tldr-pages-en",
        "vitepress-docs-en",
    ]
)

# --- WordPiece parity with the tokenizers library ---------------------------------------------


def _reference(shared_dir: Path) -> Any:
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(shared_dir / MODEL / "tokenizer.json"))
    ref.no_truncation()
    ref.no_padding()
    return ref


HARD_TEXTS = [
    "Héllo WORLD, naïve café — “quoted” ‘text’…",
    "kubectl apply -f ./pod.yaml --dry-run=client",
    "中文字符和日本語のテキスト、한국어",
    "tab\there\x0bvt\x0cff\x1cfs\x85nel\u2028ls\u00a0nbsp\u3000ideo",
    "ctl\x01chars\x7fdel\ufffdrepl\x00nul\u200bzwsp\u00adshy",
    "emoji 🚀🎉 and ＦＵＬＬＷＩＤＴＨ and ﬁ ligature and Ⅻ roman",
    "x" * 101 + " " + "y" * 100,
    "Straße İstanbul ΣΊΣΥΦΟΣ ǅ",
    "e\u0301 combining a\u0308 ring\u030a",
    "",
    "   \n\n  ",
]


def test_wordpiece_matches_tokenizers_on_hard_text(shared_dir: Path) -> None:
    ref = _reference(shared_dir)
    wp = WordPiece.from_file(shared_dir / MODEL / "tokenizer.json")
    for text in HARD_TEXTS:
        assert wp.encode(text) == ref.encode(text, add_special_tokens=False).ids, text


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
def test_wordpiece_matches_tokenizers_on_every_shared_corpus(shared_dir: Path, corpus: str) -> None:
    ref = _reference(shared_dir)
    wp = WordPiece.from_file(shared_dir / MODEL / "tokenizer.json")
    root = shared_dir / "corpora" / corpus
    files = sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix in (".md", ".mdx", ".txt")
    )
    assert files, root
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        assert wp.encode(text) == ref.encode(text, add_special_tokens=False).ids, path


def test_wordpiece_refuses_other_tokenizers() -> None:
    doc = {
        "model": {"type": "BPE", "vocab": {}},
        "normalizer": None,
        "pre_tokenizer": None,
    }
    with pytest.raises(ConfigError, match="the tokenizer model is not WordPiece"):
        WordPiece.from_json(doc, "tok.json")


# --- distillation --------------------------------------------------------------------------

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "cat", "dog", "pet", "car", "##s", "run"]


def _tiny_model(folder: Path, *, nan: bool = False) -> Path:
    """A model folder: an ONNX encoder whose token states are fixed rows, and its tokenizer."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(7)
    # Rows on a 1/64 grid: exact in float32, so the distiller's input is exact arithmetic.
    word = (np.round(rng.normal(size=(len(VOCAB), 8)) * 64) / 64).tolist()
    (folder / "model.onnx").write_bytes(nan_model(8) if nan else token_table_model(word))
    tokenizer = {
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": True,
            "strip_accents": None,
            "lowercase": True,
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": {t: i for i, t in enumerate(VOCAB)},
        },
    }
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    return folder


#: The sha256 of the tiny model's table: the distillation's bytes must not drift.
GOLDEN_TINY = "385b2294f0aeaecdfee9851b8401de4298d16bc84ed334ebe9f3120fea152371"


def test_distillation_is_deterministic(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    folder = _tiny_model(tmp_path / "tiny")
    first = distill_bytes(folder, dimensions=4, name="tiny")
    second = distill_bytes(folder, dimensions=4, name="tiny")
    assert first == second
    assert hashlib.sha256(first).hexdigest() == GOLDEN_TINY
    table = parse_table(first, "tiny")
    assert table.dimensions == 4 and table.vocab_size == len(VOCAB)
    assert table.tokenizer.encode("Cats run") == [5, 9, 10]
    assert int(np.abs(table.rows).max()) == 127  # every row's largest value is +-127


def test_distill_writes_table_and_provenance(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    folder = _tiny_model(tmp_path / "tiny")
    result = distill(folder, tmp_path / "out" / "t.scidxtok", dimensions=3, name="tiny")
    data = (tmp_path / "out" / "t.scidxtok").read_bytes()
    prov = json.loads((tmp_path / "out" / "t.scidxtok.provenance.json").read_text())
    assert prov["sha256"] == hashlib.sha256(data).hexdigest() == result["sha256"]
    assert prov["dimensions"] == 3 and prov["method"]["input"] == "[CLS] token [SEP]"
    onnx_sha = hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest()
    assert prov["source"]["files"]["model.onnx"] == onnx_sha


def test_distill_refuses_a_nan_model(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    folder = _tiny_model(tmp_path / "nan", nan=True)
    with pytest.raises(EmbeddingError, match="NaN or infinite"):
        distill_bytes(folder, dimensions=4)


def test_distill_refuses_too_many_dimensions(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    folder = _tiny_model(tmp_path / "tiny")
    with pytest.raises(ConfigError, match=r"dimensions 9 must be in 1\.\.8"):
        distill_bytes(folder, dimensions=9)


def test_distill_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("onnxruntime")
    from scidx.cli.run import main

    folder = _tiny_model(tmp_path / "tiny")
    out = tmp_path / "t.scidxtok"
    with pytest.raises(SystemExit) as exc:
        main(["distill", str(folder), str(out), "-d", "4"])
    assert exc.value.code == 0
    assert read_table(out).dimensions == 4
    with pytest.raises(SystemExit) as exc:
        main(["distill", str(tmp_path / "nowhere"), str(out)])
    assert exc.value.code == 1
    assert "model.onnx: not found" in capsys.readouterr().err


# --- the table file ---------------------------------------------------------------------------


def _table_bytes() -> bytes:
    return DEFAULT_TABLE.read_bytes()


def _data_start(data: bytes) -> int:
    hlen = struct.unpack_from("<I", data, 12)[0]
    return 16 + hlen + (-hlen) % 4


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: b"NOTATABL" + d[8:], "does not start with the SCIDXTOK magic"),
        (lambda d: d[:-1], "bytes, but 30522 rows of 128 need"),
        (lambda d: d[:8] + struct.pack("<I", 2) + d[12:], "table format 2"),
        (lambda d: d[:12] + struct.pack("<I", 1 << 30) + d[16:], "header length"),
        (lambda d: d[:16] + b"\xff" + d[17:], "its header is not JSON"),
    ],
)
def test_a_damaged_table_is_a_clear_error(damage: Any, message: str) -> None:
    with pytest.raises(ConfigError, match="not a valid static token table") as exc:
        parse_table(damage(_table_bytes()), "t.scidxtok")
    assert message in str(exc.value) and "toolup-rag distill" in str(exc.value)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), -1.0, 5.0])
def test_a_table_with_hostile_scales_is_refused(scale: float) -> None:
    data = bytearray(_table_bytes())
    start = _data_start(bytes(data))
    struct.pack_into("<f", data, start + 4 * 17, scale)
    with pytest.raises(ConfigError, match="row 17 has scale"):
        parse_table(bytes(data), "t.scidxtok")


def test_a_table_with_a_hostile_row_is_refused() -> None:
    data = bytearray(_table_bytes())
    start = _data_start(bytes(data)) + 4 * 30522
    data[start + 5] = 0x80  # -128
    with pytest.raises(ConfigError, match="a row holds -128"):
        parse_table(bytes(data), "t.scidxtok")


def _with_header(change: Any) -> bytes:
    data = _table_bytes()
    hlen = struct.unpack_from("<I", data, 12)[0]
    header = json.loads(data[16 : 16 + hlen])
    change(header)
    table = parse_table(data, "t")
    from scidx.embed.static_table import encode_table

    return encode_table(table.rows, table.scales, header)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda h: h.update(sifA="big"), "`sifA` is 'big'"),
        (lambda h: h.update(sifA=0), "`sifA` is 0"),
        (lambda h: h.update(languages="en"), "`languages` is 'en'"),
        (lambda h: h.update(dimensions=True), "`dimensions` is True"),
        (lambda h: h["tokenizer"]["model"].update(max_input_chars_per_word="x"), "max_input_chars"),
        (lambda h: h["tokenizer"].update(model=[]), "the tokenizer model is not WordPiece"),
        (lambda h: h["tokenizer"]["model"]["vocab"].update({"zz": 40000}), "ids are not distinct"),
    ],
)
def test_a_table_with_a_hostile_header_is_refused(change: Any, message: str) -> None:
    with pytest.raises(ConfigError, match="not a valid static token table") as exc:
        parse_table(_with_header(change), "t.scidxtok")
    assert message in str(exc.value)


def test_the_shipped_table_matches_its_provenance() -> None:
    prov_path = DEFAULT_TABLE.with_name(DEFAULT_TABLE.name + ".provenance.json")
    prov = json.loads(prov_path.read_text())
    table = load_table()
    assert prov["sha256"] == table.sha256
    assert table.dimensions == 128 and table.vocab_size == 30522
    assert table.header["languages"] == ["en"]
    assert (DEFAULT_TABLE.parent / "LICENSE").is_file()
    assert "Apache License" in (DEFAULT_TABLE.parent / "NOTICE.md").read_text()


# --- packing and searching --------------------------------------------------------------------

DOCS = {
    "install.md": "# Install\n\n## Linux\n\nRun the installer script to set up the agent on a "
    "server.\n\n## Windows\n\nDownload the MSI package and double-click it.\n",
    "pets.md": "# Pets\n\n## Cats\n\nA cat is a small furry animal that purrs and sleeps all "
    "day.\n\n## Dogs\n\nDogs bark at the postman and love long walks.\n",
    "cars.md": "# Cars\n\n## Engines\n\nAn engine turns fuel into motion.\n\n## Tyres\n\nTyres "
    "grip the road; change them when the tread wears down.\n",
}


def _pack(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    root.mkdir(parents=True)
    for name, text in DOCS.items():
        (root / name).write_text(text, encoding="utf-8")
    out = root / "docs.scidx"
    cfg = config_from_dict(
        {"include": ["*.md"], "output": str(out), "embeddingProvider": "static"}, root=root
    )
    pack_docs(cfg)
    return out


def test_static_pack_records_its_table_weights_and_fusion(tmp_path: Path) -> None:
    out = _pack(tmp_path)
    with scidx.load(out) as index:
        stamp = index.stamp
        assert stamp["provider"] == "static" and stamp["dimensions"] == 128
        assert stamp["table"] == load_table().sha256 and stamp["languages"] == ["en"]
        assert stamp["weights"]["method"] == "sif" and len(stamp["weights"]["counts"]) == 16
        header = scidx.inspect(out) if hasattr(scidx, "inspect") else None
        del header
    raw = out.read_bytes()
    from scidx.index import format

    meta = format.read_header(raw).meta
    assert meta["fusion"] == {
        "method": "rerank",
        "alpha": 0.4,
        "candidates": 100,
        "prfDocs": 0,
        "prfBeta": 0.0,
        "vectorFloor": None,
    }
    counts = np.array(format.array_view(raw, format.read_header(raw), COUNTS_ARRAY))
    assert counts.shape == (30522,) and int(counts.sum()) > 50


def test_static_packs_are_byte_identical(tmp_path: Path) -> None:
    a = _pack(tmp_path / "a").read_bytes()
    b = _pack(tmp_path / "b").read_bytes()
    assert a == b


def test_static_hybrid_only_reranks_keyword_matches(tmp_path: Path) -> None:
    out = _pack(tmp_path)
    with scidx.load(out) as index:
        keyword = {h.id for h in index.search("animal that purrs", mode="keyword", k=10)}
        hybrid = index.search("animal that purrs", mode="hybrid", k=10)
        assert hybrid and hybrid[0].heading_path[-1] == "Cats"
        assert {h.id for h in hybrid} <= keyword
        for nonsense in ("xyzzyplugh", "qwxzv jkplm"):
            for mode in ("hybrid", "vector", "keyword"):
                assert index.search(nonsense, mode=mode, k=10) == []
        scores = [h.score for h in hybrid]
        assert scores == sorted(scores, reverse=True) and 0 < scores[0] <= 1


def test_static_query_vector_is_the_packed_weighting(tmp_path: Path) -> None:
    out = _pack(tmp_path)
    with scidx.load(out) as index:
        raw = out.read_bytes()
        from scidx.index import format

        counts = np.array(format.array_view(raw, format.read_header(raw), COUNTS_ARRAY))
        emb = StaticEmbedder(load_table(), counts)
        texts = ["Tyres grip the road", "dogs bark"]
        ours = emb.embed(texts)
        hits = index.search("Tyres grip the road", mode="vector", k=1)
        assert hits and hits[0].heading_path[-1] == "Tyres"
        assert ours.shape == (2, 128)
        assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_cached_vectors_of_another_weighting_are_not_reused(tmp_path: Path) -> None:
    """The disk cache keys by model id, which carries the weights: a re-pack after the corpus
    changed gives the bytes of a fresh pack, not vectors weighted for the old corpus."""
    out = _pack(tmp_path / "a")
    root = out.parent
    (root / "more.md").write_text("# More\n\n## Cats again\n\nCats purr, cats nap.\n")
    cfg = {"include": ["*.md"], "output": str(out), "embeddingProvider": "static"}
    pack_docs(config_from_dict(cfg, root=root))  # the cache holds the old weighting's vectors
    warm = out.read_bytes()
    pack_docs(config_from_dict(cfg, root=root), force=True, use_cache=False)
    assert out.read_bytes() == warm


def test_pack_records_fits_the_static_weights(tmp_path: Path) -> None:
    emb = StaticEmbedder(load_table())
    records = [{"id": "a", "text": "cats purr"}, {"id": "b", "text": "dogs bark loudly"}]
    result = pack_records(records, tmp_path / "r.scidx", embedder=emb)
    assert result.chunks == 2 and emb.counts is not None
    with scidx.load(tmp_path / "r.scidx") as index:
        assert index.search("dogs bark", k=1)[0].id == "b"


def _mutated(tmp_path: Path, mutate: Any) -> Path:
    data = _pack(tmp_path).read_bytes()
    bad = tmp_path / "bad.scidx"
    bad.write_bytes(rewrite(data, mutate))
    return bad


def test_an_index_without_its_counts_is_corrupt(tmp_path: Path) -> None:
    bad = _mutated(tmp_path, lambda arrays, meta: arrays.pop(COUNTS_ARRAY))
    with pytest.raises(CorruptIndexError, match="`static.counts` is missing"):
        scidx.load(bad)


def test_an_index_with_hostile_counts_is_a_clear_error(tmp_path: Path) -> None:
    def mutate(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        arrays[COUNTS_ARRAY] = arrays[COUNTS_ARRAY][:100].copy()

    bad = _mutated(tmp_path, mutate)
    with scidx.load(bad) as index:
        assert index.search("cat", mode="keyword")
        with pytest.raises(QueryEmbeddingError, match="static token counts have shape"):
            index.search("cat", mode="hybrid")


def test_an_index_with_swapped_counts_is_refused(tmp_path: Path) -> None:
    def mutate(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        arrays[COUNTS_ARRAY] = arrays[COUNTS_ARRAY] + np.uint32(1)

    bad = _mutated(tmp_path, mutate)
    with scidx.load(bad) as index, pytest.raises(QueryEmbeddingError, match="does not match"):
        index.search("cat", mode="hybrid")


def test_an_index_of_another_table_is_refused(tmp_path: Path) -> None:
    def mutate(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        meta["provider"]["table"] = "0" * 64

    bad = _mutated(tmp_path, mutate)
    with scidx.load(bad) as index, pytest.raises(QueryEmbeddingError, match="static table 0000"):
        index.search("cat", mode="hybrid")


@pytest.mark.parametrize("candidates", [0, -1, True, 1.5, None, 10**9])
def test_hostile_rerank_candidates_are_corrupt(tmp_path: Path, candidates: object) -> None:
    def mutate(arrays: dict[str, Any], meta: dict[str, Any]) -> None:
        meta["fusion"]["candidates"] = candidates

    bad = _mutated(tmp_path, mutate)
    with pytest.raises(CorruptIndexError, match="meta `fusion.candidates`"):
        scidx.load(bad)


def test_the_table_ships_without_the_build_extras(tmp_path: Path) -> None:
    assert MAGIC == DEFAULT_TABLE.read_bytes()[:8]
    import subprocess
    import sys

    code = (
        "import sys, scidx; i = scidx.load(sys.argv[1]); "
        "print(len(i.search('animal that purrs', mode='hybrid')));"
        "assert not {'onnxruntime', 'tokenizers', 'typer'} & set(sys.modules), sys.modules"
    )
    out = _pack(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 1
