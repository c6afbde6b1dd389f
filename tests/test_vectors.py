"""Vector encodings: int8 and binary indexes (bytes, search agreement, reuse, bad files)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import scidx
from scidx.errors import (
    ConfigError,
    CorruptIndexError,
    IndexFormatError,
    QueryError,
    UnsupportedFormatVersionError,
)
from scidx.index.format import array_view, read_header
from scidx.index.vectors import (
    BinaryVectors,
    bits_width,
    encode_vectors,
    projection,
    quantize_int8,
    sign_bits,
)
from scidx.pack.config import config_from_dict
from scidx.pack.packer import pack_docs, pack_records
from support.indexes import fixture_records as _records
from support.indexes import replace_arrays as _rewrite

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_DOCS = ROOT / "fixtures" / "docs"


@pytest.fixture(scope="module")
def packed() -> dict[str, bytes]:
    records = _records()
    out = {}
    for encoding in ("float32", "int8", "binary"):
        result = pack_records(records, None, dimensions=128, use_cache=False, vectors=encoding)
        assert result.data is not None
        out[encoding] = result.data
    return out


def _unit_rows(n: int, d: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


# -- encoders -----------------------------------------------------------------------------------


def test_int8_codes_round_trip_within_half_a_step() -> None:
    v = _unit_rows(500, 96)
    v[7] = 0.0  # a text with no features
    codes, scale = quantize_int8(v)
    assert codes.dtype == np.int8 and scale.dtype == np.float32
    assert int(codes.min()) >= -127 and int(codes.max()) <= 127
    assert scale[7] == 0 and not codes[7].any()
    decoded = codes.astype(np.float64) * scale[:, None]
    assert np.all(np.abs(decoded - v) <= scale[:, None] / 2 + 1e-7)
    # Each row's largest magnitude maps to +-127 exactly.
    assert np.all(np.abs(codes[np.arange(500) != 7]).max(axis=1) == 127)


def test_int8_reencoding_a_decoded_row_gives_the_same_bytes() -> None:
    codes, scale = quantize_int8(_unit_rows(2000, 64, seed=3))
    decoded = (codes.astype(np.float32) * scale[:, None]).astype(np.float32)
    again_codes, again_scale = quantize_int8(decoded)
    np.testing.assert_array_equal(again_codes, codes)
    np.testing.assert_array_equal(again_scale, scale)


def test_projection_is_fixed_random_signs() -> None:
    r = projection(64)
    assert r.shape == (64, 64) and set(np.unique(r)) == {-1.0, 1.0}
    assert abs(float(r.mean())) < 0.05  # balanced
    # Pinned: the format fixes these values (splitmix64 of the row-major position).
    assert r[0, :8].tolist() == [-1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0, 1.0]
    assert projection(8)[0, 0] == r[0, 0] and projection(8)[1, 0] == r[0, 8]


@pytest.mark.parametrize("dims", [8, 64, 70, 128, 1536])
def test_sign_bits_layout(dims: int) -> None:
    codes, _ = quantize_int8(_unit_rows(5, dims))
    bits = sign_bits(codes)
    assert bits.shape == (5, bits_width(dims)) and bits_width(dims) % 8 == 0
    unpacked = np.unpackbits(bits, axis=1)
    exact = codes.astype(np.int64) @ projection(dims).astype(np.int64).T  # integer oracle
    np.testing.assert_array_equal(unpacked[:, :dims], (exact > 0).astype(np.uint8))
    assert not unpacked[:, dims:].any()  # padding bits are zero


def test_hamming_matches_unpacked_oracle() -> None:
    for dims in (64, 200, 1536):
        v = _unit_rows(300, dims, seed=dims)
        arrays = encode_vectors(v, "binary")
        store = BinaryVectors(
            arrays["vectors.bits"], arrays["vectors.i8"], arrays["vectors.scale"], "<t>"
        )
        q = _unit_rows(1, dims, seed=99)[0]
        rows = np.unpackbits(arrays["vectors.bits"], axis=1)[:, :dims]
        qbits = (projection(dims) @ q.astype(np.float64)) > 0
        expected = (rows.astype(bool) != qbits).sum(axis=1)
        np.testing.assert_array_equal(store.hamming(q), expected)


def test_binary_pool_is_the_closest_rows_ties_by_row() -> None:
    v = _unit_rows(1000, 64)
    arrays = encode_vectors(v, "binary")
    store = BinaryVectors(
        arrays["vectors.bits"], arrays["vectors.i8"], arrays["vectors.scale"], "<t>", rescore=50
    )
    q = v[10]
    pool = store.candidates(q, 10)
    assert pool is not None and pool.shape == (50,)
    dist = store.hamming(q)
    expected = np.lexsort((np.arange(1000), dist))[:50]
    np.testing.assert_array_equal(pool, np.sort(expected))
    assert 10 in pool
    # A pool as large as the index scores every row.
    store.rescore = 1000
    assert store.candidates(q, 10) is None


# -- packed indexes -----------------------------------------------------------------------------


def test_encodings_are_recorded_and_smaller(packed: dict[str, bytes]) -> None:
    sizes = {}
    for encoding, data in packed.items():
        header = read_header(data)
        assert header.meta["vectors"] == {"encoding": encoding}
        # vectors.key (the per-row binding hash, packer 4) is not part of the encoding.
        names = {n for n in header.arrays if n.startswith("vectors") and n != "vectors.key"}
        sizes[encoding] = sum(header.arrays[n].nbytes for n in names)
        expected = {
            "float32": {"vectors"},
            "int8": {"vectors.i8", "vectors.scale"},
            "binary": {"vectors.i8", "vectors.scale", "vectors.bits"},
        }[encoding]
        assert names == expected
    n = read_header(packed["int8"]).meta["counts"]["chunks"]
    assert sizes["int8"] == n * (128 + 4) <= 0.26 * sizes["float32"]
    assert sizes["binary"] - sizes["int8"] == n * bits_width(128)


def test_packing_is_deterministic_per_encoding(packed: dict[str, bytes]) -> None:
    records = _records()[::-1]
    for encoding in ("int8", "binary"):
        again = pack_records(records, None, dimensions=128, use_cache=False, vectors=encoding)
        assert again.data == packed[encoding]


def test_stored_vectors_decode_close_to_float32(packed: dict[str, bytes]) -> None:
    exact = scidx.load_bytes(packed["float32"]).vectors
    for encoding in ("int8", "binary"):
        idx = scidx.load_bytes(packed[encoding])
        assert idx.vector_store.encoding == encoding
        decoded = idx.vectors
        assert decoded.shape == exact.shape and decoded.dtype == np.float32
        assert float(np.abs(decoded - exact).max()) < 0.01
        q = exact[5]
        np.testing.assert_allclose(idx.vector_store @ q, decoded @ q, atol=1e-5)


def test_search_agrees_with_float32(packed: dict[str, bytes]) -> None:
    ref = scidx.load_bytes(packed["float32"])
    for encoding in ("int8", "binary"):
        idx = scidx.load_bytes(packed[encoding], rescore=64)
        for query in ("install on windows", "configuration file format", "search the docs"):
            assert idx.rank(query, mode="keyword") == ref.rank(query, mode="keyword")
            # By vector, every chunk is a candidate (a text query keeps only chunks with
            # evidence, which for the hashing provider are the keyword matches).
            qvec = ref.embed_query(query)
            want = [h.id for h in ref.search_vector(qvec, k=10)]
            got = [h.id for h in idx.search_vector(qvec, k=10)]
            assert len(want) == 10 and len(set(want) & set(got)) >= 8, (encoding, query)
            assert got[0] == want[0]
            for mode in ("vector", "hybrid"):
                want = [i for i, _ in ref.rank(query, k=10, mode=mode)]
                got = [i for i, _ in idx.rank(query, k=10, mode=mode)]
                assert want and len(set(want) & set(got)) >= min(8, len(want)), (encoding, mode)
                assert got[0] == want[0]


def test_binary_with_a_full_pool_equals_int8(packed: dict[str, bytes]) -> None:
    int8 = scidx.load_bytes(packed["int8"])
    binary = scidx.load_bytes(packed["binary"], rescore=100_000)
    for query in ("install", "error message when packing"):
        assert binary.rank(query, k=10, mode="vector") == int8.rank(query, k=10, mode="vector")


def test_binary_filters_and_min_score_score_every_row(packed: dict[str, bytes]) -> None:
    int8 = scidx.load_bytes(packed["int8"])
    binary = scidx.load_bytes(packed["binary"], rescore=1)
    for kwargs in ({"source": "faq*"}, {"min_score": 0.05}):
        want = int8.rank("how do I install it", k=5, mode="vector", **kwargs)
        assert binary.rank("how do I install it", k=5, mode="vector", **kwargs) == want


@pytest.mark.parametrize("encoding", ["int8", "binary"])
def test_query_vectors_are_validated_as_for_float32(
    packed: dict[str, bytes], encoding: str
) -> None:
    idx = scidx.load_bytes(packed[encoding])
    with pytest.raises(QueryError, match="128 dimensions"):
        idx.search_vector(np.ones(64))
    with pytest.raises(QueryError, match="NaN"):
        idx.search_vector(np.full(128, np.nan))
    with pytest.raises(QueryError, match="all zeros"):
        idx.search_vector(np.zeros(128))
    hits = idx.search_vector(idx.vectors[3] * 1e30, k=1)
    assert hits[0].id == idx.chunk(3).id


def test_bad_rescore_is_a_query_error(packed: dict[str, bytes]) -> None:
    for bad in (0, -1, True, 2.5):
        with pytest.raises(QueryError, match="rescore"):
            scidx.load_bytes(packed["binary"], rescore=bad)  # type: ignore[arg-type]


# -- corrupt files ------------------------------------------------------------------------------


def test_unknown_encoding_is_named(packed: dict[str, bytes]) -> None:
    meta = dict(read_header(packed["int8"]).meta)
    meta["vectors"] = {"encoding": "pq4"}
    with pytest.raises(UnsupportedFormatVersionError, match=r"vectors.encoding.*'pq4'"):
        scidx.load_bytes(_rewrite(packed["int8"], meta=meta))
    for bad in ("int8", {"encoding": 8}, {}):
        meta["vectors"] = bad
        with pytest.raises(CorruptIndexError, match="meta `vectors"):
            scidx.load_bytes(_rewrite(packed["int8"], meta=meta))


def test_wrong_scale_shape_is_named(packed: dict[str, bytes]) -> None:
    n = read_header(packed["int8"]).meta["counts"]["chunks"]
    for bad in (np.ones(n - 1, "<f4"), np.ones((n, 1), "<f4"), np.ones(n, "<u4")):
        with pytest.raises(CorruptIndexError, match="vectors.scale"):
            scidx.load_bytes(_rewrite(packed["int8"], vectors__scale=bad))
    with pytest.raises(CorruptIndexError, match="no array `vectors.scale`"):
        scidx.load_bytes(_rewrite(packed["int8"], vectors__scale=None))


def test_binary_row_width_mismatch_is_named(packed: dict[str, bytes]) -> None:
    n = read_header(packed["binary"]).meta["counts"]["chunks"]
    with pytest.raises(CorruptIndexError, match=r"`vectors.bits` has rows of 8 bytes.*need 16"):
        scidx.load_bytes(_rewrite(packed["binary"], vectors__bits=np.zeros((n, 8), "<u1")))
    with pytest.raises(CorruptIndexError, match="vectors.bits"):
        scidx.load_bytes(_rewrite(packed["binary"], vectors__bits=np.zeros((n + 1, 16), "<u1")))


def test_int8_codes_with_wrong_dims_are_named(packed: dict[str, bytes]) -> None:
    n = read_header(packed["int8"]).meta["counts"]["chunks"]
    with pytest.raises(CorruptIndexError, match=r"`vectors.i8` has shape \[\d+, 64\]"):
        scidx.load_bytes(_rewrite(packed["int8"], vectors__i8=np.zeros((n, 64), "<u1")))


def test_verify_checks_codes_scales_and_padding(packed: dict[str, bytes]) -> None:
    header = read_header(packed["binary"])
    codes = np.array(array_view(packed["binary"], header, "vectors.i8"))
    codes[2, 3] = 0x80  # -128
    forged = _rewrite(packed["binary"], vectors__i8=codes)
    scidx.load_bytes(forged)  # O(1) open does not look at the values...
    with pytest.raises(CorruptIndexError, match="-128"):
        scidx.load_bytes(forged, verify=True)  # ...verify does
    scale = np.array(array_view(packed["int8"], read_header(packed["int8"]), "vectors.scale"))
    scale[0] = np.nan
    with pytest.raises(CorruptIndexError, match="vectors.scale"):
        scidx.load_bytes(_rewrite(packed["int8"], vectors__scale=scale), verify=True)
    records = _records()[:20]
    odd = pack_records(records, None, dimensions=70, use_cache=False, vectors="binary").data
    assert odd is not None
    bits = np.array(array_view(odd, read_header(odd), "vectors.bits"))
    bits[0, -1] |= 1  # a padding bit (70 dims in 16 bytes)
    with pytest.raises(CorruptIndexError, match="padding bits"):
        scidx.load_bytes(_rewrite(odd, vectors__bits=bits), verify=True)
    scidx.load_bytes(odd, verify=True)


def test_cli_exit_code_for_unknown_encoding(packed: dict[str, bytes], tmp_path: Path) -> None:
    from scidx.cli import main

    meta = dict(read_header(packed["int8"]).meta)
    meta["vectors"] = {"encoding": "float8"}
    path = tmp_path / "bad.scidx"
    path.write_bytes(_rewrite(packed["int8"], meta=meta))
    with pytest.raises(SystemExit) as exc:
        main(["search", str(path), "install", "--mode", "keyword"])
    assert exc.value.code == 4
    assert issubclass(UnsupportedFormatVersionError, IndexFormatError)


# -- configuration and reuse ----------------------------------------------------------------------


def test_config_vectors_key(tmp_path: Path) -> None:
    base = {"include": ["*.md"], "output": "x.scidx"}
    assert config_from_dict(base, root=tmp_path).vectors == "int8"
    plain = config_from_dict(base, root=tmp_path).config_hash()
    explicit = config_from_dict({**base, "vectors": "int8"}, root=tmp_path).config_hash()
    assert plain == explicit  # the default, named or not
    f32 = config_from_dict({**base, "vectors": "float32"}, root=tmp_path)
    assert f32.vectors == "float32" and f32.config_hash() != plain
    # float32 hashes as a config without the key did before encodings existed.
    assert "vectors" not in f32.canonical()
    with pytest.raises(ConfigError, match='"vectors"'):
        config_from_dict({**base, "vectors": "int4"}, root=tmp_path)
    with pytest.raises(ConfigError, match="vectors"):
        pack_records([{"id": "a", "text": "b"}], None, vectors="float16")


def _project(root: Path, encoding: str) -> Path:
    (root / "docs").mkdir(parents=True, exist_ok=True)
    for path in sorted(FIXTURE_DOCS.glob("*.md"))[:4]:
        (root / "docs" / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    cfg = {"include": ["docs/*.md"], "output": "out.scidx", "dimensions": 64, "vectors": encoding}
    (root / "staticcorpus.json").write_text(json.dumps(cfg), encoding="utf-8")
    return root / "staticcorpus.json"


@pytest.mark.parametrize("encoding", ["int8", "binary"])
def test_vectors_of_a_compact_index_are_reencoded_not_reembedded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    cfg = _project(tmp_path, encoding)
    first = pack_docs(cfg)
    out = tmp_path / "out.scidx"
    assert read_header(out.read_bytes()).meta["vectors"]["encoding"] == encoding
    doc = next((tmp_path / "docs").glob("*.md"))
    doc.write_text(doc.read_text(encoding="utf-8") + "\n\n## Added\n\nA new paragraph.\n")
    monkeypatch.setenv("SCIDX_CACHE_DIR", str(tmp_path / "empty-cache"))
    second = pack_docs(cfg)
    assert second.embedded == 1 and second.cache_hits == second.chunks - 1
    assert second.chunks == first.chunks + 1
    # The reused vectors re-encode to exactly what a fresh build writes.
    data = out.read_bytes()
    fresh = pack_docs(cfg, force=True, use_cache=False)
    assert fresh.embedded == fresh.chunks
    assert out.read_bytes() == data


def test_compact_vectors_are_not_reused_for_a_float32_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = _project(tmp_path, "int8")
    pack_docs(cfg)
    settings = json.loads(cfg.read_text())
    cfg.write_text(json.dumps({**settings, "vectors": "float32"}))
    monkeypatch.setenv("SCIDX_CACHE_DIR", str(tmp_path / "empty-cache"))
    again = pack_docs(cfg)
    # int8 rows are less precise than float32: the provider is asked again.
    assert again.embedded == again.chunks
    data = (tmp_path / "out.scidx").read_bytes()
    pack_docs(cfg, force=True, use_cache=False)
    assert (tmp_path / "out.scidx").read_bytes() == data


def test_threaded_int8_scores_equal_single_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import scidx.index.vectors as vectors_mod

    v = _unit_rows(3000, 48, seed=5)
    arrays = encode_vectors(v, "int8")
    store = vectors_mod.Int8Vectors(arrays["vectors.i8"], arrays["vectors.scale"], "<t>")
    q = v[17]
    monkeypatch.setattr(vectors_mod, "_THREADED_ROWS", 10**9)
    single = store @ q
    monkeypatch.setattr(vectors_mod, "_THREADED_ROWS", 1)
    monkeypatch.setattr(vectors_mod, "_threads", lambda: 3)
    np.testing.assert_array_equal(store @ q, single)
    codes = arrays["vectors.i8"].view(np.int8).astype(np.float64)
    decoded = codes * arrays["vectors.scale"][:, None]
    np.testing.assert_allclose(single, decoded @ q, atol=1e-5)


@pytest.mark.parametrize("dims", [3, 48, 100, 1536])
def test_threaded_float32_scores_equal_single_thread(
    monkeypatch: pytest.MonkeyPatch, dims: int
) -> None:
    """Rows split over threads are scored bit for bit as in one pass, whatever the dims."""
    import scidx.index.vectors as vectors_mod

    v = _unit_rows(3001, dims, seed=dims)
    store = vectors_mod.Float32Vectors(v, "<t>")
    q = v[17]
    monkeypatch.setattr(vectors_mod, "_THREADED_ROWS", 10**9)
    single = store @ q
    monkeypatch.setattr(vectors_mod, "_THREADED_ROWS", 1)
    for threads in (2, 3):
        monkeypatch.setattr(vectors_mod, "_threads", lambda threads=threads: threads)
        np.testing.assert_array_equal(store @ q, single)
    np.testing.assert_allclose(single, v.astype(np.float64) @ q, atol=1e-5)


def test_threaded_hamming_equals_single_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import scidx.index.vectors as vectors_mod

    v = _unit_rows(5000, 130, seed=9)
    arrays = encode_vectors(v, "binary")
    store = vectors_mod.BinaryVectors(
        arrays["vectors.bits"], arrays["vectors.i8"], arrays["vectors.scale"], "<t>"
    )
    monkeypatch.setattr(vectors_mod, "_THREADED_ROWS", 10**9)
    single = store.hamming(v[3])
    monkeypatch.setattr(vectors_mod, "_THREADED_ROWS", 1)
    monkeypatch.setattr(vectors_mod, "_threads", lambda: 3)
    np.testing.assert_array_equal(store.hamming(v[3]), single)
    assert single[3] == 0 and single.shape == (5000,)
