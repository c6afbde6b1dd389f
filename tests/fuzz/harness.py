"""Structured fuzzing of the index reader: mutate a valid ``.scidx`` file, load it, use everything.

One *case* takes a valid seed index (packed by the real packer), applies one or more mutations,
loads the result (``verify`` on or off) and, when it loads, runs every search mode with and
without filters, ``rank``, ``search_vector``, ``chunk``/``get`` and reads every hit field. The
only exceptions allowed are :class:`scidx.errors.ScidxError` subclasses; anything else (and any
crash, hang or runaway allocation, which the long runner watches for) is a finding.

Mutations:

* ``header``: edit a value anywhere in the msgpack header (meta values, array entries' shape,
  dtype, offset, nbytes, name, xxh3) and re-encode it, keeping the data section;
* ``array``: change one array's contents (string-table offsets, CSR pointers, postings, vectors,
  with interesting values) and re-encode the file, so the checksums are *recomputed* and the
  damage is visible only to content checks;
* ``reshape``: give an array another dtype or shape (or drop/add one) and re-encode;
* ``meta``: replace a ``meta`` value (dimensions, urlTemplate, bm25 settings, tokenizer...)
  with a hostile one, checksums recomputed;
* ``truncate`` and ``flip``: raw byte damage (checksums not recomputed).

Mutations pick their array (``array``, ``reshape``, ``header``) from the arrays the mutated
file lists, not from a fixed list, so an array a later format adds is mutated as soon as the
seeds hold it.

:func:`run_export_case` runs the exporters over a mutant instead of the query surface: the
llms.txt builder (which reads the file itself), the web bundle and, given a PostgreSQL DSN, the
PostgreSQL export. They too may raise only ScidxError, and a refused PostgreSQL export leaves the
tables as they were.

Choices come from a :class:`Chooser`, backed by ``random.Random`` for the long run
(``benchmarks/fuzz_long.py``) and by Hypothesis' ``data.draw`` in the bounded suite test
(``tests/test_fuzz.py``), so failures shrink there and replay exactly here.
"""

from __future__ import annotations

import copy
import io
import math
import random
import struct
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import msgpack  # type: ignore[import-untyped]
import numpy as np
import xxhash

from scidx.errors import ScidxError
from scidx.index import format as fmt
from scidx.index.index import Index, load_bytes
from scidx.index.safety import json_dumps_safe

__all__ = [
    "MUTATIONS",
    "Chooser",
    "RandomChooser",
    "exercise",
    "mutate",
    "run_case",
    "run_export_case",
    "seeds",
]


class Chooser(Protocol):
    """Where a case's choices come from."""

    def integer(self, lo: int, hi: int) -> int: ...

    def choice(self, options: Sequence[Any]) -> Any: ...


class RandomChooser:
    """A :class:`Chooser` over ``random.Random(seed)``: case ``i`` of a run is reproducible."""

    def __init__(self, seed: int) -> None:
        self._rnd = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self._rnd.randint(lo, hi)

    def choice(self, options: Sequence[Any]) -> Any:
        return options[self._rnd.randrange(len(options))]


_DOCS = [
    (
        "guide/install.md",
        "Guide",
        ["Guide", "Install"],
        "install",
        {"section": "guide"},
        "Install kubectl with your package manager, then check the version. Pods and nodes.",
    ),
    (
        "guide/install.md",
        "Guide",
        ["Guide", "CORS"],
        "cors",
        {"section": "guide"},
        "Configure CORS with the allow_origins setting. Origins are matched exactly.",
    ),
    (
        "ref/options.md",
        "Options",
        ["Options"],
        "options",
        {"section": "reference", "v": "2"},
        "The max_chunk_chars option bounds the size of each chunk in characters.",
    ),
    (
        "ref/options.md",
        "Options",
        ["Options", "Deep"],
        "deep",
        {"section": "reference", "v": "2"},
        "Nested lists, tables and code blocks are kept whole when they fit the budget.",
    ),
    (
        "zeta.md",
        "",
        [],
        "",
        {},
        'Text before any heading. Ünïcödé and emoji 🚀 survive; so do "quotes".',
    ),
]


@lru_cache(maxsize=1)
def seeds() -> tuple[bytes, ...]:
    """Valid seed indexes, packed in memory by the real packer (hashing, 16 dims, 3 encodings)."""
    from scidx.pack.packer import pack_records

    records = [
        {
            "id": f"{src}:{anchor}:0",
            "source": src,
            "title": title,
            "headingPath": path,
            "anchor": anchor,
            "metadata": meta,
            "text": text,
        }
        for src, title, path, anchor, meta, text in _DOCS
    ]
    out = []
    for template, recs, encoding in (
        ("https://docs.example.com/{path}#{anchor}", records, "float32"),
        (None, records[:2], "float32"),
        ("/docs/{page}", records[2:], "float32"),
        ("https://d.io/{page}", records, "int8"),
        (None, records, "binary"),
    ):
        result = pack_records(
            recs,
            None,
            dimensions=16,
            use_cache=False,
            url_template=template,
            workers=1,
            vectors=encoding,
        )
        assert result.data is not None
        out.append(result.data)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Decoding and re-encoding


def _decode(data: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray], str, str]:
    cached = _seed_decoded().get(data)
    if cached is not None:  # most mutations start from a seed: skip re-validating it
        meta, arrays, gen, built = cached
        return copy.deepcopy(meta), {k: v.copy() for k, v in arrays.items()}, gen, built
    return _decode_uncached(data)


@lru_cache(maxsize=1)
def _seed_decoded() -> dict[bytes, tuple[dict[str, Any], dict[str, np.ndarray], str, str]]:
    return {data: _decode_uncached(data) for data in seeds()}


def _decode_uncached(data: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray], str, str]:
    header = fmt.read_header(data)
    arrays = {name: np.array(fmt.array_view(data, header, name)) for name in header.arrays}
    return header.meta, arrays, header.generator, header.built_utc


def _encode(arrays: dict[str, np.ndarray], meta: Any) -> bytes | None:
    buf = io.BytesIO()
    try:
        fmt.write_index(buf, arrays, meta, built_utc="1970-01-01T00:00:00Z", generator="fuzz")
    except (ValueError, TypeError, OverflowError):
        return None  # the writer refuses this mutation (not a reader finding)
    return buf.getvalue()


def _raw_header(data: bytes) -> tuple[dict[str, Any], bytes]:
    (hlen,) = struct.unpack_from("<Q", data, 16)
    header = msgpack.unpackb(data[24 : 24 + hlen], raw=False, strict_map_key=False)
    start = fmt.align(24 + hlen)
    return header, data[start:]


def _with_header(data: bytes, header: Any, body: bytes) -> bytes:
    packed = msgpack.packb(header, use_bin_type=True)
    pre = data[:16] + struct.pack("<Q", len(packed))
    pos = 24 + len(packed)
    return pre + packed + bytes(fmt.align(pos) - pos) + body


# ---------------------------------------------------------------------------------------------
# Interesting values

_INTS = [
    0,
    1,
    2,
    3,
    7,
    8,
    63,
    64,
    65,
    255,
    256,
    4095,
    65535,
    65536,
    65537,
    2**31 - 1,
    2**31,
    2**32 - 1,
    2**32,
    2**53,
    2**62,
    2**63 - 1,
    2**63,
    2**64 - 1,
    -1,
    -2,
    -(2**63),
]
_FLOATS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e-45,
    1e-30,
    3e38,
    -3e38,
    1e308,
    math.inf,
    -math.inf,
    math.nan,
    2.0,
    1e6,
]
_STRINGS = [
    "",
    "x",
    "{source}",
    "{source}" * 9,
    "javascript:alert(1)",
    "https://a/{page}",
    "{anchor}javascript:{path}",
    "\x1b[2J\x1b]8;;http://e\x07",
    "\u009b31m",
    "[" * 3000,
    "{}",
    "[]",
    '{"a":',
    "scidx-tok-1",
    "scidx-tok-3",
    "hashing",
    "hashing-v2",
    "l2",
    "a" * 5000,
    "{path}{path}{path}",
    "{0}",
    "{source.__class__}",
    "{source!r}",
    "\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
]


def _value(ch: Chooser) -> Any:
    kind = ch.integer(0, 6)
    if kind == 0:
        return ch.choice(_INTS)
    if kind == 1:
        return ch.choice(_FLOATS)
    if kind == 2:
        return ch.choice(_STRINGS)
    if kind == 3:
        return ch.choice([None, True, False])
    if kind == 4:
        return [ch.choice(_INTS) for _ in range(ch.integer(0, 9))]
    if kind == 5:
        return {"provider": "hashing", "model": "hashing-v2", "dimensions": ch.choice(_INTS)}
    return {ch.choice(["a", "dimensions", "tokenizer", ""]): ch.choice(_STRINGS)}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = root
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return root


# ---------------------------------------------------------------------------------------------
# Mutations


def _m_header(data: bytes, ch: Chooser) -> bytes | None:
    header, body = _raw_header(data)
    paths = _paths(header)
    path = ch.choice(paths[1:])
    if ch.integer(0, 5) == 0 and isinstance(header.get("arrays"), list) and header["arrays"]:
        # Structural array-entry edits: offsets/nbytes/shape consistent or not.
        entry = ch.choice(header["arrays"])
        key = ch.choice(["offset", "nbytes", "shape", "dtype", "name", "xxh3"])
        if key == "shape":
            entry[key] = [ch.choice(_INTS) for _ in range(ch.integer(0, 9))]
        else:
            entry[key] = _value(ch)
    else:
        header = _set(header, path, _value(ch))
    try:
        return _with_header(data, header, body)
    except (ValueError, TypeError, OverflowError):
        return None


_ARRAY_VALUES = {
    "u": [0, 1, 2, 3, 5, 63, 64, 255, 2**31, 2**32 - 1],
    "i": [0, -1, 1, 2**31 - 1],
    "f": [0.0, -1.0, 1.0, 3e38, -3e38, float("nan"), float("inf"), 1e-40, 0.5],
}


def _m_array(data: bytes, ch: Chooser) -> bytes | None:
    """Change 1-3 elements of one array in place and recompute that array's checksum.

    The xxh3 string has a fixed length, so the header keeps its length and layout: the file is
    patched, not re-encoded (the cheapest mutation, and the one that reaches deepest).
    """
    header = fmt.read_header(data) if data not in _seed_headers() else _seed_headers()[data]
    name = ch.choice(sorted(header.arrays))
    info = header.arrays[name]
    if info.nbytes == 0:
        return None
    out = bytearray(data)
    start = header.data_start + info.offset
    flat = np.frombuffer(
        out, dtype=info.np_dtype, count=info.nbytes // info.np_dtype.itemsize, offset=start
    )
    for _ in range(ch.integer(1, 3)):
        pos = ch.integer(0, flat.shape[0] - 1)
        how = ch.integer(0, 3)
        if how == 1 and flat.dtype.kind == "u":
            value: Any = int(flat[pos]) + ch.choice([1, -1, 64, 1000])
        elif how == 2:
            value = flat[ch.integer(0, flat.shape[0] - 1)]  # a value from elsewhere (a swap)
        else:
            value = ch.choice(_ARRAY_VALUES[flat.dtype.kind])
        try:
            with np.errstate(all="ignore"):
                flat[pos] = np.array(value).astype(flat.dtype)
        except (OverflowError, ValueError):
            flat[pos] = 0
    digest = xxhash.xxh3_64_hexdigest(memoryview(out)[start : start + info.nbytes])
    old = info.xxh3.encode()
    at = out.find(old, 24, header.data_start)
    if at < 0:
        return None
    out[at : at + 16] = digest.encode()
    return bytes(out)


@lru_cache(maxsize=1)
def _seed_headers() -> dict[bytes, fmt.Header]:
    return {data: fmt.read_header(data) for data in seeds()}


_DTYPES = ["<u1", "<u4", "<u8", "<i4", "<i8", "<f4"]


def _m_reshape(data: bytes, ch: Chooser) -> bytes | None:
    meta, arrays, _, _ = _decode(data)
    name = ch.choice(sorted(arrays))
    how = ch.integer(0, 4)
    arr = arrays[name]
    if how == 0:
        del arrays[name]
    elif how == 1:
        arrays[name] = arr.astype(ch.choice(_DTYPES))
    elif how == 2:
        arrays[name] = arr.reshape(-1)[: ch.integer(0, max(arr.size, 1))].copy()
    elif how == 3:
        extra = np.zeros(ch.integer(1, 5), dtype=arr.dtype)
        arrays[name] = np.concatenate([arr.reshape(-1), extra])
    else:
        dims = [ch.choice([0, 1, 2, 3, 4, 16]) for _ in range(ch.integer(0, 3))]
        size = math.prod(dims)
        if size > 4096:
            return None
        arrays[name] = np.zeros(dims, dtype=ch.choice(_DTYPES))
    if ch.integer(0, 3) == 0:
        arrays[f"extra.{ch.integer(0, 9)}"] = np.zeros(ch.integer(0, 8), dtype="<u1")
    return _encode(arrays, meta)


_META_PATHS = [
    ("provider", "dimensions"),
    ("provider", "provider"),
    ("provider", "model"),
    ("provider", "normalization"),
    ("urlTemplate",),
    ("bm25", "tokenizer"),
    ("bm25", "k1"),
    ("bm25", "b"),
    ("bm25", "avgdl"),
    ("bm25", "fieldWeights"),
    ("counts", "chunks"),
    ("packer",),
    ("chunking",),
    ("provider",),
    ("bm25",),
]


def _m_meta(data: bytes, ch: Chooser) -> bytes | None:
    """Replace one ``meta`` value (the header is not checksummed: only re-encoded)."""
    header, body = _raw_header(data)
    meta = header.get("meta")
    if not isinstance(meta, dict):
        return None
    path = ch.choice(_META_PATHS)
    node = meta
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = _value(ch)
    try:
        return _with_header(data, header, body)
    except (ValueError, TypeError, OverflowError):
        return None


def _m_truncate(data: bytes, ch: Chooser) -> bytes | None:
    return data[: ch.integer(0, len(data) - 1)]


def _m_flip(data: bytes, ch: Chooser) -> bytes | None:
    out = bytearray(data)
    for _ in range(ch.integer(1, 8)):
        pos = ch.integer(0, len(out) - 1)
        out[pos] ^= 1 << ch.integer(0, 7)
    return bytes(out)


MUTATIONS: dict[str, Callable[[bytes, Chooser], bytes | None]] = {
    "header": _m_header,
    "array": _m_array,
    "reshape": _m_reshape,
    "meta": _m_meta,
    "truncate": _m_truncate,
    "flip": _m_flip,
}


# Weighted: mutations with recomputed checksums reach the content checks and the query path;
# raw damage mostly stops at the header or at verify.
_KINDS = (
    ["array"] * 7 + ["meta"] * 4 + ["reshape"] * 3 + ["header"] * 3 + ["flip"] * 2 + ["truncate"]
)


def mutate(ch: Chooser) -> tuple[bytes, list[str]]:
    """A mutated seed: one to three mutations, each re-encoded as its kind says."""
    data = ch.choice(seeds())
    applied: list[str] = []
    for _ in range(ch.integer(1, 3)):
        kind = ch.choice(_KINDS)
        try:
            out = MUTATIONS[kind](data, ch)
        except Exception:  # noqa: BLE001 - the mutator (not the reader) cannot parse the file
            out = None
        if out is not None:
            data = out
            applied.append(kind)
    return data, applied


# ---------------------------------------------------------------------------------------------
# Exercising a loaded index

_QUERIES = [
    "install kubectl",
    "cors origins",
    "chunk",
    "the",
    "",
    "   ",
    "ünïcödé 🚀",
    "max_chunk_chars option budget",
    "a" * 300,
    "\x1b[2J",
]


def _read_hit(hit: Any) -> None:
    d = hit.to_dict()
    for key in (
        "id",
        "score",
        "source",
        "anchor",
        "headingPath",
        "title",
        "text",
        "snippet",
        "url",
    ):
        d[key]  # noqa: B018 - reading every field is the point
    assert isinstance(hit.snippet, str)
    json_dumps_safe(d)


def _filters(ch: Chooser) -> dict[str, Any]:
    pick = ch.integer(0, 5)
    if pick == 1:
        return {"source": ch.choice(["guide/*", "ref", "*.md", "z", "[", "**/x*y*z"])}
    if pick == 2:
        return {"heading": ch.choice(["cors", "options", "Ü"])}
    if pick == 3:
        return {"metadata": {"section": ch.choice(["guide", "reference"])}}
    if pick == 4:
        return {"min_score": ch.choice([0.0, 0.5, -1.0, 1e30])}
    if pick == 5:
        return {"alpha": ch.choice([0.0, 0.3, 1.0])}
    return {}


def _extras(idx: Index, ch: Chooser) -> None:
    extra = ch.integer(0, 3)
    n = len(idx)
    if extra == 0:
        d = int(idx.stamp.get("dimensions") or 1)
        if 0 < d <= 65536:
            for hit in idx.search_vector(np.ones(d, dtype=np.float32), k=3):
                _read_hit(hit)
    elif extra == 1:
        for i in {0, n - 1, n // 2} if n else ():
            hit = idx.chunk(i)
            _read_hit(hit)
            idx.get(hit.id)
    elif extra == 2:
        idx.source_metadata()
    idx.get("no such id")


def exercise(idx: Index, ch: Chooser) -> None:
    """Use the whole query surface of ``idx``; only ScidxError may escape (caller checks)."""
    len(idx)
    idx.meta  # noqa: B018
    idx.stamp  # noqa: B018
    fmt.header_to_dict(idx.header)
    # One or two modes per case (all of them over a run) keeps a case cheap.
    modes = ["keyword", "vector", "hybrid"]
    for mode in [ch.choice(modes) for _ in range(ch.integer(1, 2))]:
        query = ch.choice(_QUERIES)
        kwargs = _filters(ch)
        try:
            for hit in idx.search(query, k=ch.choice([1, 3, 10, 1000]), mode=mode, **kwargs):
                _read_hit(hit)
            idx.rank(query, k=5, mode=mode, **kwargs)
        except ScidxError:
            pass
    try:
        _extras(idx, ch)
    except ScidxError:
        pass


def run_case(ch: Chooser) -> str:
    """One case: mutate, load (verify on or off), exercise; returns how it ended.

    Returns:
        ``"unchanged"`` (every mutation was refused by the mutator), ``"loaded"`` (the file
        loaded and every call ran, possibly raising ScidxErrors), or ``"refused"`` (the load
        raised a ScidxError). Any other exception propagates: that is a finding.
    """
    data, applied = mutate(ch)
    if not applied:
        return "unchanged"
    verify = ch.integer(0, 3) == 0
    try:
        idx = load_bytes(data, verify=verify, source="fuzz.scidx")
    except ScidxError:
        return "refused"
    with idx:
        try:
            exercise(idx, ch)
        except ScidxError:
            pass
    return "loaded"


# ---------------------------------------------------------------------------------------------
# Exporters over mutants

EXPORT_TABLES = ("fuzz_a", "fuzz_b", "fuzz_c")
"""The PostgreSQL tables export cases cycle through (full and incremental exports both run)."""


def _export_state(dsn: str, table: str) -> Any:
    """What a refused export must not change: the table's stamp and row versions."""
    from scidx.postgres.connection import TableNames, connect
    from scidx.postgres.schema import read_meta

    names = TableNames(schema="public", table=table)
    with connect(dsn) as conn:
        meta = read_meta(conn, names)
        if meta is None:
            return None
        rows = conn.execute(f'SELECT count(*), sum(xmin::text::bigint) FROM "{table}"').fetchone()
        return meta, rows


def run_export_case(ch: Chooser, workdir: Path, dsn: str | None = None) -> str:
    """One case for the exporters: mutate, then llms.txt, the web bundle and PostgreSQL.

    Args:
        ch: Where the choices come from.
        workdir: A folder for the mutant file (llms.txt reads a path).
        dsn: A PostgreSQL DSN; ``None`` skips the PostgreSQL export.

    Returns:
        ``"unchanged"``, ``"refused"`` (the load refused the file; llms.txt still ran) or
        ``"exported"`` (the exporters ran, each finishing or raising a ScidxError). Any other
        exception, or a refused PostgreSQL export that changed its table, is a finding.
    """
    from scidx.export.llms_txt import build_llms_txt
    from scidx.export.web_bundle import build_web_bundle

    data, applied = mutate(ch)
    if not applied:
        return "unchanged"
    path = workdir / "fuzz.scidx"
    path.write_bytes(data)
    try:
        build_llms_txt(path)
    except ScidxError:
        pass
    verify = ch.integer(0, 3) == 0
    try:
        idx = load_bytes(data, verify=verify, source=str(path))
    except ScidxError:
        return "refused"
    with idx:
        try:
            build_web_bundle(idx)
        except ScidxError:
            pass
        if dsn is not None:
            from scidx.postgres.export import export_index

            table = ch.choice(EXPORT_TABLES)
            before = _export_state(dsn, table)
            try:
                export_index(idx, dsn, table=table)
            except ScidxError as exc:
                after = _export_state(dsn, table)
                assert after == before, f"a refused export ({exc}) changed table {table}"
    return "exported"
