"""scidx.load: opening indexes from files, bytes and package resources; validation; lifetime."""

from __future__ import annotations

import os
import random
import sys
import threading
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scidx.errors import (
    BadMagicError,
    ChecksumMismatchError,
    CorruptIndexError,
    IndexFormatError,
    QueryError,
    ScidxError,
    UnsupportedFormatVersionError,
)
from scidx.index import bm25, format
from scidx.index.index import Index, load, load_bytes, load_resource
from support.indexes import (
    DOCS,
    build_arrays,
    build_index,
    postings_of,
    record,
    rewrite,
    set_postings,
    write_arrays,
)

DOCS_INDEX = build_index(DOCS)


@pytest.fixture
def index_path(tmp_path: Path) -> Path:
    path = tmp_path / "docs.scidx"
    path.write_bytes(build_index(DOCS))
    return path


# ---------------------------------------------------------------------------------------------
# Opening


def test_load_file_and_basic_properties(index_path: Path) -> None:
    with load(index_path) as idx:
        assert len(idx) == 3
        assert idx.stamp["provider"] == "hashing"
        assert idx.meta["bm25"]["tokenizer"] == "scidx-tok-3"
        assert idx.source == str(index_path)
        assert idx.header.version[0] == format.FORMAT_VERSION[0]
        hits = idx.search("kubectl", mode="keyword")
        assert [h.id for h in hits] == ["guide/install.md:install:0"]
        assert idx.chunk(2).id == "ref/options.md:options:0"
        assert idx.chunk(-1).id == "ref/options.md:options:0"
        got = idx.get("guide/install.md:cors:0")
        assert got is not None and got.heading_path == ["Guide", "CORS"]
        assert idx.get("nope") is None
        with pytest.raises(IndexError):
            idx.chunk(3)
        assert "3 chunks" in repr(idx)


def test_load_verify_passes_on_a_good_index(index_path: Path) -> None:
    with load(index_path, verify=True) as idx:
        assert len(idx) == 3


def test_load_bytes_and_memoryview(index_path: Path) -> None:
    data = index_path.read_bytes()
    for buf in (data, bytearray(data), memoryview(data)):
        idx = load_bytes(buf, verify=True)
        assert [h.id for h in idx.search("cors", mode="keyword")] == ["guide/install.md:cors:0"]
        idx.close()


def test_load_resource_from_a_directory_package(tmp_path: Path, monkeypatch: Any) -> None:
    pkg = tmp_path / "docpkg_dir"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "data" / "docs.scidx").write_bytes(build_index(DOCS))
    monkeypatch.syspath_prepend(str(tmp_path))
    with load_resource("docpkg_dir", "data/docs.scidx", verify=True) as idx:
        assert idx._mm is not None  # a real file is memory-mapped
        assert len(idx.search("kubectl", mode="keyword")) == 1
    with pytest.raises(FileNotFoundError):
        load_resource("docpkg_dir", "data/missing.scidx")


def test_load_resource_from_a_zip_import(tmp_path: Path, monkeypatch: Any) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("docpkg_zip/__init__.py", "")
        zf.writestr("docpkg_zip/docs.scidx", build_index(DOCS))
    monkeypatch.syspath_prepend(str(archive))
    with load_resource("docpkg_zip", "docs.scidx") as idx:
        assert idx._mm is None  # read into memory: zip members cannot be mapped
        assert idx.source == "docpkg_zip:docs.scidx"
        assert len(idx.search("kubectl", mode="keyword")) == 1
    sys.modules.pop("docpkg_zip", None)


def test_read_only_file(index_path: Path) -> None:
    index_path.chmod(0o444)
    try:
        with load(index_path) as idx:
            assert idx.search("cors", mode="keyword")
    finally:
        index_path.chmod(0o644)


def test_replaced_file_does_not_affect_an_open_reader(tmp_path: Path, index_path: Path) -> None:
    idx = load(index_path)
    before = [h.to_dict() for h in idx.search("install kubectl cors", k=3)]
    other = [record("x.md", "Completely different words about gardening.", anchor="g")]
    tmp = tmp_path / "docs.scidx.tmp"
    tmp.write_bytes(build_index(other))
    os.replace(tmp, index_path)  # what the packer does
    assert [h.to_dict() for h in idx.search("install kubectl cors", k=3)] == before
    idx.close()
    with load(index_path) as fresh:
        assert len(fresh) == 1


def test_close_and_context_manager(index_path: Path) -> None:
    idx = load(index_path)
    vectors = idx.vectors  # an exported view: close must not unmap under it
    idx.close()
    idx.close()  # idempotent
    assert idx.closed
    assert vectors.shape == (3, 64)
    assert float(np.abs(vectors).sum()) > 0  # still readable
    with pytest.raises(QueryError, match="closed"):
        idx.search("kubectl")
    with load(index_path) as idx2:
        assert not idx2.closed
    assert idx2.closed


def test_hits_read_lazily_stay_valid_after_close(index_path: Path) -> None:
    import copy
    import gc
    import pickle

    with load(index_path) as eager_idx:
        expected = [h.to_dict() for h in eager_idx.search("install kubectl cors", k=3)]
    idx = load(index_path)
    hits = idx.search("install kubectl cors", k=3)
    assert hits and "text" not in hits[0].__dict__  # nothing read yet
    idx.close()
    del idx
    gc.collect()
    # A hit holds the index's arrays, so the mapping outlives close() until the hits go.
    assert [h.to_dict() for h in hits] == expected
    # Copies and pickles carry the values, not the index.
    clone = pickle.loads(pickle.dumps(hits[0]))
    assert clone == hits[0] and "_lazy" not in clone.__dict__
    assert copy.deepcopy(hits[1]) == hits[1]


def test_threads_share_one_index(index_path: Path) -> None:
    idx = load(index_path)
    queries = ["kubectl", "cors", "chunk size", "install version", "max_chunk_chars"]
    expected = {(q, m): idx.search(q, mode=m) for q in queries for m in ("hybrid", "keyword")}
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rnd = random.Random(seed)
        try:
            for _ in range(200):
                q, m = rnd.choice(list(expected))
                assert idx.search(q, mode=m) == expected[(q, m)]
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    idx.close()


def test_load_work_does_not_grow_with_the_corpus(tmp_path: Path) -> None:
    small = tmp_path / "small.scidx"
    big = tmp_path / "big.scidx"
    words = ["alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "theta"]
    rnd = random.Random(7)

    def corpus(n: int) -> list[dict[str, Any]]:
        return [
            record(f"d{i // 10:05d}.md", " ".join(rnd.choices(words, k=12)), anchor=f"a{i}")
            for i in range(n)
        ]

    small.write_bytes(build_index(corpus(10), dims=8))
    big.write_bytes(build_index(corpus(20_000), dims=8))

    def allocated(path: Path) -> int:
        # Python-level allocations while opening: per-chunk or per-term objects would show
        # here in proportion to the corpus (a structural check, not a timing).
        load(path).close()  # imports and first-use caches
        tracemalloc.start()
        try:
            load(path).close()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small_bytes, big_bytes = allocated(small), allocated(big)
    # 2000x the chunks, yet the same few kilobytes of bookkeeping.
    assert big_bytes < small_bytes + 16_384, (small_bytes, big_bytes)


# ---------------------------------------------------------------------------------------------
# Validation and corruption


def test_empty_and_foreign_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.scidx"
    empty.write_bytes(b"")
    with pytest.raises(IndexFormatError):
        load(empty)
    foreign = tmp_path / "readme.scidx"
    foreign.write_bytes(b"# not an index\n" * 10)
    with pytest.raises(BadMagicError):
        load(foreign)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.scidx")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda a, m: a.pop("vectors"), "has no array `vectors`"),
        (lambda a, m: a.pop("bm25.runs"), "has no array `bm25.runs`"),
        (lambda a, m: a.pop("bm25.term_width"), "has no array `bm25.term_width`"),
        (lambda a, m: a.pop("bm25.idf_values"), "has no array `bm25.idf_values`"),
        (
            lambda a, m: a.__setitem__("bm25.term_df", a["bm25.term_df"].astype("<i4")),
            "array `bm25.term_df` has dtype <i4, expected <u1 or <u2 or <u4",
        ),
        (
            lambda a, m: a.__setitem__("bm25.term_df", a["bm25.term_df"][:-1].copy()),
            "array `bm25.term_df` has shape",
        ),
        (
            lambda a, m: a.__setitem__("bm25.term_width", a["bm25.term_width"].astype("<u2")),
            "array `bm25.term_width` has dtype <u2, expected <u1",
        ),
        (
            lambda a, m: a.__setitem__("bm25.term_width", a["bm25.term_width"][:, :1].copy()),
            "array `bm25.term_width` has shape",
        ),
        (
            lambda a, m: a.__setitem__("bm25.runs", a["bm25.runs"].astype("<u2")),
            "array `bm25.runs` has dtype <u2, expected <u1",
        ),
        (
            lambda a, m: a.__setitem__("bm25.tf_values", a["bm25.tf_values"].astype("<f4")),
            "array `bm25.tf_values` has dtype <f4, expected <f8",
        ),
        (
            lambda a, m: a.__setitem__("bm25.idf_values", a["bm25.idf_values"][:-1].copy()),
            "array `bm25.idf_values` has shape",
        ),
        (
            lambda a, m: a.__setitem__("bm25.df_values", a["bm25.df_values"].astype("<u8")),
            "array `bm25.df_values` has dtype <u8, expected <u4",
        ),
        (lambda a, m: m["bm25"].__setitem__("avgdl", 0.0), "`meta.bm25.avgdl` is 0.0, not a"),
        (lambda a, m: m["bm25"].__setitem__("k1", "1.2"), "`meta.bm25.k1` is '1.2', not a"),
        (lambda a, m: m["bm25"].__setitem__("b", 1.5), "`meta.bm25.b` is 1.5, not a number"),
        (
            lambda a, m: a.__setitem__("bm25.run_ptr", a["bm25.run_ptr"].astype("<u2")),
            "array `bm25.run_ptr` has dtype <u2, expected <u4 or <u8",
        ),
        (
            lambda a, m: a.__setitem__("bm25.run_ptr", a["bm25.run_ptr"].astype("<i8")),
            "array `bm25.run_ptr` has dtype <i8, expected <u4 or <u8",
        ),
        (
            lambda a, m: a.__setitem__("chunk.source", a["chunk.source"].astype("<u8")),
            "array `chunk.source` has dtype <u8, expected <u2 or <u4",
        ),
        (
            lambda a, m: a.__setitem__("chunk.ordinal", a["chunk.ordinal"].astype("<i4")),
            "array `chunk.ordinal` has dtype <i4, expected <u2 or <u4",
        ),
        (
            lambda a, m: a.__setitem__("bm25.doc_len", a["bm25.doc_len"].astype("<u8")),
            "array `bm25.doc_len` has dtype <u8, expected <u2 or <u4",
        ),
        (
            lambda a, m: a.__setitem__("vectors", a["vectors"][:, :32].copy()),
            "array `vectors` has shape [3, 32], expected [3, 64]",
        ),
        (
            lambda a, m: a.__setitem__("bm25.doc_len", a["bm25.doc_len"][:2].copy()),
            "array `bm25.doc_len` has shape [2], expected [3]",
        ),
        (
            lambda a, m: a.__setitem__("bm25.run_ptr", a["bm25.run_ptr"][:-1].copy()),
            "array `bm25.run_ptr` has shape",
        ),
        (
            lambda a, m: a.__setitem__("bm25.run_ptr", a["bm25.run_ptr"] + np.uint32(1)),
            "array `bm25.run_ptr` runs from 1",
        ),
        (lambda a, m: m.pop("provider"), "the header meta has no `provider` map"),
        (
            lambda a, m: m["provider"].__setitem__("dimensions", "64"),
            "the provider stamp has dimensions '64'",
        ),
        (lambda a, m: m.__setitem__("urlTemplate", 3), "meta `urlTemplate` is int"),
    ],
)
def test_inconsistent_arrays_are_corrupt(mutate: Any, message: str) -> None:
    data = rewrite(DOCS_INDEX, mutate)
    with pytest.raises(CorruptIndexError) as info:
        load_bytes(data, source="bad.scidx")
    assert message in str(info.value)
    assert str(info.value).startswith("bad.scidx: ")
    assert "rebuild it with `toolup-rag pack-docs`" in str(info.value)


def test_tokenizer_version_mismatch_is_unsupported() -> None:
    data = rewrite(DOCS_INDEX, lambda a, m: m["bm25"].__setitem__("tokenizer", "scidx-tok-99"))
    with pytest.raises(UnsupportedFormatVersionError) as info:
        load_bytes(data, source="old.scidx")
    assert str(info.value) == (
        "old.scidx: the keyword index was built with tokenizer 'scidx-tok-99', but this scidx "
        "uses 'scidx-tok-3'; rebuild the index with `toolup-rag pack-docs` or install the "
        "scidx version that built it."
    )


def _shift_postings(a: dict[str, np.ndarray], by: int) -> None:
    ptr, rows, codes = postings_of(a)
    set_postings(a, ptr, rows + by, codes)


def _swap_postings(a: dict[str, np.ndarray]) -> None:
    """A term's second row equal to its first: a zero gap, which no packer writes."""
    ptr, rows, codes = postings_of(a)
    lo = int(ptr[int(np.flatnonzero(np.diff(ptr) >= 2)[0])])
    rows = rows.copy()
    rows[lo + 1] = rows[lo]
    set_postings(a, ptr, rows, codes)


def _set_padding(a: dict[str, np.ndarray]) -> None:
    df = a["bm25.df_values"].astype(np.int64)[a["bm25.term_df"].astype(np.int64)]
    used = (df * a["bm25.term_width"].astype(np.int64).sum(axis=1)) % 8
    t = int(np.flatnonzero(used)[0])
    runs = a["bm25.runs"].copy()
    runs[int(a["bm25.run_ptr"][t + 1]) - 1] |= 0x80
    a["bm25.runs"] = runs


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda a, m: _shift_postings(a, 5), "array `bm25.runs` points at chunk"),
        (lambda a, m: _swap_postings(a), "array `bm25.runs` has chunk rows not ascending"),
        (lambda a, m: _set_padding(a), "array `bm25.runs` has padding bits set after term"),
        (
            lambda a, m: a.__setitem__("chunk.source", a["chunk.source"] + np.uint32(9)),
            "array `chunk.source` points past",
        ),
        (
            lambda a, m: a.__setitem__("bm25.term_hash", a["bm25.term_hash"][::-1].copy()),
            "array `bm25.term_hash` is not sorted",
        ),
        (
            lambda a, m: a.__setitem__(
                "vectors", np.where(np.arange(3)[:, None] == 1, np.nan, a["vectors"])
            ),
            "array `vectors` holds NaN",
        ),
    ],
)
def test_verify_finds_what_lazy_loading_does_not(mutate: Any, message: str) -> None:
    data = rewrite(DOCS_INDEX, mutate)
    load_bytes(data).close()  # constant-time open does not read these
    with pytest.raises(CorruptIndexError, match=message):
        load_bytes(data, verify=True)


def test_checksum_mismatch_only_with_verify(index_path: Path) -> None:
    data = bytearray(index_path.read_bytes())
    header = format.read_header(bytes(data))
    info = header.arrays["text.data"]
    pos = header.data_start + info.offset + info.nbytes - 1
    data[pos] ^= 0x01  # the last compressed byte: read only when that chunk's text is
    load_bytes(bytes(data)).close()
    with pytest.raises(ChecksumMismatchError, match="text.data"):
        load_bytes(bytes(data), verify=True)


def _exercise(idx: Index) -> None:
    hits = []
    for mode in ("keyword", "vector", "hybrid"):
        hits += idx.search("install kubectl cors chunk", mode=mode, k=5)
        hits += idx.search("guide", mode=mode, k=5, source="guide/*", heading="cors")
        hits += idx.search("guide", mode=mode, k=5, metadata={"section": "guide"})
    for i in range(len(idx)):
        hits.append(idx.chunk(i))
    idx.get("guide/install.md:cors:0")
    for hit in hits:  # hits read their fields lazily: reading must fail cleanly too
        hit.to_dict()


def test_truncation_at_every_offset_raises_only_index_format_errors(index_path: Path) -> None:
    data = index_path.read_bytes()
    for cut in range(len(data)):
        with pytest.raises(IndexFormatError):
            load_bytes(data[:cut])


def test_flipped_bytes_raise_only_scidx_errors(index_path: Path) -> None:
    data = index_path.read_bytes()
    data_start = format.read_header(data).data_start
    rnd = random.Random(1234)
    outcomes = {"ok": 0, "error": 0}
    for _trial in range(1200):
        corrupt = bytearray(data)
        positions = [rnd.randrange(len(corrupt)) for _ in range(rnd.choice((1, 1, 2, 8)))]
        for pos in positions:
            corrupt[pos] ^= 1 << rnd.randrange(8)
        blob = bytes(corrupt)
        try:
            with load_bytes(blob) as idx:
                _exercise(idx)
            outcomes["ok"] += 1
        except ScidxError:
            outcomes["error"] += 1
        if any(pos >= data_start for pos in positions):
            # Array bytes are checksummed: verify=True catches every flip there.
            with pytest.raises(IndexFormatError):
                load_bytes(blob, verify=True)
        else:
            # Header flips may land in free text (generator, meta values): no exception but
            # a ScidxError is acceptable.
            try:
                load_bytes(blob, verify=True).close()
            except ScidxError:
                pass
    assert outcomes["error"] > 0


def test_verify_errors_are_index_format_errors_for_targeted_damage() -> None:
    arrays, meta = build_arrays(DOCS)
    # Compressed-text pointers that go backwards.
    offsets = arrays["text.ptr"].copy()
    offsets[1], offsets[2] = offsets[2], offsets[1]
    arrays["text.ptr"] = offsets
    data = write_arrays(arrays, meta)
    with load_bytes(data) as idx:
        with pytest.raises(IndexFormatError):
            _exercise(idx)
    with pytest.raises(IndexFormatError):
        load_bytes(data, verify=True)


@pytest.mark.parametrize("position", [0, -1])
def test_a_wild_posting_is_a_corrupt_index_error_in_every_mode(position: int) -> None:
    def mutate(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        ptr, rows, codes = postings_of(a)
        rows = rows.copy()
        rows[int(ptr[1]) - 1 if position == 0 else -1] = 1 << 28  # a term's last row: ascending
        set_postings(a, ptr, rows, codes)

    with load_bytes(rewrite(DOCS_INDEX, mutate)) as idx:
        for mode in ("keyword", "vector", "hybrid"):
            for kwargs in ({}, {"source": "guide/*"}, {"heading": "cors"}):
                try:
                    idx.search("install kubectl cors chunk guide options", mode=mode, **kwargs)
                except CorruptIndexError as exc:
                    assert "array `bm25.runs` points at chunk 268435456" in str(exc)


def _widen(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
    for name, dtype in (
        ("chunk.source", "<u4"),
        ("chunk.ordinal", "<u4"),
        ("bm25.doc_len", "<u4"),
        ("bm25.run_ptr", "<u8"),
        ("bm25.term_df", "<u4"),
    ):
        a[name] = a[name].astype(dtype)


def test_narrow_columns_are_two_bytes_while_they_fit_and_either_width_reads() -> None:
    """The packer writes the narrowest width FORMAT.md allows; a reader accepts every one."""
    arrays = format.read_header(DOCS_INDEX).arrays
    assert [arrays[name].dtype for name in ("chunk.source", "chunk.ordinal", "bm25.doc_len")] == [
        "<u2",
        "<u2",
        "<u2",
    ]
    assert arrays["bm25.run_ptr"].dtype == "<u4" and arrays["bm25.term_df"].dtype == "<u1"
    assert format.uint_dtype(65535, at_least=2) == "<u2"
    assert format.uint_dtype(65536, at_least=2) == "<u4"
    assert format.uint_dtype(1 << 32, at_least=4) == "<u8"
    assert bm25.code_dtype(256) is np.uint8 and bm25.code_dtype(257) is np.uint16
    wide = rewrite(DOCS_INDEX, _widen)
    assert format.read_header(wide).arrays["bm25.run_ptr"].dtype == "<u8"
    with load_bytes(DOCS_INDEX) as narrow_idx, load_bytes(wide, verify=True) as wide_idx:
        for query in ("install kubectl", "cors options", "chunk guide"):
            assert narrow_idx.rank(query, k=10) == wide_idx.rank(query, k=10)
            assert [h.to_dict() for h in narrow_idx.search(query)] == [
                h.to_dict() for h in wide_idx.search(query)
            ]


def _codes(value: int) -> Any:
    def mutate(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        ptr, rows, codes = postings_of(a)
        set_postings(a, ptr, rows, np.full_like(codes, value))

    return mutate


def _set(name: str, row: int | slice, value: float) -> Any:
    def mutate(a: dict[str, np.ndarray], m: dict[str, Any]) -> None:
        array = a[name].copy()
        array[row] = value
        a[name] = array

    return mutate


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_codes(255), "array `bm25.runs` holds frequency code 255, but `bm25.tf_values`"),
        (
            _set("bm25.tf_values", 0, float("nan")),
            "array `bm25.tf_values` holds a frequency outside",
        ),
        (_set("bm25.tf_values", 0, 0.0), "array `bm25.tf_values` holds a frequency outside"),
        (_set("bm25.tf_values", -1, 2.0**60), "array `bm25.tf_values` holds a frequency outside"),
        (_set("bm25.idf_values", 0, 1e9), "array `bm25.idf_values` holds 1000000000.0, outside"),
        (_set("bm25.idf_values", 0, float("nan")), "array `bm25.idf_values` holds nan, outside"),
        (
            _set("bm25.df_values", 0, 4_000_000_000),
            "array `bm25.df_values` holds the document frequency 4000000000, outside [1, 3]",
        ),
        (_set("bm25.term_df", slice(None), 200), "array `bm25.term_df` points at entry 200"),
        (_set("bm25.term_width", slice(None), 33), "array `bm25.term_width` holds a width over"),
        (_set("bm25.term_width", slice(None), 9), "array `bm25.run_ptr` gives term"),
    ],
)
def test_hostile_frequency_and_idf_tables_are_corrupt_in_every_mode(
    mutate: Any, message: str
) -> None:
    """Format 4's codes and tables are checked when a term's impacts are computed (lazily)
    and all at once with verify=True; a forged one is a CorruptIndexError, never a bad score."""
    data = rewrite(DOCS_INDEX, mutate)
    with pytest.raises(CorruptIndexError):
        load_bytes(data, verify=True)
    refused = 0
    with load_bytes(data) as idx:  # constant-time open does not read them
        for mode in ("keyword", "hybrid"):
            for query in ("install kubectl cors chunk guide options", "the"):
                try:
                    hits = idx.search(query, mode=mode, k=5)
                except CorruptIndexError as exc:
                    assert message in str(exc), str(exc)
                    refused += 1
                else:
                    assert all(np.isfinite(h.score) for h in hits)
    assert refused


def test_impacts_decode_the_same_from_any_code_width() -> None:
    """`bm25.term_df` may be <u1, <u2 or <u4 whatever the table's size (FORMAT.md §2.3)."""
    ranked = []
    for dtype in ("<u1", "<u2", "<u4"):
        data = rewrite(
            DOCS_INDEX,
            lambda a, m, d=dtype: a.__setitem__("bm25.term_df", a["bm25.term_df"].astype(d)),
        )
        assert format.read_header(data).arrays["bm25.term_df"].dtype == dtype
        with load_bytes(data, verify=True) as idx:
            ranked.append([idx.rank(q, k=10) for q in ("install kubectl", "cors options")])
    assert ranked[0] == ranked[1] == ranked[2] and ranked[0][0]
