"""Open an index file and check, in constant time, that its runtime arrays fit together.

Two steps of :func:`scidx.load`, and the mapped file's lifetime:

* :func:`open_file` opens the path (regular files only: a FIFO would block the open) and maps it
  read-only, or reads it whole for ``in_memory=True``. The returned :class:`MappedFile` keeps
  the descriptor, so an open index notices an in-place overwrite (size or modification time
  changed) before it reads a lost page, and releases the mapping once.
* :func:`build_corpus` validates the header's arrays against each other (presence, dtype and
  shape: ``N`` chunks from ``chunk.source``, ``S`` sources, ``V`` terms, ``P`` postings, ``D``
  dimensions from the provider stamp) using the header alone plus a handful of single-element
  reads, and wraps them as a :class:`~scidx.index.corpus.Corpus`. No per-chunk or per-term
  Python objects are made; string tables and postings are read lazily, each access
  bounds-checked, so a corrupt file yields an :class:`~scidx.errors.IndexFormatError`, never
  an ``IndexError`` or a crash.

The full scan behind ``verify=True`` is :mod:`scidx.index.verify`.

Runtime module: numpy, msgpack, xxhash and the stdlib only.
"""

from __future__ import annotations

import math
import mmap
import os
import stat
from collections.abc import Mapping
from typing import Any

from scidx.errors import CorruptIndexError, IndexFormatError, UnsupportedFormatVersionError
from scidx.fusion import DEFAULT_FUSION
from scidx.index.bm25 import MAX_PAGE_WEIGHT, BM25Arrays
from scidx.index.columns import read_column
from scidx.index.corpus import Corpus
from scidx.index.format import REBUILD_HINT, Header, array_view, read_header, read_string_table
from scidx.index.ids import read_chunk_ids
from scidx.index.languages import PageLanguages, page_languages
from scidx.index.safety import MAX_DIMENSIONS, MAX_URL_PLACEHOLDERS, MAX_URL_TEMPLATE_CHARS
from scidx.index.texts import open_texts, text_columns
from scidx.index.vectors import open_vectors
from scidx.index.versions import read_versions
from scidx.index.windows import open_windows
from scidx.tokenize import TOKENIZER_VERSION

__all__ = [
    "MappedFile",
    "build_corpus",
    "close_quietly",
    "corrupt",
    "open_file",
    "open_regular",
]

_CHUNK_TABLES = ("chunk.heading", "chunk.anchor")
_SOURCE_TABLES = ("source.path", "source.title", "source.meta")


def corrupt(source: str, what: str) -> CorruptIndexError:
    """The error for an inconsistent file: what is wrong, where, and how to fix it."""
    return CorruptIndexError(f"{source}: {what}. {REBUILD_HINT}")


def _shape(header: Header, name: str) -> tuple[int, ...]:
    info = header.arrays.get(name)
    if info is None:
        raise corrupt(header.source, f"the index has no array `{name}`")
    return info.shape


def _expect_shape(header: Header, name: str, shape: tuple[int, ...]) -> None:
    got = _shape(header, name)
    if got != shape:
        raise corrupt(
            header.source, f"array `{name}` has shape {list(got)}, expected {list(shape)}"
        )


def _meta_map(header: Header, key: str) -> Mapping[str, Any]:
    value = header.meta.get(key)
    if not isinstance(value, Mapping):
        raise corrupt(header.source, f"the header meta has no `{key}` map")
    return value


def _checked_meta(header: Header) -> tuple[Mapping[str, Any], int, str | None, str | None]:
    """The header meta the runtime reads: provider stamp, dimensions, URL template, source root.

    Raises:
        UnsupportedFormatVersionError: The keyword index used another tokenizer.
        CorruptIndexError: A value is missing, of the wrong type, or out of bounds.
    """
    src = header.source
    stamp = _meta_map(header, "provider")
    bm25_meta = _meta_map(header, "bm25")
    tokenizer = bm25_meta.get("tokenizer")
    if tokenizer != TOKENIZER_VERSION:
        raise UnsupportedFormatVersionError(
            f"{src}: the keyword index was built with tokenizer {tokenizer!r}, but this scidx "
            f"uses {TOKENIZER_VERSION!r}; rebuild the index with `toolup-rag pack-docs` or "
            "install the scidx version that built it."
        )
    dims = stamp.get("dimensions")
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise corrupt(src, f"the provider stamp has dimensions {dims!r}, not a positive integer")
    if dims > MAX_DIMENSIONS:
        # Even an empty index would make every vector query allocate `dims` floats.
        raise corrupt(
            src, f"the provider stamp has {dims} dimensions, over the limit of {MAX_DIMENSIONS}"
        )
    url_template = header.meta.get("urlTemplate")
    if url_template is not None and not isinstance(url_template, str):
        raise corrupt(src, f"meta `urlTemplate` is {type(url_template).__name__}, not a string")
    if url_template is not None and _url_template_problem(url_template):
        raise corrupt(
            src,
            "meta `urlTemplate` is not a valid URL template (at most "
            f"{MAX_URL_TEMPLATE_CHARS} characters and {MAX_URL_PLACEHOLDERS} of the "
            "placeholders {source}, {path}, {page} and {anchor}; http(s) or relative)",
        )

    source_root = header.meta.get("sourceRoot")
    if source_root is not None and (
        not isinstance(source_root, str) or not source_root or _source_root_problem(source_root)
    ):
        raise corrupt(src, f"meta `sourceRoot` {source_root!r} is not a relative folder path")
    return stamp, dims, url_template, source_root


def build_corpus(buf: Any, header: Header, *, rescore: int | None = None) -> Corpus:
    """Validate the runtime arrays against each other in O(1) and wrap them (no data scan)."""
    src = header.source
    stamp, dims, url_template, source_root = _checked_meta(header)
    # <u2 while the sources fit (format 6, the packer's choice), else <u4; either is valid.
    chunk_source = array_view(buf, header, "chunk.source", dtype=("<u2", "<u4"), ndim=1)
    n = int(chunk_source.shape[0])
    s = _shape(header, "source.path.offsets")
    if len(s) != 1 or s[0] < 1:
        raise corrupt(src, f"array `source.path.offsets` has shape {list(s)}")
    n_sources = s[0] - 1
    for name in _SOURCE_TABLES:
        _expect_shape(header, f"{name}.offsets", (n_sources + 1,))
    tables: dict[str, Any] = {name: read_string_table(buf, header, name) for name in _SOURCE_TABLES}
    # A row per chunk, or (format 5) the distinct values and a row index.
    tables.update({name: read_column(buf, header, name, n) for name in _CHUNK_TABLES})
    # Stored (records with ids of their own), or derived from source, anchor and ordinal.
    if "chunk.id.offsets" in header.arrays:
        _expect_shape(header, "chunk.id.offsets", (n + 1,))
    chunk_id = read_chunk_ids(buf, header)
    source_page = None
    page_data = "source.page.data" in header.arrays or "source.page.zdata" in header.arrays
    if "source.page.offsets" in header.arrays or page_data:
        # Optional (packer 9+): both arrays or neither; rows are checked when read.
        _expect_shape(header, "source.page.offsets", (n_sources + 1,))
        if not page_data:
            _shape(header, "source.page.data")  # names the missing array
        source_page = read_string_table(buf, header, "source.page")
    versions = read_versions(buf, header, n_sources)  # optional (format 10)
    # Markdown and clean text, compressed per chunk (format 2); without a separate clean text
    # snippets come from the raw text.
    text, plain = text_columns(open_texts(buf, header, n))
    if n and not n_sources:
        raise corrupt(src, f"the index has {n} chunks but no sources")

    for name, dtype, shape in (
        ("chunk.ordinal", ("<u2", "<u4"), (n,)),
        ("chunk.span", ("<u8", "<u4"), (n, 4)),
        ("bm25.doc_len", ("<u2", "<u4"), (n,)),
    ):
        _expect_shape(header, name, shape)
        array_view(buf, header, name, dtype=dtype, ndim=len(shape))
    store = open_vectors(buf, header, n, dims, rescore=rescore)
    # float32 indexes search the mmapped matrix itself; the others go through their store.
    vectors = store.decode_all() if store.encoding == "float32" else store
    windows = open_windows(buf, header, n, dims, store.encoding)

    bm25 = _bm25_arrays(buf, header, chunk_source)
    offsets = _snippet_offsets(buf, header, n)
    dictionary = _dictionary_arrays(buf, header)

    return Corpus(
        source=src,
        n=n,
        chunk_id=chunk_id,
        chunk_text=text,
        chunk_heading=tables["chunk.heading"],
        chunk_anchor=tables["chunk.anchor"],
        chunk_source=chunk_source,
        source_path=tables["source.path"],
        source_title=tables["source.title"],
        source_meta=tables["source.meta"],
        vectors=vectors,
        store=store,
        bm25=bm25,
        stamp=dict(stamp),
        url_template=url_template,
        fusion=_fusion(header),
        chunk_plain=plain,
        source_root=source_root,
        snippet_arrays=offsets,
        source_page=source_page,
        windows=windows,
        versions=versions,
        token_counts=_token_counts(buf, header, stamp),
        dictionary_arrays=dictionary,
        languages=_languages(buf, header, n_sources),
    )


def _languages(buf: Any, header: Header, n_sources: int) -> PageLanguages:
    """``meta.language``/``meta.languages`` and ``source.lang`` (issue 42), checked."""
    column = None
    if "source.lang" in header.arrays:
        column = array_view(buf, header, "source.lang", dtype="<u1", ndim=1)
    return page_languages(header.meta, column, n_sources, header.source)


def _token_counts(buf: Any, header: Header, stamp: Mapping[str, Any]) -> Any:
    """``static.counts`` (``<u4``, 1-D) of a ``static`` index, checked in O(1); else None.

    Its length and digest are checked against the table when a query is embedded
    (:func:`scidx.embed.static.embedder_for_index`).
    """
    present = "static.counts" in header.arrays
    if stamp.get("provider") != "static":
        return None
    if not present:
        raise corrupt(
            header.source, "the provider is `static` but the array `static.counts` is missing"
        )
    return array_view(buf, header, "static.counts", dtype="<u4", ndim=1)


def _bm25_arrays(buf: Any, header: Header, chunk_source: Any) -> BM25Arrays:
    """The BM25 arrays, their shapes checked against each other (``V`` terms, ``R`` run bytes).

    With the ``meta.bm25`` parameters their impacts are computed with, and each chunk's page
    (``chunk.source``) for page evidence. Each term's run is checked when it is first read
    (:func:`scidx.index.bm25.term_postings`).
    """
    src = header.source
    term_hash = array_view(buf, header, "bm25.term_hash", dtype="<u8", ndim=1)
    v = int(term_hash.shape[0])
    _expect_shape(header, "bm25.term_df", (v,))
    codes = ("<u1", "<u2", "<u4")
    term_df = array_view(buf, header, "bm25.term_df", dtype=codes, ndim=1)
    _expect_shape(header, "bm25.term_width", (v, 2))
    term_width = array_view(buf, header, "bm25.term_width", dtype="<u1", ndim=2)
    _expect_shape(header, "bm25.run_ptr", (v + 1,))
    # <u4 while the runs fit in 4 GiB (the packer's choice), else <u8; either is valid.
    ptr_dtype = ("<u4", "<u8")
    run_ptr = array_view(buf, header, "bm25.run_ptr", dtype=ptr_dtype, ndim=1)
    runs = array_view(buf, header, "bm25.runs", dtype="<u1", ndim=1)
    tf_values = array_view(buf, header, "bm25.tf_values", dtype="<f8", ndim=1)
    df_values = array_view(buf, header, "bm25.df_values", dtype="<u4", ndim=1)
    _expect_shape(header, "bm25.idf_values", df_values.shape)
    idf_values = array_view(buf, header, "bm25.idf_values", dtype="<f8", ndim=1)
    if int(run_ptr[0]) != 0 or int(run_ptr[-1]) != runs.shape[0]:
        raise corrupt(
            src,
            f"array `bm25.run_ptr` runs from {int(run_ptr[0])} to {int(run_ptr[-1])}, "
            f"expected 0 to {runs.shape[0]} (the bytes of `bm25.runs`)",
        )
    doc_len = array_view(buf, header, "bm25.doc_len", dtype=("<u2", "<u4"), ndim=1)
    k1, b, avgdl = _bm25_params(header)
    page_weight = _page_weight(header)
    return BM25Arrays(
        term_hash,
        term_df,
        term_width,
        run_ptr,
        runs,
        tf_values,
        df_values,
        idf_values,
        doc_len,
        k1=k1,
        b=b,
        avgdl=avgdl,
        page_weight=page_weight,
        page_of=chunk_source if page_weight > 0 else None,
    )


def _page_weight(header: Header) -> float:
    """``meta.bm25.pageWeight``: a number in [0, MAX_PAGE_WEIGHT]; 0 when the key is absent.

    Indexes packed before page evidence have no key and rank as they always did.
    """
    meta = header.meta.get("bm25")
    assert isinstance(meta, Mapping)  # _checked_meta required the map
    value = meta.get("pageWeight", 0.0)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    number = float(value) if ok else math.nan
    if not 0.0 <= number <= MAX_PAGE_WEIGHT:
        raise corrupt(
            header.source,
            f"`meta.bm25.pageWeight` is {value!r}, not a number in [0, {MAX_PAGE_WEIGHT:g}]",
        )
    return number


MAX_K1 = 1000.0
"""The largest ``meta.bm25.k1`` a reader accepts (far beyond any useful saturation; 1.2)."""


def _bm25_params(header: Header) -> tuple[float, float, float]:
    """``meta.bm25``'s ``k1`` in (0, 1000], ``b`` in [0, 1] and ``avgdl`` in (1e-12, 1e12].

    The reader computes impacts with them (format 4), so a value that could make one
    infinite or NaN is refused here, once.
    """
    meta = header.meta.get("bm25")
    assert isinstance(meta, Mapping)  # _checked_meta required the map
    got = []
    for key, low, high, low_open in (
        ("k1", 0.0, MAX_K1, True),
        ("b", 0.0, 1.0, False),
        ("avgdl", 1e-12, 1e12, True),
    ):
        value = meta.get(key)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        number = float(value) if ok else math.nan  # type: ignore[arg-type]
        if not (low < number <= high if low_open else low <= number <= high):
            raise corrupt(
                header.source,
                f"`meta.bm25.{key}` is {value!r}, not a number in the range a BM25 index can have",
            )
        got.append(number)
    _check_field_weights(header, meta.get("fieldWeights"))
    return got[0], got[1], got[2]


def _check_field_weights(header: Header, weights: Any) -> None:
    """``meta.bm25.fieldWeights``, when present, maps field names to finite numbers >= 0.

    The runtime does not use it (the weights are folded into the stored frequencies), but the
    exporters copy it into their settings (issue 39: ``7`` passed verify and broke export).
    """
    if weights is None:
        return
    ok = isinstance(weights, Mapping) and all(
        isinstance(k, str)
        and isinstance(v, (int, float))
        and not isinstance(v, bool)
        and math.isfinite(v)
        and v >= 0
        for k, v in weights.items()
    )
    if not ok:
        shown = repr(weights)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise corrupt(
            header.source,
            f"`meta.bm25.fieldWeights` is {shown}, not a map of field names to finite numbers >= 0",
        )


def _url_template_problem(template: str) -> bool:
    # The URL module loads only for an index with a template (a keyword query needs none).
    from scidx.index.urls import parse_url_template

    return parse_url_template(template) is None


def _source_root_problem(root: str) -> str | None:
    from scidx.index.urls import source_root_problem

    return source_root_problem(root)


def _snippet_offsets(buf: Any, header: Header, n: int) -> tuple[Any, ...] | None:
    """``snippet.where``, ``snippet.needle`` and ``meta.snippets``; None without either.

    Both arrays are optional, checked in O(1). The reader (:mod:`scidx.index.offsets`) is
    made when the first snippet needs it. Format 5's ``snippet.row``/``word``/``gap``/``len``/
    ``flat`` are not read (such a file is refused by its major version anyway).
    """
    has_where = "snippet.where" in header.arrays
    has_needles = (
        "snippet.needle.offsets" in header.arrays or "snippet.needle.data" in header.arrays
    )
    if not has_where and not has_needles:
        return None
    where = None
    if has_where:  # one byte per posting: each read is bounds-checked, verify=True counts
        where = array_view(buf, header, "snippet.where", dtype="<u1", ndim=1)
    needles = read_string_table(buf, header, "snippet.needle") if has_needles else None
    return where, needles, header.meta.get("snippets")


def _dictionary_arrays(buf: Any, header: Header) -> tuple[Any, int, int] | None:
    """``dict.words`` with ``meta.dictionary``'s counts (format 10), checked in O(1); or None.

    Also None with a ``meta.dictionary.version`` this reader does not know (no typo
    tolerance or completions then). The words are checked on first use
    (:mod:`scidx.index.dictionary`).
    """
    if "dict.words" not in header.arrays:
        return None
    from scidx.index.dictionary import DICTIONARY_VERSION, MAX_DICTIONARY_BYTES

    meta = header.meta.get("dictionary")
    if not isinstance(meta, Mapping) or meta.get("version") != DICTIONARY_VERSION:
        return None
    data = array_view(buf, header, "dict.words", dtype="<u1", ndim=1)
    bound = min(1032 * data.shape[0] + 64, MAX_DICTIONARY_BYTES)
    size = _count(header, meta, "bytes", bound, data.shape[0])
    return data, _count(header, meta, "words", size, data.shape[0]), size


def _count(header: Header, meta: Mapping[str, Any], key: str, top: int, stored: int) -> int:
    """``meta.dictionary[key]``, an int in ``[0, top]``, or a ``CorruptIndexError``."""
    value = meta.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise corrupt(
            header.source,
            f"`meta.dictionary.{key}` is {value!r}, not what `dict.words` ({stored} bytes) "
            "can hold",
        )
    return value


def _fusion(header: Header) -> dict[str, Any]:
    """The header's hybrid fusion settings (``meta.fusion``), or the defaults when absent."""
    raw = header.meta.get("fusion")
    if raw is None:
        return dict(DEFAULT_FUSION)
    src = header.source
    if not isinstance(raw, Mapping):
        raise corrupt(src, f"meta `fusion` is {type(raw).__name__}, not a map")
    fusion = {**DEFAULT_FUSION, **raw}
    alpha, docs, beta = fusion["alpha"], fusion["prfDocs"], fusion["prfBeta"]
    method = fusion["method"]
    if method not in ("weighted-sum", "rerank"):
        raise corrupt(src, f"meta `fusion.method` is {method!r}, not 'weighted-sum' or 'rerank'")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        raise corrupt(src, f"meta `fusion.alpha` is {alpha!r}, not a number in [0, 1]")
    if isinstance(docs, bool) or not isinstance(docs, int) or not 0 <= docs <= 1000:
        raise corrupt(src, f"meta `fusion.prfDocs` is {docs!r}, not an integer in [0, 1000]")
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0 <= beta <= 1000:
        raise corrupt(src, f"meta `fusion.prfBeta` is {beta!r}, not a number in [0, 1000]")
    floor = fusion.get("vectorFloor")
    if floor is not None and (
        isinstance(floor, bool) or not isinstance(floor, (int, float)) or not -1 <= floor <= 1
    ):
        raise corrupt(
            src, f"meta `fusion.vectorFloor` is {floor!r}, not nil or a number in [-1, 1]"
        )
    out = {
        "method": method,
        "alpha": float(alpha),
        "prfDocs": docs,
        "prfBeta": float(beta),
        "vectorFloor": None if floor is None else float(floor),
    }
    if method == "rerank":
        out["candidates"] = _rerank_candidates(src, fusion.get("candidates"))
    return out


def _rerank_candidates(src: str, value: object) -> int:
    """``meta.fusion.candidates`` of the ``rerank`` method: how many keyword hits it reorders."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
        raise corrupt(src, f"meta `fusion.candidates` is {value!r}, not an integer in [1, 100000]")
    return value


def open_regular(path: str) -> int:
    """Open ``path`` read-only and return the descriptor, refusing anything but a regular file.

    ``O_NONBLOCK`` keeps a FIFO from blocking the open (it would wait for a writer forever);
    the ``fstat`` check then refuses FIFOs, devices, sockets and folders.

    Raises:
        OSError: The file cannot be opened.
        IndexFormatError: It is not a regular file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise IndexFormatError(
            f"{path} is {kind} (a FIFO, device or socket cannot hold an index); "
            "pass the path of a .scidx file"
        )
    return fd


class MappedFile:
    """A read-only mapping of an index file, and the descriptor kept to watch the file.

    The mapping reads pages on demand, so a file overwritten *in place* would lose them under
    the reader (SIGBUS). :meth:`check` compares the file's identity with the one it had when it
    was mapped, so a search can refuse it first.

    Attributes:
        mm: The mapping.
        size: The file's size when it was mapped.
    """

    def __init__(self, mm: mmap.mmap, fd: int, st: os.stat_result) -> None:
        self.mm = mm
        self.size = st.st_size
        self._fd = fd
        self._identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def check(self, source: str) -> None:
        """Raise if the file changed on disk since it was mapped (nothing once unwatched).

        Raises:
            CorruptIndexError: The file's size or modification time changed.
        """
        fd = self._fd
        if fd < 0:
            return
        try:
            st = os.fstat(fd)
        except OSError:
            return  # closed concurrently; the closer handles the rest
        now = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if now != self._identity:
            raise CorruptIndexError(
                f"{source} was changed on disk while it was open (size "
                f"{self._identity[2]} -> {st.st_size} bytes): it was overwritten in place, so "
                "its mapped pages can no longer be trusted. Load it again; deploy new indexes "
                "by renaming over the old file (as pack-docs does), or load with "
                "in_memory=True."
            )

    def unwatch(self) -> None:
        """Close the watched descriptor (idempotent); the mapping stays."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def release(self) -> None:
        """Close the descriptor and the mapping (used when opening fails half-way)."""
        self.unwatch()
        close_quietly(self.mm)

    def __del__(self) -> None:
        # Dropped without unwatch() (an index never closed): release the descriptor; the
        # mapping goes with its last view.
        fd = getattr(self, "_fd", -1)
        if fd >= 0:
            self._fd = -1
            try:
                os.close(fd)
            except OSError:
                pass


def open_file(source: str, *, in_memory: bool = False) -> bytes | MappedFile:
    """The index file at ``source``: mapped read-only, or its bytes when ``in_memory``.

    Raises:
        OSError: The file cannot be opened or read.
        IndexFormatError: Not a regular file, or empty (explained by the header reader).
    """
    fd = open_regular(source)
    try:
        st = os.fstat(fd)
        size = st.st_size
        if in_memory:
            data = _read_all(fd, size)
            os.close(fd)
            fd = -1
            return data
        if size == 0:
            # mmap cannot map an empty file; the header reader explains what is wrong.
            read_header(b"", source=source, file_size=0)
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise
    return MappedFile(mm, fd, st)


def _read_all(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        block = os.read(fd, min(remaining, 1 << 24))
        if not block:
            break
        chunks.append(block)
        remaining -= len(block)
    return b"".join(chunks)


def close_quietly(mm: mmap.mmap) -> None:
    """Close ``mm``, or leave it to the garbage collector while views of it are exported."""
    try:
        mm.close()
    except BufferError:
        pass
