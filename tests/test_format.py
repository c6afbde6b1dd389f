"""Tests for the .scidx container (scidx.index.format): exact bytes, round trips, corruption."""

from __future__ import annotations

import io
import math
import mmap
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import numpy as np
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from scidx.errors import (
    BadMagicError,
    ChecksumMismatchError,
    CorruptIndexError,
    IndexFormatError,
    UnsupportedFormatVersionError,
)
from scidx.index import format as fmt
from scidx.index.texts import encode_texts, open_texts

EPOCH = "1970-01-01T00:00:00Z"
HINT = "The file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."


def encode(arrays: dict[str, np.ndarray], meta: dict[str, Any] | None = None, **kw: Any) -> bytes:
    kw.setdefault("built_utc", EPOCH)
    kw.setdefault("generator", "scidx test")
    return b"".join(fmt.encode_index(arrays, meta or {}, **kw))


# ---------------------------------------------------------------------------------------------
# The smallest valid file, byte for byte (docs/FORMAT.md shows the same bytes as a hex dump)

TINY_ARRAYS = {"vectors": np.full((1, 4), 0.5, dtype="<f4")}
TINY_META = {"counts": {"chunks": 1}}
TINY = (
    # preamble (24 bytes)
    b"SCIDX\x00\r\n"  # magic
    b"\x0a\x00"  # major 10
    b"\x00\x00"  # minor 0
    b"\x00\x00\x00\x00"  # flags (reserved)
    b"\xa6\x00\x00\x00\x00\x00\x00\x00"  # H = 166 header bytes
    # msgpack header (166 bytes): a map of 5 keys in fixed order
    b"\x85"
    b"\xa6format"
    b"\xa5scidx"
    b"\xa9generator"
    b"\xaascidx test"
    b"\xa8builtUtc"
    b"\xb41970-01-01T00:00:00Z"
    b"\xa4meta"
    b"\x81\xa6counts\x81\xa6chunks\x01"
    b"\xa6arrays"
    b"\x91"  # a list of 1 array entry
    b"\x86"  # map of 6 keys in fixed order
    b"\xa4name\xa7vectors"
    b"\xa5dtype\xa3<f4"
    b"\xa5shape\x92\x01\x04"
    b"\xa6offset\x00"
    b"\xa6nbytes\x10"
    b"\xa4xxh3\xb03b16a4ded3107560"
    # zero padding: 24 + 166 = 190, data section starts at 192
    b"\x00\x00"
    # data section: `vectors` = four little-endian float32 0.5, no trailing padding
    b"\x00\x00\x00\x3f"
    b"\x00\x00\x00\x3f"
    b"\x00\x00\x00\x3f"
    b"\x00\x00\x00\x3f"
)


def test_tiny_exact_bytes() -> None:
    assert encode(TINY_ARRAYS, TINY_META) == TINY
    assert len(TINY) == 208


def test_tiny_reads_back() -> None:
    header = fmt.read_header(TINY)
    assert header.version == (10, 0)
    assert header.generator == "scidx test"
    assert header.built_utc == EPOCH
    assert header.meta == TINY_META
    assert header.data_start == 192
    assert header.header_bytes == 166
    assert header.file_size == 208
    assert header.source == "<buffer>"
    assert header.arrays == {
        "vectors": fmt.ArrayInfo("vectors", "<f4", (1, 4), 0, 16, "3b16a4ded3107560")
    }
    view = fmt.array_view(TINY, header, "vectors", dtype="<f4", ndim=2)
    np.testing.assert_array_equal(view, TINY_ARRAYS["vectors"])
    assert not view.flags.writeable
    fmt.verify_checksums(TINY, header)


def test_constants() -> None:
    assert fmt.MAGIC == b"SCIDX\x00\r\n"
    assert len(fmt.MAGIC) == 8
    assert fmt.FORMAT_VERSION == (10, 0)
    assert fmt.ALIGNMENT == 64
    assert fmt.PREAMBLE_BYTES == 24
    assert fmt.MAX_HEADER_BYTES == 1 << 20
    assert list(fmt.DTYPES) == ["<u1", "<u2", "<u4", "<u8", "<i4", "<i8", "<f4", "<f8"]


def test_write_index_matches_encode(tmp_path: Path) -> None:
    out = io.BytesIO()
    n = fmt.write_index(out, TINY_ARRAYS, TINY_META, built_utc=EPOCH, generator="scidx test")
    assert n == len(TINY)
    assert out.getvalue() == TINY
    path = tmp_path / "tiny.scidx"
    with open(path, "wb") as f:
        fmt.write_index(f, TINY_ARRAYS, TINY_META, built_utc=EPOCH, generator="scidx test")
    assert path.read_bytes() == TINY


def test_empty_index_has_no_data_section() -> None:
    data = encode({})
    header = fmt.read_header(data)
    assert header.arrays == {}
    assert len(data) == header.data_start
    assert header.data_start % 64 == 0
    fmt.verify_checksums(data, header)


def test_large_array_streams_in_bounded_chunks() -> None:
    big = np.arange(600_000, dtype="<u4")  # 2.4 MB, more than one write chunk
    pieces = list(fmt.encode_index({"big": big}, {}, built_utc=EPOCH, generator="g"))
    assert max(len(p) for p in pieces) <= 1 << 20
    data = b"".join(pieces)
    header = fmt.read_header(data)
    np.testing.assert_array_equal(fmt.array_view(data, header, "big"), big)
    fmt.verify_checksums(data, header)


# ---------------------------------------------------------------------------------------------
# A realistic index: one chunk of every scidx array (FORMAT.md "scidx content")


def one_chunk_index() -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Every array of a one-chunk, dim-4 scidx index, with hand-written values."""
    arrays: dict[str, np.ndarray] = {}

    def strings(name: str, values: list[str]) -> None:
        arrays[f"{name}.offsets"], arrays[f"{name}.data"] = fmt.encode_strings(values)

    strings("chunk.id", ["guide.md:install:0"])
    arrays.update(encode_texts(["Run `pip install scidx`.\n"], None))
    strings("chunk.heading", ["Guide\x1fInstall"])
    strings("chunk.anchor", ["install"])
    arrays["chunk.source"] = np.array([0], dtype="<u4")
    arrays["chunk.ordinal"] = np.array([0], dtype="<u4")
    arrays["chunk.span"] = np.array([[19, 45, 5, 5]], dtype="<u8")
    strings("source.path", ["guide.md"])
    strings("source.title", ["Guide"])
    strings("source.meta", ["{}"])
    arrays["vectors"] = np.full((1, 4), 0.5, dtype="<f4")
    terms = ["guide", "install", "pip", "run", "scidx"]
    arrays["bm25.term_hash"] = np.sort(
        np.array([xxhash.xxh3_64_intdigest(t.encode()) for t in terms], dtype="<u8")
    )
    # Each term has one posting, in chunk 0 with frequency code 0: gaps and codes of 0 bits,
    # so every run is empty (FORMAT.md §3.2).
    arrays["bm25.term_df"] = np.zeros(5, dtype="<u1")
    arrays["bm25.term_width"] = np.zeros((5, 2), dtype="<u1")
    arrays["bm25.run_ptr"] = np.zeros(6, dtype="<u4")
    arrays["bm25.runs"] = np.zeros(0, dtype="<u1")
    # One frequency (1.0) and one document frequency (1): each impact is the idf of df 1.
    arrays["bm25.tf_values"] = np.array([1.0], dtype="<f8")
    arrays["bm25.df_values"] = np.array([1], dtype="<u4")
    arrays["bm25.idf_values"] = np.array([math.log1p(0.5 / 1.5)], dtype="<f8")
    arrays["bm25.doc_len"] = np.array([7], dtype="<u4")
    meta = {
        "packer": "scidx-pack-1",
        "provider": {
            "provider": "hashing",
            "model": "hashing-v1",
            "dimensions": 4,
            "normalization": "l2",
        },
        "chunking": {"chunker": "scidx-chunk-1", "maxChunkChars": 1500, "anchorStyle": "github"},
        "bm25": {
            "k1": 1.2,
            "b": 0.75,
            "avgdl": 7.0,
            "tokenizer": "scidx-tok-3",
            "fieldWeights": {"heading": 2.0, "body": 1.0},
            "idf": "lucene",
            "queryTerms": "distinct",
        },
        "configHash": "0123456789abcdef0123456789abcdef",
        "urlTemplate": "https://example.org/docs/{path}#{anchor}",
        "counts": {"chunks": 1, "sources": 1, "terms": 5, "postings": 5},
    }
    return arrays, meta


@pytest.fixture
def json_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.with_defaults(extension_class=JSONSnapshotExtension)


def test_one_chunk_header_snapshot(json_snapshot: SnapshotAssertion) -> None:
    arrays, meta = one_chunk_index()
    data = encode(arrays, meta, generator="scidx 0.1.0")
    header = fmt.read_header(data)
    assert fmt.header_to_dict(header) == json_snapshot
    fmt.verify_checksums(data, header)
    for name in ("chunk.id", "chunk.heading", "chunk.anchor", "source.path"):
        fmt.read_string_table(data, header, name).validate_all()
    texts = open_texts(data, header, 1)
    texts.validate_all()
    assert texts.text(0) == texts.plain(0) == "Run `pip install scidx`.\n"
    assert list(fmt.read_string_table(data, header, "chunk.heading")) == ["Guide\x1fInstall"]


def test_layout_rules_hold_for_every_array() -> None:
    arrays, meta = one_chunk_index()
    data = encode(arrays, meta)
    header = fmt.read_header(data)
    assert list(header.arrays) == sorted(arrays)
    expected = 0
    for info in header.arrays.values():
        assert info.offset == expected
        assert (header.data_start + info.offset) % 64 == 0
        expected = fmt.align(info.offset + info.nbytes)
    last = list(header.arrays.values())[-1]
    assert len(data) == header.data_start + last.offset + last.nbytes


# ---------------------------------------------------------------------------------------------
# Determinism


def test_deterministic_and_order_invariant() -> None:
    arrays, meta = one_chunk_index()
    first = encode(arrays, meta)
    assert encode(arrays, meta) == first
    shuffled = dict(reversed(list(arrays.items())))

    def reverse_maps(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reverse_maps(value[k]) for k in reversed(list(value))}
        return value

    assert encode(shuffled, reverse_maps(meta)) == first


def test_input_byte_order_and_layout_do_not_matter() -> None:
    le = np.arange(12, dtype="<i8").reshape(3, 4)
    be = le.astype(">i8")
    fortran = np.asfortranarray(le)
    strided = np.arange(24, dtype="<i8").reshape(3, 8)[:, ::2] // 2
    assert (
        encode({"a": le}) == encode({"a": be}) == encode({"a": fortran}) == encode({"a": strided})
    )
    assert encode({"a": np.arange(3, dtype="|u1")}) == encode({"a": np.arange(3, dtype="<u1")})


def test_canonical_meta() -> None:
    assert fmt.canonical_meta({"b": (1, 2), "a": {"d": None, "c": True}}) == {
        "a": {"c": True, "d": None},
        "b": [1, 2],
    }
    value = fmt.canonical_meta({"x": np.float32(0.5), "y": np.int64(3)})
    assert value == {"x": 0.5, "y": 3}
    assert type(value["x"]) is float and type(value["y"]) is int
    assert encode({}, {"k": np.uint32(7)}) == encode({}, {"k": 7})


@pytest.mark.parametrize(
    ("meta", "exc", "message"),
    [
        ({"x": float("nan")}, ValueError, "meta.x: nan is not allowed in the header (not finite)"),
        ({"x": [float("inf")]}, ValueError, "meta.x[0]: inf is not allowed in the header"),
        ({"x": 1 << 64}, ValueError, "meta.x: int 18446744073709551616 does not fit"),
        ({"x": {1: "a"}}, TypeError, "meta.x: map key 1 is not a str"),
        ({"x": b"raw"}, TypeError, "meta.x: bytes is not allowed in the header"),
        ({"x": {1.5}}, TypeError, "meta.x: set is not allowed in the header"),
    ],
)
def test_meta_rejects_non_canonical_values(meta: Any, exc: type[Exception], message: str) -> None:
    with pytest.raises(exc, match="^" + re.escape(message)):
        encode({}, meta)


@pytest.mark.parametrize(
    ("arrays", "exc", "message"),
    [
        ({"a": np.zeros(2, "<f2")}, ValueError, "array `a` has dtype <f2; a .scidx array must"),
        ({"a": np.zeros(2, bool)}, ValueError, "array `a` has dtype |b1;"),
        ({"a": np.zeros(2, object)}, ValueError, "array `a` has dtype |O;"),
        ({"a": np.zeros(2, "<i2")}, ValueError, "array `a` has dtype <i2;"),
        ({"a": [1, 2]}, TypeError, "array `a` is a list, not a numpy.ndarray"),
        ({"": np.zeros(2, "<u1")}, ValueError, "array name '' is invalid"),
        ({".a": np.zeros(2, "<u1")}, ValueError, "array name '.a' is invalid"),
        ({"a b": np.zeros(2, "<u1")}, ValueError, "array name 'a b' is invalid"),
        ({"x" * 129: np.zeros(2, "<u1")}, ValueError, "array name 'xxxx"),
        ({"a": np.zeros((1,) * 9, "<u1")}, ValueError, "array `a` has 9 dimensions; at most 8"),
    ],
)
def test_writer_rejects_bad_arrays(arrays: Any, exc: type[Exception], message: str) -> None:
    with pytest.raises(exc) as info:
        encode(arrays)
    assert str(info.value).startswith(message)


def test_writer_fails_before_writing_anything() -> None:
    out = io.BytesIO()
    with pytest.raises(ValueError):
        fmt.write_index(out, {"a": np.zeros(1, "<f2")}, {}, built_utc=EPOCH, generator="g")
    assert out.getvalue() == b""


def test_writer_rejects_bad_stamps_and_huge_headers() -> None:
    with pytest.raises(ValueError, match="built_utc '2024-01-01' is not of the form"):
        encode({}, built_utc="2024-01-01")
    with pytest.raises(TypeError, match="generator must be a str"):
        encode({}, generator=None)
    with pytest.raises(ValueError, match="over MAX_HEADER_BYTES"):
        encode({}, {"blob": "x" * fmt.MAX_HEADER_BYTES})


# ---------------------------------------------------------------------------------------------
# Round trips (hypothesis)

names = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,20}", fullmatch=True)
dtypes = st.sampled_from(sorted(fmt.DTYPES)).flatmap(
    lambda s: st.sampled_from([np.dtype(s), np.dtype(s).newbyteorder(">")])
)
arrays_strategy = st.dictionaries(
    names,
    dtypes.flatmap(
        lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
    ),
    max_size=6,
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
meta_strategy = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays=arrays_strategy, meta=meta_strategy)
def test_round_trip(arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    data = encode(arrays, meta)
    header = fmt.read_header(data)
    fmt.verify_checksums(data, header)
    assert header.meta == fmt.canonical_meta(meta)
    assert list(header.arrays) == sorted(arrays)
    assert (len(data) - header.data_start) >= 0
    for name, original in arrays.items():
        got = fmt.array_view(data, header, name)
        assert got.shape == original.shape
        assert got.dtype == original.dtype.newbyteorder("<")
        # Bytes, not values: NaN payloads and -0.0 must survive unchanged.
        assert got.tobytes() == original.astype(got.dtype).tobytes()
    # The same content in another mapping order encodes identically.
    assert encode(dict(reversed(list(arrays.items()))), meta) == data


@given(values=st.lists(st.text(), max_size=10))
def test_string_table_round_trip(values: list[str]) -> None:
    offsets, data = fmt.encode_strings(values)
    assert offsets.dtype.str == "<u4" and data.dtype == np.dtype("<u1")  # under 4 GiB
    assert offsets.shape == (len(values) + 1,)
    assert int(offsets[0]) == 0 and int(offsets[-1]) == len(data)
    table = fmt.StringTable(offsets, data, name="t")
    table.validate_all()
    assert len(table) == len(values)
    assert list(table) == values
    if values:
        assert table[-1] == values[-1]
    index = encode({"t.offsets": offsets, "t.data": data})
    back = fmt.read_string_table(index, fmt.read_header(index), "t")
    assert list(back) == values


def test_read_from_mmap_and_header_file(tmp_path: Path) -> None:
    arrays, meta = one_chunk_index()
    path = tmp_path / "index.scidx"
    path.write_bytes(encode(arrays, meta))
    from_file = fmt.read_header_file(path)
    assert from_file.source == str(path)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        header = fmt.read_header(mm, source=str(path))
        assert header == from_file
        vectors = fmt.array_view(mm, header, "vectors")
        np.testing.assert_array_equal(vectors, arrays["vectors"])
        fmt.verify_checksums(mm, header)
        assert list(fmt.read_string_table(mm, header, "chunk.id")) == ["guide.md:install:0"]
        del vectors  # release the exported buffer so the mmap can close


def test_read_header_file_does_not_read_arrays(tmp_path: Path) -> None:
    data = bytearray(encode({"a": np.arange(1000, dtype="<u8")}))
    data[-1] ^= 0xFF  # corrupt the data section: only verify_checksums notices
    path = tmp_path / "x.scidx"
    path.write_bytes(bytes(data))
    header = fmt.read_header_file(path)
    assert header.arrays["a"].shape == (1000,)
    with pytest.raises(ChecksumMismatchError):
        fmt.verify_checksums(bytes(data), header)


# ---------------------------------------------------------------------------------------------
# Forward compatibility


def rebuild(data: bytes, edit: Callable[[dict[str, Any]], Any] | None = None, **kw: Any) -> bytes:
    """Re-encode ``data`` with its msgpack header edited in place and the data section kept.

    Keyword args override preamble fields (magic, major, minor, flags, hlen) or give the raw
    header bytes (``raw``) or the padding bytes (``pad``).
    """
    _, major, minor, flags, hlen = struct.unpack_from("<8sHHIQ", data)
    header = msgpack.unpackb(data[24 : 24 + hlen])
    if edit is not None:
        edit(header)
    raw: bytes = kw.get("raw", msgpack.packb(header, use_bin_type=True))
    body = data[fmt.align(24 + hlen) :]
    pad: bytes = kw.get("pad", bytes(fmt.align(24 + len(raw)) - 24 - len(raw)))
    pre = struct.pack(
        "<8sHHIQ",
        kw.get("magic", fmt.MAGIC),
        kw.get("major", major),
        kw.get("minor", minor),
        kw.get("flags", flags),
        kw.get("hlen", len(raw)),
    )
    return pre + raw + pad + body


def small_index() -> bytes:
    return encode(
        {
            "a": np.arange(5, dtype="<u4"),
            "b": np.ones((2, 3), dtype="<f4"),
            "s.offsets": fmt.encode_strings(["hé", "", "x"])[0],
            "s.data": fmt.encode_strings(["hé", "", "x"])[1],
        },
        {"counts": {"chunks": 2}},
    )


def test_rebuild_helper_is_identity() -> None:
    data = small_index()
    assert rebuild(data) == data


def test_newer_minor_unknown_keys_and_arrays_are_accepted() -> None:
    def future(h: dict[str, Any]) -> None:
        h["future"] = {"anything": [1, 2]}
        h["meta"]["newKey"] = "x"
        for entry in h["arrays"]:
            entry["compression"] = None

    data = rebuild(small_index(), future, minor=7)
    header = fmt.read_header(data)
    assert header.version == (10, 7)
    assert header.meta["newKey"] == "x"
    assert list(header.arrays) == ["a", "b", "s.data", "s.offsets"]  # unknown arrays are listed
    fmt.verify_checksums(data, header)


# ---------------------------------------------------------------------------------------------
# Corruption: the only acceptable outcome is an IndexFormatError


def read_everything(data: bytes) -> None:
    """Exercise every read path a loader with verify=True would take."""
    header = fmt.read_header(data)
    for name in header.arrays:
        fmt.array_view(data, header, name)
    fmt.verify_checksums(data, header)
    for name in header.arrays:
        if name.endswith(".offsets"):
            table = fmt.read_string_table(data, header, name.removesuffix(".offsets"))
            table.validate_all()
            list(table)


def test_truncation_at_every_offset() -> None:
    data = small_index()
    for end in range(len(data)):
        with pytest.raises(IndexFormatError):
            fmt.read_header(data[:end])


def test_truncation_at_every_offset_via_file(tmp_path: Path) -> None:
    data = small_index()
    path = tmp_path / "t.scidx"
    for end in range(0, len(data), 7):
        path.write_bytes(data[:end])
        with pytest.raises(IndexFormatError):
            fmt.read_header_file(path)


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_random_byte_flips(data: st.DataObject) -> None:
    original = small_index()
    header = fmt.read_header(original)
    corrupted = bytearray(original)
    flips = data.draw(st.lists(st.integers(0, len(original) - 1), min_size=1, max_size=3))
    for pos in flips:
        corrupted[pos] ^= data.draw(st.integers(1, 255))
    try:
        read_everything(bytes(corrupted))
    except IndexFormatError:
        return
    # Undetected changes can only be inside the header (e.g. one letter of `generator`):
    # every byte of the data section is covered by a checksum or a zero-padding check.
    assert all(pos < header.data_start for pos in flips if corrupted[pos] != original[pos])


@settings(max_examples=300, deadline=None)
@given(blob=st.binary(max_size=400))
def test_random_garbage(blob: bytes) -> None:
    for candidate in (blob, fmt.MAGIC + blob, TINY[:24] + blob):
        try:
            read_everything(candidate)
        except IndexFormatError:
            pass


def message(exc_type: type[Exception], data: bytes, **kw: Any) -> str:
    with pytest.raises(exc_type) as info:
        read_everything(data) if not kw else fmt.read_header(data, **kw)
    return str(info.value)


def test_bad_magic_message() -> None:
    assert message(BadMagicError, b"PK\x03\x04" + TINY[4:]) == (
        "<buffer> is not a .scidx index: it starts with b'PK\\x03\\x04X\\x00\\r\\n', "
        "not b'SCIDX\\x00\\r\\n'. Pass a file written by `toolup-rag pack-docs`."
    )
    assert message(BadMagicError, b"hello") == (
        "<buffer> is not a .scidx index: it starts with b'hello', not b'SCIDX\\x00\\r\\n'. "
        "Pass a file written by `toolup-rag pack-docs`."
    )


def test_empty_or_short_file_is_truncated() -> None:
    assert message(CorruptIndexError, b"", source="empty.scidx") == (
        f"empty.scidx: the file is 0 bytes, shorter than the 24-byte preamble. {HINT}"
    )
    assert message(CorruptIndexError, fmt.MAGIC + b"\x01") == (
        f"<buffer>: the file is 9 bytes, shorter than the 24-byte preamble. {HINT}"
    )


def test_newer_major_message() -> None:
    data = rebuild(TINY, major=11, minor=3)
    assert message(UnsupportedFormatVersionError, data, source="docs.scidx") == (
        "docs.scidx was written with format 11.3; this scidx reads format 10.x. "
        "Rebuild it with `toolup-rag pack-docs` or upgrade scidx."
    )
    # Checked before the header: a newer major may change everything after the preamble.
    garbage = rebuild(TINY, major=11, raw=b"\xc1" * 10)
    with pytest.raises(UnsupportedFormatVersionError):
        fmt.read_header(garbage)


def test_older_major_message() -> None:
    assert message(UnsupportedFormatVersionError, rebuild(TINY, major=1, minor=1)) == (
        "<buffer> was written with format 1.1; this scidx reads format 10.x. "
        "Rebuild it with `toolup-rag pack-docs`."
    )
    # Format 2 (8-byte snippet occurrences, <u4 posting rows), format 3 (float32 impacts) and
    # format 4 (stored Markdown chunk ids), format 5 (<u2 posting rows and <u1 codes) and
    # format 6 (heading paths stored whole) and format 7 (string tables stored raw) and format 8
    # (4-byte snippet occurrences, the Markdown first in each text record) and format 9 (no
    # docs versions, no word dictionary) are refused the same way.
    for major in (2, 3, 4, 5, 6, 7, 8, 9):
        assert message(UnsupportedFormatVersionError, rebuild(TINY, major=major, minor=0)) == (
            f"<buffer> was written with format {major}.0; this scidx reads format 10.x. "
            "Rebuild it with `toolup-rag pack-docs`."
        )


def test_huge_header_length_message() -> None:
    data = rebuild(TINY, hlen=(1 << 64) - 1)
    assert message(CorruptIndexError, data) == (
        f"<buffer>: header length 18446744073709551615 is outside 1..1048576 "
        f"(MAX_HEADER_BYTES). {HINT}"
    )
    assert "header length 0 is outside" in message(CorruptIndexError, rebuild(TINY, hlen=0))


def test_trailing_bytes_message() -> None:
    assert message(CorruptIndexError, TINY + b"\x00") == (
        "<buffer>: the data section is 17 bytes, but the arrays end at 16; the file must end "
        f"exactly at the end of the last array. {HINT}"
    )


def test_array_past_end_message() -> None:
    assert message(CorruptIndexError, TINY[:-1], source="t.scidx") == (
        "t.scidx: array `vectors` ends at data offset 16, past the end of the data section "
        f"(15 bytes). {HINT}"
    )


def test_checksum_message() -> None:
    data = bytearray(TINY)
    data[-1] ^= 0x01
    header = fmt.read_header(bytes(data), source="t.scidx")
    with pytest.raises(ChecksumMismatchError) as info:
        fmt.verify_checksums(bytes(data), header)
    assert str(info.value) == (
        "t.scidx: array `vectors` fails its checksum (stored xxh3 3b16a4ded3107560, computed "
        f"{xxhash.xxh3_64_hexdigest(bytes(data[192:]))}). {HINT}"
    )


def test_missing_array_message() -> None:
    header = fmt.read_header(TINY, source="t.scidx")
    with pytest.raises(CorruptIndexError) as info:
        fmt.array_view(TINY, header, "bm25.doc_len")
    assert str(info.value) == f"t.scidx: the index has no array `bm25.doc_len`. {HINT}"


def test_array_view_expectations() -> None:
    header = fmt.read_header(TINY)
    with pytest.raises(CorruptIndexError, match=r"array `vectors` has dtype <f4, expected <u4\."):
        fmt.array_view(TINY, header, "vectors", dtype="<u4")
    with pytest.raises(
        CorruptIndexError, match=r"array `vectors` has 2 dimension\(s\) \[1, 4\], expected 1\."
    ):
        fmt.array_view(TINY, header, "vectors", ndim=1)
    with pytest.raises(CorruptIndexError, match="the buffer is 207 bytes, but its header was"):
        fmt.array_view(TINY[:-1], header, "vectors")
    with pytest.raises(CorruptIndexError, match="the buffer is 209 bytes"):
        fmt.verify_checksums(TINY + b"\x00", header)


def test_bytearray_views_are_read_only() -> None:
    buf = bytearray(TINY)
    view = fmt.array_view(buf, fmt.read_header(buf), "vectors")
    with pytest.raises(ValueError, match="read-only"):
        view[0, 0] = 1.0


def _entry(i: int, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(h: dict[str, Any]) -> None:
        h["arrays"][i][key] = value

    return edit


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(h: dict[str, Any]) -> None:
        h[key] = value

    return edit


def _delete(key: str) -> Callable[[dict[str, Any]], None]:
    def edit(h: dict[str, Any]) -> None:
        del h[key]

    return edit


def _swap_first_two(h: dict[str, Any]) -> None:
    h["arrays"][0], h["arrays"][1] = h["arrays"][1], h["arrays"][0]


def _duplicate_first(h: dict[str, Any]) -> None:
    h["arrays"][1]["name"] = h["arrays"][0]["name"]


# small_index layout: a <u4 [5] @0 (20 B), b <f4 [2,3] @64 (24 B), s.data <u1 [3] @128,
# s.offsets <u8 [4] @192 (32 B); data section 224 bytes.
HEADER_EDITS = {
    "overlap": (_entry(1, "offset", 0), "array `b` starts at data offset 0, overlapping array `a`"),
    "misaligned": (_entry(1, "offset", 96 - 8), "array `b` starts at data offset 88, not a"),
    "hole": (_entry(1, "offset", 128), "array `b` starts at data offset 128, leaving a hole of 64"),
    "first not at 0": (_entry(0, "offset", 64), "array `a` starts at data offset 64, leaving"),
    "unknown dtype": (_entry(1, "dtype", "<f2"), "array `b` has dtype '<f2', which is not one of"),
    "big-endian dtype": (_entry(1, "dtype", ">f4"), "array `b` has dtype '>f4', which is not"),
    "dtype not str": (_entry(1, "dtype", 4), "array `b` has dtype 4, which is not one of"),
    "shape mismatch": (_entry(1, "shape", [3, 3]), "array `b` has nbytes 24, but shape [3, 3] of"),
    "nbytes mismatch": (_entry(0, "nbytes", 24), "array `a` has nbytes 24, but shape [5] of <u4"),
    "negative dim": (_entry(1, "shape", [-2, -3]), "array `b` has shape [-2, -3]; expected a list"),
    "float dim": (_entry(1, "shape", [2.0, 3]), "array `b` has shape [2.0, 3]; expected a list"),
    "bool dim": (_entry(0, "shape", [True]), "array `a` has shape [True]; expected a list"),
    "shape not list": (_entry(0, "shape", 5), "array `a` has shape 5; expected a list"),
    "too many dims": (_entry(0, "shape", [1] * 9), "array `a` has shape [1, 1, 1, 1, 1, 1, 1"),
    "huge shape": (
        _entry(0, "shape", [1 << 30, 1 << 30]),
        "array `a` has nbytes 20, but shape [1073741824, 1073741824] of <u4 needs "
        "4611686018427387904",
    ),
    "overflowing shape": (
        _entry(0, "shape", [1 << 40] * 8),
        f"array `a` has shape {[1 << 40] * 8}, too large for any array",
    ),
    "empty but unrepresentable": (
        _entry(0, "shape", [0, 1 << 62]),
        "array `a` has shape [0, 4611686018427387904], too large for any array",
    ),
    "negative offset": (_entry(0, "offset", -64), "array `a` has offset -64; expected an int"),
    "offset not int": (_entry(0, "offset", "0"), "array `a` has offset '0'; expected an int"),
    "bad xxh3": (_entry(0, "xxh3", "XYZ"), "array `a` has xxh3 'XYZ'; expected 16 lowercase"),
    "int xxh3": (_entry(0, "xxh3", 5), "array `a` has xxh3 5; expected 16 lowercase hex"),
    "bad name": (_entry(0, "name", "../a"), "header `arrays[0]` has an invalid name '../a'"),
    "unsorted": (_swap_first_two, "array `a` is listed after `b`; arrays must be sorted"),
    "duplicate": (_duplicate_first, "array `a` is listed after `a`; arrays must be sorted"),
    "entry not map": (_set("arrays", [1]), "header `arrays[0]` is a int, not a map"),
    "entry missing key": (
        lambda h: h["arrays"][0].__delitem__("xxh3"),
        "header `arrays[0]` lacks the required key(s) xxh3",
    ),
    "arrays not list": (_set("arrays", {}), "header `arrays` is a dict, not a list"),
    "no arrays": (_delete("arrays"), "the header lacks the required key(s) arrays"),
    "no meta": (_delete("meta"), "the header lacks the required key(s) meta"),
    "meta not map": (_set("meta", [1]), "header `meta` is not a map with str keys"),
    "wrong format": (_set("format", "safetensors"), "header `format` is 'safetensors', not"),
    "generator not str": (_set("generator", 1), "header `generator` is a int, not a str"),
    "builtUtc not str": (_set("builtUtc", None), "header `builtUtc` is a NoneType, not a str"),
    "dropped array": (
        lambda h: h["arrays"].__delitem__(-1),
        "the data section is 208 bytes, but the arrays end at 132",
    ),
}


@pytest.mark.parametrize("case", list(HEADER_EDITS))
def test_crafted_headers(case: str) -> None:
    edit, expected = HEADER_EDITS[case]
    text = message(CorruptIndexError, rebuild(small_index(), edit), source="c.scidx")
    assert text.startswith(f"c.scidx: {expected}"), text
    assert text.endswith(HINT)


RAW_HEADERS = {
    "not msgpack": (b"\xc1", "the header is not valid msgpack (FormatError"),
    "trailing data": (b"\x80\x80", "the header is not valid msgpack (ExtraData"),
    "incomplete": (b"\x85\xa6form", "the header is not valid msgpack"),
    "bad utf-8": (b"\x81\xa2\xff\xfe\x01", "the header is not valid msgpack (UnicodeDecodeError"),
    "int key": (b"\x81\x01\x01", "the header is not valid msgpack (ValueError"),
    "bin key": (b"\x81\xc4\x01k\x01", "the header has a non-str map key"),
    "nested bin key": (b"\x81\xa4meta\x81\xc4\x01k\x01", "header `meta` contains a non-str map"),
    "nested timestamp": (
        b"\x81\xa4meta\x91\xd6\xff\x00\x00\x00\x00",
        "header `meta` contains a msgpack Timestamp value",
    ),
    "ext type": (b"\xd4\x05\x00", "the header is not valid: msgpack extension type 5 is not"),
    "timestamp": (b"\xd6\xff\x00\x00\x00\x00", "the header is a msgpack Timestamp, not a map"),
    "bin": (b"\x81\xa4meta\x81\xa1k\xc4\x01x", "header `meta` contains a msgpack bytes value; the"),
    "not a map": (b"\x91\x80", "the header is a msgpack list, not a map"),
    "duplicate key": (b"\x82\xa1a\x01\xa1a\x02", "the header is not valid: a map has duplicate"),
    "huge list": (b"\xdd\x00\x10\x00\x01" + b"\xc0" * 20, "the header is not valid msgpack"),
    "deep nesting": (b"\x91" * 5000 + b"\xc0", "the header is not valid msgpack"),
}


@pytest.mark.parametrize("case", list(RAW_HEADERS))
def test_hostile_msgpack(case: str) -> None:
    raw, expected = RAW_HEADERS[case]
    text = message(CorruptIndexError, rebuild(TINY, raw=raw))
    assert text.startswith(f"<buffer>: {expected}"), text


def test_nonzero_flags_and_padding() -> None:
    assert message(CorruptIndexError, rebuild(TINY, flags=1)) == (
        f"<buffer>: reserved preamble flags are 0x00000001, expected 0. {HINT}"
    )
    assert message(CorruptIndexError, rebuild(TINY, pad=b"\x00\x01")) == (
        f"<buffer>: the padding after the header is not all zero bytes. {HINT}"
    )
    data = bytearray(small_index())
    header = fmt.read_header(bytes(data))
    data[header.data_start + 20] = 1  # padding between `a` (20 bytes) and `b` (at 64)
    with pytest.raises(CorruptIndexError) as info:
        fmt.verify_checksums(bytes(data), header)
    assert str(info.value) == f"<buffer>: the padding before array `b` is not zero. {HINT}"


# ---------------------------------------------------------------------------------------------
# String tables


def table(offsets: list[int], data: bytes) -> fmt.StringTable:
    return fmt.StringTable(
        np.array(offsets, dtype="<u8"), np.frombuffer(data, dtype="<u1"), name="chunk.id"
    )


def test_string_table_access() -> None:
    t = table([0, 2, 2, 5], b"abcde")
    assert len(t) == 3
    assert [t[0], t[1], t[2], t[-1], t[-3]] == ["ab", "", "cde", "cde", "ab"]
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[-4]
    assert list(table([0], b"")) == []


def test_string_table_take_decodes_small_tables_whole() -> None:
    """take() of a small table reads a list decoded once; every bad row still raises."""
    values = ["ab", "", "cdé", "x" * 300]
    blob = "".join(values).encode()
    offsets = np.cumsum([0] + [len(v.encode()) for v in values]).astype("<u8")
    t = fmt.StringTable(offsets, np.frombuffer(blob, dtype="<u1"), name="chunk.id")
    assert t.take([3, 0, 2, 1, 2]) == [values[3], values[0], values[2], values[1], values[2]]
    assert t._strings == values  # decoded by that take, for the next ones
    assert t.take([-1, np.int64(1)]) == [values[3], ""]  # as [] does
    with pytest.raises(IndexError):
        t.take([0, 4])
    # A row that is not UTF-8 is left undecoded; taking it names it, the others still read.
    bad = table([0, 2, 4], b"ab\xff\xfe")
    assert bad.take([0]) == ["ab"]
    with pytest.raises(CorruptIndexError, match="row 1 is not valid UTF-8"):
        bad.take([0, 1])
    # Offsets out of order: nothing is decoded, and the checked path names the row.
    disorder = table([0, 4, 2, 5], b"abcde")
    with pytest.raises(CorruptIndexError, match="row 1 has offsets 4..2"):
        disorder.take([1])
    assert disorder._strings is None
    # Above the row bound a table is read row by row, with the same answers.
    big = table(list(range(fmt.DECODE_ROWS_MAX + 2)), b"a" * (fmt.DECODE_ROWS_MAX + 1))
    assert big.take([0, fmt.DECODE_ROWS_MAX]) == ["a", "a"] and big._strings is None


def test_string_table_construction_errors() -> None:
    with pytest.raises(CorruptIndexError) as info:
        table([0, 2, 4], b"abcde")
    assert str(info.value) == (
        "<buffer>: string table `chunk.id` has offsets from 0 to 4, expected 0 to 5 "
        f"(the data length). {HINT}"
    )
    with pytest.raises(CorruptIndexError, match="must be a non-empty 1-D <u4 or <u8 array"):
        table([], b"")
    with pytest.raises(CorruptIndexError, match="`chunk.id.offsets` must be a non-empty 1-D <u4"):
        fmt.StringTable(np.zeros(2, "<u2"), np.zeros(0, "<u1"), name="chunk.id")
    # Format 7 writes <u4 offsets while they fit; a reader accepts <u4 and <u8 alike.
    blob = np.frombuffer("héxy".encode(), dtype="<u1")
    for dtype in ("<u4", "<u8"):
        t = fmt.StringTable(np.array([0, 3, 3, 5], dtype=dtype), blob, name="t")
        assert list(t) == ["hé", "", "xy"] and t.take([2, 0]) == ["xy", "hé"]
        t.validate_all()
    with pytest.raises(CorruptIndexError, match="`chunk.id.data` must be a 1-D <u1 array"):
        fmt.StringTable(np.zeros(1, "<u8"), np.zeros((0, 1), "<u1"), name="chunk.id")


def _deflated(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    arrays = fmt.string_table_arrays("t", values)
    return arrays["t.offsets"], arrays["t.zdata"]


def test_small_string_tables_are_stored_deflated_and_inflated_on_first_use() -> None:
    values = ["guide/install.md", "", "tutorial/cors.md", "héllo"] * 50
    arrays = fmt.string_table_arrays("t", values)
    assert set(arrays) == {"t.offsets", "t.zdata"}  # smaller deflated: stored so
    table = fmt.DeflatedStringTable(arrays["t.offsets"], arrays["t.zdata"], name="t")
    assert len(table) == 200 and not table._ready  # noqa: SLF001 - O(1) until first read
    assert table[3] == "héllo" and table.take([0, 2]) == ["guide/install.md", "tutorial/cors.md"]
    assert list(table) == values
    table.validate_all()
    index = encode(arrays)
    back = fmt.read_string_table(index, fmt.read_header(index), "t")
    assert isinstance(back, fmt.DeflatedStringTable) and list(back) == values
    # Nothing to gain (a single short string) or nothing at all: stored raw.
    assert set(fmt.string_table_arrays("t", ["x"])) == {"t.offsets", "t.data"}
    assert set(fmt.string_table_arrays("t", [])) == {"t.offsets", "t.data"}


@pytest.mark.parametrize(
    ("forge", "message"),
    [
        # The offsets claim more than deflate could make of the stream: refused before inflating.
        (lambda o, z: (o * np.uint32(2000), z), "cannot inflate to that"),
        (lambda o, z: (o, z[: z.shape[0] // 2]), "does not inflate to exactly the 800 bytes"),
        (lambda o, z: (o, np.concatenate([z, z])), "does not inflate to exactly the 800 bytes"),
        (lambda o, z: (o - np.minimum(o, 1), z), "does not inflate to exactly the 799 bytes"),
        (lambda o, z: (o, np.full_like(z, 0xFF)), "`t.zdata` is not a deflate stream"),
        (lambda o, z: (o[:1] * 0, z), "does not inflate to exactly the 0 bytes"),
    ],
)
def test_a_forged_deflated_table_is_a_corrupt_index_error(forge: Any, message: str) -> None:
    offsets, zdata = forge(*_deflated(["abcd"] * 200))
    with pytest.raises(CorruptIndexError, match=message):
        table = fmt.DeflatedStringTable(offsets, zdata, name="t", source="x.scidx")
        table[0]
    with pytest.raises(CorruptIndexError, match=message):
        fmt.DeflatedStringTable(offsets, zdata, name="t", source="x.scidx").validate_all()


def test_a_table_with_both_raw_and_deflated_data_is_refused() -> None:
    offsets, zdata = _deflated(["abcd"] * 200)
    index = encode({"t.offsets": offsets, "t.zdata": zdata, "t.data": np.zeros(800, "<u1")})
    with pytest.raises(CorruptIndexError, match="has both `t.data` and `t.zdata`"):
        fmt.read_string_table(index, fmt.read_header(index), "t")


def test_string_table_lazy_and_full_checks() -> None:
    t = table([0, 4, 1, 5], b"abcde")  # row 1 runs backwards
    assert t[0] == "abcd"  # rows not touched are not checked...
    with pytest.raises(CorruptIndexError) as info:
        t[1]  # ...but a bad row is, when accessed
    assert str(info.value) == (
        "<buffer>: string table `chunk.id` row 1 has offsets 4..1, out of order or past the "
        f"data (5 bytes). {HINT}"
    )
    with pytest.raises(CorruptIndexError, match="row 1 has offsets 4..1, out of order"):
        t.validate_all()

    bad_utf8 = table([0, 1, 3], b"a\xff\xfe")
    with pytest.raises(CorruptIndexError) as info:
        bad_utf8[1]
    assert str(info.value) == (
        f"<buffer>: string table `chunk.id` row 1 is not valid UTF-8 (invalid start byte). {HINT}"
    )
    with pytest.raises(CorruptIndexError, match="row 1 is not valid UTF-8"):
        bad_utf8.validate_all()

    split = table([0, 1, 2], "é".encode())  # a boundary inside a 2-byte character
    with pytest.raises(CorruptIndexError, match="row 1 starts inside a UTF-8 character"):
        split.validate_all()
    with pytest.raises(CorruptIndexError, match="row 0 is not valid UTF-8"):
        split[0]


@pytest.mark.parametrize("block", [1, 2, 3, 5, 1 << 20])
def test_string_table_validation_in_blocks(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """validate_all decodes a block at a time; no block boundary splits a character."""
    monkeypatch.setattr(fmt, "_VALIDATE_BLOCK", block)
    rows = ["é", "日本語", "", "a😀b", "ok"]
    offsets, data = fmt.encode_strings(rows)
    fmt.StringTable(offsets, data, name="chunk.text").validate_all()  # valid: no error
    bad = bytearray(data.tobytes())
    at = int(offsets[3]) + 2  # inside row 3's 4-byte emoji
    bad[at] = 0xFF
    t = fmt.StringTable(offsets, np.frombuffer(bytes(bad), dtype="<u1"), name="chunk.text")
    with pytest.raises(CorruptIndexError, match="row 3 is not valid UTF-8"):
        t.validate_all()


def test_encode_strings_errors() -> None:
    with pytest.raises(TypeError, match="string table element 1 is a int, not a str"):
        fmt.encode_strings(["a", 1])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="string table element 0 is not encodable as UTF-8"):
        fmt.encode_strings(["\ud800"])
    offsets, data = fmt.encode_strings([])
    assert offsets.tolist() == [0] and data.shape == (0,)


# ---------------------------------------------------------------------------------------------
# The spec stays in step with the code


FORMAT_MD = Path(__file__).resolve().parent.parent / "docs" / "FORMAT.md"


def test_format_md_hex_dump_is_tiny() -> None:
    text = FORMAT_MD.read_text(encoding="utf-8")
    section = text[text.index("### 3.1") :]
    dump = section[section.index("```\n") + 4 : section.index("\n```", section.index("```\n") + 4)]
    data = b"".join(
        bytes.fromhex(line.split(": ", 1)[1][:39].replace(" ", "")) for line in dump.splitlines()
    )
    assert data == TINY


def test_format_md_names_every_constant() -> None:
    text = FORMAT_MD.read_text(encoding="utf-8")
    assert f"MAX_HEADER_BYTES = {fmt.MAX_HEADER_BYTES:_}" in text
    assert f"ALIGNMENT = {fmt.ALIGNMENT}" in text
    assert f"version {fmt.FORMAT_VERSION[0]}.{fmt.FORMAT_VERSION[1]}" in text
    for dtype in fmt.DTYPES:
        assert f"| `{dtype}` |" in text
