"""Open a ``.scidx`` index: :func:`load`, :func:`load_bytes`, :func:`load_resource`, :class:`Index`.

Opening costs constant time: the header and layout are validated by
:func:`scidx.index.format.read_header`, then every array the runtime needs is checked for
presence, dtype and consistent shape (``N`` chunks from ``chunk.source``, ``S`` sources, ``V``
terms, ``P`` postings, ``D`` dimensions from the provider stamp) using the header alone plus a
handful of single-element reads. No per-chunk or per-term Python objects are made; string tables and
postings are read lazily, each access bounds-checked, so a corrupt file yields an
:class:`~scidx.errors.IndexFormatError`, never an ``IndexError`` or a crash. ``verify=True``
additionally checks every checksum, every string table and every posting (reads the whole file).

Files are memory-mapped read-only (works on read-only file systems). A reader keeps its own
mapping, so an index replaced on disk by a new pack (written to a temp file, then renamed) does
not affect an open :class:`Index`; re-``load`` to see the new one.

Runtime module: numpy, msgpack, xxhash and the stdlib only.
"""

from __future__ import annotations

import mmap
import os
import stat
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np

from scidx.errors import (
    CorruptIndexError,
    IndexFormatError,
    QueryError,
    UnsupportedFormatVersionError,
)
from scidx.fusion import DEFAULT_FUSION
from scidx.index.bm25 import BM25Arrays
from scidx.index.corpus import Corpus
from scidx.index.format import (
    REBUILD_HINT,
    Header,
    StringTable,
    array_view,
    read_header,
    read_string_table,
    verify_checksums,
)
from scidx.index.hits import DEFAULT_SNIPPET_CHARS, Hit
from scidx.index.keys import VECTOR_KEY_ARRAY, vector_array_names, vector_key
from scidx.index.params import SearchParams
from scidx.index.safety import (
    MAX_DIMENSIONS,
    MAX_URL_PLACEHOLDERS,
    MAX_URL_TEMPLATE_CHARS,
    parse_meta_json,
)
from scidx.index.search import Searcher
from scidx.index.vectors import VectorStore, open_vectors
from scidx.tokenize import TOKENIZER_VERSION

if TYPE_CHECKING:
    from scidx.index.retrieval import Match, RetrievalRequest


__all__ = ["Hit", "Index", "load", "load_bytes", "load_resource"]

_CHUNK_TABLES = ("chunk.id", "chunk.text", "chunk.heading", "chunk.anchor")
_SOURCE_TABLES = ("source.path", "source.title", "source.meta")


def _corrupt(source: str, what: str) -> CorruptIndexError:
    return CorruptIndexError(f"{source}: {what}. {REBUILD_HINT}")


def _shape(header: Header, name: str) -> tuple[int, ...]:
    info = header.arrays.get(name)
    if info is None:
        raise _corrupt(header.source, f"the index has no array `{name}`")
    return info.shape


def _expect_shape(header: Header, name: str, shape: tuple[int, ...]) -> None:
    got = _shape(header, name)
    if got != shape:
        raise _corrupt(
            header.source, f"array `{name}` has shape {list(got)}, expected {list(shape)}"
        )


def _meta_map(header: Header, key: str) -> Mapping[str, Any]:
    value = header.meta.get(key)
    if not isinstance(value, Mapping):
        raise _corrupt(header.source, f"the header meta has no `{key}` map")
    return value


def _build_corpus(buf: Any, header: Header, *, rescore: int | None = None) -> Corpus:
    """Validate the runtime arrays against each other in O(1) and wrap them (no data scan)."""
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
        raise _corrupt(src, f"the provider stamp has dimensions {dims!r}, not a positive integer")
    if dims > MAX_DIMENSIONS:
        # Even an empty index would make every vector query allocate `dims` floats.
        raise _corrupt(
            src, f"the provider stamp has {dims} dimensions, over the limit of {MAX_DIMENSIONS}"
        )
    url_template = header.meta.get("urlTemplate")
    if url_template is not None and not isinstance(url_template, str):
        raise _corrupt(src, f"meta `urlTemplate` is {type(url_template).__name__}, not a string")
    if url_template is not None and _url_template_problem(url_template):
        raise _corrupt(
            src,
            "meta `urlTemplate` is not a valid URL template (at most "
            f"{MAX_URL_TEMPLATE_CHARS} characters and {MAX_URL_PLACEHOLDERS} of the "
            "placeholders {source}, {path}, {page} and {anchor}; http(s) or relative)",
        )

    source_root = header.meta.get("sourceRoot")
    if source_root is not None and (
        not isinstance(source_root, str) or not source_root or _source_root_problem(source_root)
    ):
        raise _corrupt(src, f"meta `sourceRoot` {source_root!r} is not a relative folder path")

    chunk_source = array_view(buf, header, "chunk.source", dtype="<u4", ndim=1)
    n = int(chunk_source.shape[0])
    s = _shape(header, "source.path.offsets")
    if len(s) != 1 or s[0] < 1:
        raise _corrupt(src, f"array `source.path.offsets` has shape {list(s)}")
    n_sources = s[0] - 1
    for name in _CHUNK_TABLES:
        _expect_shape(header, f"{name}.offsets", (n + 1,))
    for name in _SOURCE_TABLES:
        _expect_shape(header, f"{name}.offsets", (n_sources + 1,))
    tables = {name: read_string_table(buf, header, name) for name in _CHUNK_TABLES + _SOURCE_TABLES}
    # Clean text (packer 3): optional; without it snippets come from the raw text.
    plain = None
    if "chunk.plain.offsets" in header.arrays:
        _expect_shape(header, "chunk.plain.offsets", (n + 1,))
        plain = read_string_table(buf, header, "chunk.plain")
    if n and not n_sources:
        raise _corrupt(src, f"the index has {n} chunks but no sources")

    for name, dtype, shape in (
        ("chunk.ordinal", "<u4", (n,)),
        ("chunk.span", "<u8", (n, 4)),
        ("bm25.doc_len", "<u4", (n,)),
    ):
        _expect_shape(header, name, shape)
        array_view(buf, header, name, dtype=dtype, ndim=len(shape))
    store = open_vectors(buf, header, n, dims, rescore=rescore)
    # float32 indexes search the mmapped matrix itself; the others go through their store.
    vectors = store.decode_all() if store.encoding == "float32" else store

    term_hash = array_view(buf, header, "bm25.term_hash", dtype="<u8", ndim=1)
    v = int(term_hash.shape[0])
    _expect_shape(header, "bm25.term_ptr", (v + 1,))
    term_ptr = array_view(buf, header, "bm25.term_ptr", dtype="<u8", ndim=1)
    post_doc = array_view(buf, header, "bm25.post_doc", dtype="<u4", ndim=1)
    p = int(post_doc.shape[0])
    _expect_shape(header, "bm25.post_weight", (p,))
    post_weight = array_view(buf, header, "bm25.post_weight", dtype="<f4", ndim=1)
    if int(term_ptr[0]) != 0 or int(term_ptr[-1]) != p:
        raise _corrupt(
            src,
            f"array `bm25.term_ptr` runs from {int(term_ptr[0])} to {int(term_ptr[-1])}, "
            f"expected 0 to {p} (the number of postings)",
        )
    doc_len = array_view(buf, header, "bm25.doc_len", dtype="<u4", ndim=1)
    offsets = _snippet_offsets(buf, header, n)

    return Corpus(
        source=src,
        n=n,
        chunk_id=tables["chunk.id"],
        chunk_text=tables["chunk.text"],
        chunk_heading=tables["chunk.heading"],
        chunk_anchor=tables["chunk.anchor"],
        chunk_source=chunk_source,
        source_path=tables["source.path"],
        source_title=tables["source.title"],
        source_meta=tables["source.meta"],
        vectors=vectors,
        store=store,
        bm25=BM25Arrays(term_hash, term_ptr, post_doc, post_weight, doc_len),
        stamp=dict(stamp),
        url_template=url_template,
        fusion=_fusion(header),
        chunk_plain=plain,
        source_root=source_root,
        snippet_arrays=offsets,
    )


def _url_template_problem(template: str) -> bool:
    # The URL module loads only for an index with a template (a keyword query needs none).
    from scidx.index.urls import parse_url_template

    return parse_url_template(template) is None


def _source_root_problem(root: str) -> str | None:
    from scidx.index.urls import source_root_problem

    return source_root_problem(root)


def _snippet_offsets(buf: Any, header: Header, n: int) -> tuple[Any, Any, Any, Any] | None:
    """The ``snippet.*`` arrays (optional) and ``meta.snippets``, checked in O(1); None if absent.

    The reader (:mod:`scidx.index.offsets`) is made when the first snippet needs it.
    """
    names = ("snippet.ptr", "snippet.occ", "snippet.flags")
    present = [name in header.arrays for name in names]
    if not any(present):
        return None
    src = header.source
    if not all(present):
        missing = ", ".join(f"`{m}`" for m, p in zip(names, present, strict=True) if not p)
        raise _corrupt(src, f"the snippet offsets lack array {missing}")
    _expect_shape(header, "snippet.ptr", (n + 1,))
    _expect_shape(header, "snippet.flags", (n,))
    ptr = array_view(buf, header, "snippet.ptr", dtype="<u8", ndim=1)
    occ = array_view(buf, header, "snippet.occ", dtype="<u8", ndim=1)
    flags = array_view(buf, header, "snippet.flags", dtype="<u1", ndim=1)
    m = int(occ.shape[0])
    if int(ptr[0]) != 0 or int(ptr[-1]) != m:
        raise _corrupt(
            src,
            f"array `snippet.ptr` runs from {int(ptr[0])} to {int(ptr[-1])}, expected 0 to {m} "
            "(the number of snippet offsets)",
        )
    return ptr, occ, flags, header.meta.get("snippets")


def _fusion(header: Header) -> dict[str, Any]:
    """The header's hybrid fusion settings (``meta.fusion``), or the defaults when absent."""
    raw = header.meta.get("fusion")
    if raw is None:
        return dict(DEFAULT_FUSION)
    src = header.source
    if not isinstance(raw, Mapping):
        raise _corrupt(src, f"meta `fusion` is {type(raw).__name__}, not a map")
    fusion = {**DEFAULT_FUSION, **raw}
    alpha, docs, beta = fusion["alpha"], fusion["prfDocs"], fusion["prfBeta"]
    if fusion["method"] != "weighted-sum":
        raise _corrupt(src, f"meta `fusion.method` is {fusion['method']!r}, not 'weighted-sum'")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        raise _corrupt(src, f"meta `fusion.alpha` is {alpha!r}, not a number in [0, 1]")
    if isinstance(docs, bool) or not isinstance(docs, int) or not 0 <= docs <= 1000:
        raise _corrupt(src, f"meta `fusion.prfDocs` is {docs!r}, not an integer in [0, 1000]")
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0 <= beta <= 1000:
        raise _corrupt(src, f"meta `fusion.prfBeta` is {beta!r}, not a number in [0, 1000]")
    return {
        "method": "weighted-sum",
        "alpha": float(alpha),
        "prfDocs": docs,
        "prfBeta": float(beta),
    }


def _verify_all(buf: Any, header: Header, corpus: Corpus) -> None:
    """The full scan behind ``verify=True``: checksums, string tables, postings, vectors."""
    src = header.source
    verify_checksums(buf, header)
    for table in (
        corpus.chunk_id,
        corpus.chunk_text,
        corpus.chunk_heading,
        corpus.chunk_anchor,
        corpus.source_path,
        corpus.source_title,
        corpus.source_meta,
        *((corpus.chunk_plain,) if corpus.chunk_plain is not None else ()),
    ):
        assert isinstance(table, StringTable)
        table.validate_all()
    n, s = corpus.n, len(corpus.source_path)
    if n and int(corpus.chunk_source.max()) >= s:
        raise _corrupt(src, f"array `chunk.source` points past the {s} sources")
    bm = corpus.bm25
    if bm.term_hash.shape[0] > 1 and not bool(np.all(bm.term_hash[1:] > bm.term_hash[:-1])):
        raise _corrupt(src, "array `bm25.term_hash` is not sorted and unique")
    ptr = bm.term_ptr.astype(np.int64)
    if bool(np.any(ptr[1:] < ptr[:-1])):
        raise _corrupt(src, "array `bm25.term_ptr` is not monotonic")
    _verify_postings(src, bm, n)
    if corpus.offsets is not None:
        corpus.offsets.verify(src)
    assert corpus.store is not None  # always set by _build_corpus
    corpus.store.verify()
    if corpus.store.encoding == "float32":
        # Compact encodings are approximate by design; float32 rows must be unit length.
        _verify_vectors(src, corpus.store.decode_all())
    if VECTOR_KEY_ARRAY in header.arrays:
        _verify_vector_keys(buf, header, corpus)
    for row in range(s):
        raw = corpus.source_meta[row]
        try:
            value = parse_meta_json(raw) if raw else {}
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise _corrupt(src, f"`source.meta` row {row} is not a JSON object")


def _verify_postings(src: str, bm: BM25Arrays, n: int) -> None:
    """Postings point at chunks, ascend within a term, and carry finite, non-negative weights.

    Checked a block at a time: the postings can be most of a file, and a packer verifies the
    file it has just written, so a full-size temporary would add to its peak memory.
    """
    ptr = bm.term_ptr.astype(np.int64)
    docs = bm.post_doc  # uint32: compared as stored, never widened (it can be most of a file)
    if docs.shape[0] and int(docs.max()) >= n:
        raise _corrupt(src, f"array `bm25.post_doc` points past the {n} chunks")
    # Within each term's run the chunk rows must strictly increase.
    if docs.shape[0] > 1:
        starts = np.zeros(docs.shape[0], dtype=bool)
        inner = ptr[1:-1]
        starts[inner[(inner > 0) & (inner < docs.shape[0])]] = True
        for lo in range(0, docs.shape[0] - 1, _VERIFY_POSTINGS):
            hi = min(lo + _VERIFY_POSTINGS, docs.shape[0] - 1)
            rising = docs[lo + 1 : hi + 1] > docs[lo:hi]
            if not bool(np.all(rising | starts[lo + 1 : hi + 1])):
                raise _corrupt(src, "array `bm25.post_doc` is not ascending within a term")
    weights = bm.post_weight
    for lo in range(0, weights.shape[0], _VERIFY_POSTINGS):
        block = weights[lo : lo + _VERIFY_POSTINGS]
        if not bool(np.all(np.isfinite(block))):
            raise _corrupt(src, "array `bm25.post_weight` holds NaN or infinite values")
        negative = np.flatnonzero(block < 0)
        if negative.shape[0]:
            raise _corrupt(
                src,
                f"array `bm25.post_weight` holds a negative BM25 weight at posting "
                f"{lo + int(negative[0])} (BM25 impacts are never negative)",
            )


def _verify_vector_keys(buf: Any, header: Header, corpus: Corpus) -> None:
    """Each row's ``vectors.key`` matches its title, heading, text and vector (scidx.index.keys)."""
    src = header.source
    keys = array_view(buf, header, VECTOR_KEY_ARRAY, dtype="<u8", ndim=1)
    if keys.shape != (corpus.n,):
        raise _corrupt(src, f"array `{VECTOR_KEY_ARRAY}` has shape {list(keys.shape)}")
    shapes = {name: info.shape for name, info in header.arrays.items()}
    stored = [array_view(buf, header, name) for name in vector_array_names(shapes, corpus.n)]
    for i in range(corpus.n):
        title = corpus.source_title[int(corpus.chunk_source[i])]
        rows = [a[i] for a in stored]
        key = vector_key(title, corpus.chunk_heading[i], corpus.chunk_text[i], rows)
        if int(keys[i]) != key:
            raise _corrupt(
                src,
                f"array `{VECTOR_KEY_ARRAY}` row {i} does not match the row's text and vector "
                "(a vector was swapped or altered)",
            )


# Rows whose L2 norm is further than this from 1 are not the unit vectors FORMAT.md requires.
_NORM_TOLERANCE = 1e-3
_VERIFY_BLOCK = 1 << 14
_VERIFY_POSTINGS = 1 << 22  # postings checked at a time by verify=True


def _verify_vectors(src: str, vectors: np.ndarray) -> None:
    """Every row finite and of unit length (or all zero), checked in bounded blocks."""
    for lo in range(0, vectors.shape[0], _VERIFY_BLOCK):
        block = np.asarray(vectors[lo : lo + _VERIFY_BLOCK], dtype=np.float64)
        if not bool(np.all(np.isfinite(block))):
            raise _corrupt(src, "array `vectors` holds NaN or infinite values")
        # float64: a float32 of 3e38 squared would overflow, and the check must not warn.
        peak = np.max(np.abs(block), axis=1, initial=0.0)
        if bool(np.any(peak > 2.0)):
            row = lo + int(np.flatnonzero(peak > 2.0)[0])
            raise _corrupt(src, f"array `vectors` row {row} is not L2-normalised")
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        bad = np.flatnonzero((np.abs(norms - 1.0) > _NORM_TOLERANCE) & (norms != 0.0))
        if bad.shape[0]:
            row = lo + int(bad[0])
            raise _corrupt(
                src,
                f"array `vectors` row {row} has L2 norm {float(norms[bad[0]]):.6g}; stored "
                "vectors must be unit length (or all zero)",
            )


class Index:
    """A loaded, read-only ``.scidx`` index. Create it with :func:`load` (or its siblings).

    Safe to share between threads: searches keep no shared mutable state beyond small caches
    that are guarded by a lock. Use it as a context manager, or call :meth:`close`.

    Example:
        >>> with scidx.load("docs.scidx") as idx:  # doctest: +SKIP
        ...     for hit in idx.search("configure CORS", k=3):
        ...         print(hit.score, hit.source, hit.anchor, hit.snippet)
    """

    def __init__(
        self,
        buf: Any,
        header: Header,
        *,
        verify: bool = False,
        mm: mmap.mmap | None = None,
        query_embedder: Any | None = None,
        embedder_options: Mapping[str, Any] | None = None,
        rescore: int | None = None,
    ) -> None:
        self._mm = mm
        self._buf: Any = buf
        self._header = header
        self._lock = allocate_lock()
        self._ids: dict[str, int] | None = None
        self._fd = -1
        self._identity: tuple[int, int, int, int] = (0, 0, 0, 0)
        corpus = _build_corpus(buf, header, rescore=rescore)
        if verify:
            _verify_all(buf, header, corpus)
        self._corpus: Corpus | None = corpus
        self._searcher: Searcher | None = Searcher(
            corpus, query_embedder=query_embedder, embedder_options=embedder_options
        )
        self._n = corpus.n

    # -- metadata -----------------------------------------------------------------------------

    @property
    def header(self) -> Header:
        """The validated file header (format version, generator, build time, arrays)."""
        return self._header

    @property
    def meta(self) -> dict[str, Any]:
        """The header's ``meta`` map (provider stamp, bm25 settings, counts...)."""
        return self._header.meta

    @property
    def stamp(self) -> dict[str, Any]:
        """The embedding provider stamp: ``provider``, ``model``, ``dimensions``, ..."""
        return dict(self._header.meta.get("provider") or {})

    @property
    def source(self) -> str:
        """The file path the index was loaded from, or a description of the buffer."""
        return self._header.source

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._searcher is None

    def __len__(self) -> int:
        """The number of chunks."""
        return self._n

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self._n} chunks"
        return f"<scidx.Index {self._header.source!r} {state}>"

    def _live(self) -> Searcher:
        searcher = self._searcher
        if searcher is None:
            raise QueryError(f"{self._header.source}: the index is closed; load it again")
        if self._fd >= 0:
            self._check_file()
        return searcher

    def _watch_file(self, fd: int, st: os.stat_result) -> None:
        """Keep ``fd`` (the mapped file) to notice in-place overwrites before reading pages."""
        self._fd = fd
        self._identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def _check_file(self) -> None:
        try:
            st = os.fstat(self._fd)
        except OSError:
            return  # closed concurrently; close() handles the rest
        now = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if now != self._identity:
            raise CorruptIndexError(
                f"{self._header.source} was changed on disk while it was open (size "
                f"{self._identity[2]} -> {st.st_size} bytes): it was overwritten in place, so "
                "its mapped pages can no longer be trusted. Load it again; deploy new indexes "
                "by renaming over the old file (as pack-docs does), or load with "
                "in_memory=True."
            )

    @property
    def vectors(self) -> np.ndarray:
        """The ``N × D`` float32 vector matrix.

        A read-only view over the file for a ``float32`` index; for an ``int8`` or ``binary``
        index, a decoded copy (``N * D * 4`` bytes; searches never make one). The stored form is
        :attr:`vector_store`.
        """
        return self.vector_store.decode_all()

    @property
    def vector_store(self) -> VectorStore:
        """The stored vectors in their encoding (``float32``, ``int8`` or ``binary``)."""
        store = self._live().corpus.store
        assert store is not None  # always set by load
        return store

    # -- search --------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: str = "hybrid",
        alpha: float | None = None,
        min_score: float | None = None,
        source: str | None = None,
        heading: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        snippet_chars: int = DEFAULT_SNIPPET_CHARS,
        query_vector: Any | None = None,
        on_stage: Callable[[str], None] | None = None,
        group: str | None = "section",
        mmr: float | None = None,
    ) -> list[Hit]:
        """Search the index.

        Args:
            query: The question or keywords. An empty (or all-whitespace) query returns ``[]``;
                so does a query of only stop-words in ``keyword`` mode.
            k: Maximum number of hits (> 0); fewer come back when fewer chunks match.
            mode: ``"hybrid"`` (default: BM25 and vectors fused), ``"keyword"`` (BM25 only; no
                query embedding is made) or ``"vector"`` (cosine similarity only).
            alpha: Hybrid weight of the vector leg in [0, 1]; default the index's own (tuned
                per provider, ``meta.fusion``; see :mod:`scidx.index.search`).
            min_score: Drop hits scoring below this (the mode's score scale).
            source: Keep chunks whose source path matches this glob (``*``, ``?``, ``[``;
                ``fnmatch`` rules, ``*`` crosses ``/``) or, without glob characters, starts
                with this prefix.
            heading: Keep chunks whose title or heading path contains this text (case-folded).
            metadata: Keep chunks whose front matter has all these ``field: value`` pairs.
            snippet_chars: Maximum snippet length (default 240).
            query_vector: A precomputed query embedding (same model as the index); used
                instead of embedding ``query`` for the vector leg.
            on_stage: Called with ``"embedding"``, ``"retrieval"``, ``"fusion"``, ``"hits"`` as
                each stage starts (for timing).
            group: ``"section"`` (default: the parts of one section collapse into the best
                one, so a section appears once), ``"page"`` (one hit per page, its best
                sections in ``Hit.sections``) or ``None`` (raw chunks).
            mmr: Maximal-marginal-relevance weight in [0, 1] (``None``: off); see
                :func:`scidx.index.grouping.mmr_order`.

        Returns:
            Hits ordered by score descending, then by chunk id (with ``mmr``, in MMR order).

        Raises:
            QueryError: Bad ``k``, ``mode``, ``alpha``, filter or vector (NaN, wrong length),
                or the index is closed.
            QueryEmbeddingError: Vector or hybrid search needs a query embedding this process
                cannot make (the message suggests ``mode="keyword"``).
            IndexFormatError: Corruption met while reading the lazily checked arrays.

        Example:
            >>> idx = scidx.load("docs.scidx")  # doctest: +SKIP
            >>> hits = idx.search("how do I configure CORS", k=5, mode="keyword")  # doctest: +SKIP
            >>> hits[0].to_dict()["headingPath"]  # doctest: +SKIP
            ['Tutorial', 'CORS']
        """
        params = SearchParams.of(
            k=k,
            mode=mode,
            alpha=alpha,
            min_score=min_score,
            source=source,
            heading=heading,
            metadata=metadata,
            snippet_chars=snippet_chars,
            query_vector=query_vector,
            group=group,
            mmr=mmr,
        )
        return self._live().search(query, params, on_stage)

    def search_batch(
        self,
        queries: Sequence[str],
        *,
        k: int = 10,
        mode: str = "hybrid",
        alpha: float | None = None,
        min_score: float | None = None,
        source: str | None = None,
        heading: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        snippet_chars: int = DEFAULT_SNIPPET_CHARS,
        group: str | None = "section",
        mmr: float | None = None,
    ) -> list[list[Hit]]:
        """Search for many queries with the same settings: one hit list per query, in order.

        The same results as calling :meth:`search` for each query; the settings are validated
        once for the whole batch.

        Args:
            queries: The queries (each as for :meth:`search`).
            k: As for :meth:`search`.
            mode: As for :meth:`search`.
            alpha: As for :meth:`search`.
            min_score: As for :meth:`search`.
            source: As for :meth:`search`.
            heading: As for :meth:`search`.
            metadata: As for :meth:`search`.
            snippet_chars: As for :meth:`search`.
            group: As for :meth:`search` (``"section"`` by default, like it; ``None`` for raw
                chunks, as a ranking library returns them).
            mmr: As for :meth:`search`.

        Returns:
            For each query, its hits ordered by score descending, then by chunk id.

        Raises:
            QueryError: As for :meth:`search`, or ``queries`` is a single string.
            QueryEmbeddingError: As for :meth:`search`.

        Example:
            >>> [len(h) for h in idx.search_batch(["cors", "cache"], k=3)]  # doctest: +SKIP
            [3, 3]
        """
        if isinstance(queries, str):
            raise QueryError("search_batch takes a list of queries, not one string; use search")
        params = SearchParams.of(
            k=k,
            mode=mode,
            alpha=alpha,
            min_score=min_score,
            source=source,
            heading=heading,
            metadata=metadata,
            snippet_chars=snippet_chars,
            group=group,
            mmr=mmr,
        )
        return self._live().search_many(queries, params)

    def search_with(
        self,
        query: str,
        params: SearchParams,
        *,
        on_stage: Callable[[str], None] | None = None,
    ) -> list[Hit]:
        """:meth:`search` with a prepared :class:`~scidx.index.params.SearchParams`.

        The parameters were validated when the object was made, so a caller repeating the
        same settings (a retriever, a server) builds them once.

        Raises:
            QueryError: A bad query or query vector, or the index is closed.
            QueryEmbeddingError: As for :meth:`search`.
        """
        return self._live().search(query, params, on_stage)

    def rank(
        self,
        query: str,
        *,
        k: int = 10,
        mode: str = "hybrid",
        alpha: float | None = None,
        min_score: float | None = None,
        source: str | None = None,
        heading: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        query_vector: Any | None = None,
        group: str | None = None,
        mmr: float | None = None,
    ) -> list[tuple[str, float]]:
        """The same ranking as :meth:`search`, as ``(chunk id, score)`` pairs only.

        For callers that need no text (evaluation, re-ranking, large ``k``): it skips building
        :class:`Hit` objects. Arguments, errors and order are those of :meth:`search`, except
        that ``group`` defaults to ``None`` (raw chunks, what evaluation measures).

        Example:
            >>> idx.rank("configure CORS", k=3, mode="keyword")  # doctest: +SKIP
            [('tutorial/cors.md:cors:0', 7.31), ...]
        """
        params = SearchParams.of(
            k=k,
            mode=mode,
            alpha=alpha,
            min_score=min_score,
            source=source,
            heading=heading,
            metadata=metadata,
            query_vector=query_vector,
            group=group,
            mmr=mmr,
        )
        return self._live().rank(query, params)

    def rank_batch(
        self,
        queries: Sequence[str],
        *,
        k: int = 10,
        mode: str = "hybrid",
        alpha: float | None = None,
        min_score: float | None = None,
        source: str | None = None,
        heading: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        group: str | None = None,
        mmr: float | None = None,
    ) -> list[list[tuple[str, float]]]:
        """:meth:`rank` for many queries with the same settings: one list of pairs per query.

        What a ranking library's batch call returns (chunk ids and scores, no :class:`Hit`);
        the settings are validated once for the whole batch.

        Raises:
            QueryError: As for :meth:`rank`, or ``queries`` is a single string.
            QueryEmbeddingError: As for :meth:`rank`.

        Example:
            >>> idx.rank_batch(["cors", "cache"], k=1, mode="keyword")  # doctest: +SKIP
            [[('tutorial/cors.md:cors:0', 7.31)], [('guide/cache.md:cache:0', 5.02)]]
        """
        if isinstance(queries, str):
            raise QueryError("rank_batch takes a list of queries, not one string; use rank")
        params = SearchParams.of(
            k=k,
            mode=mode,
            alpha=alpha,
            min_score=min_score,
            source=source,
            heading=heading,
            metadata=metadata,
            group=group,
            mmr=mmr,
        )
        return self._live().rank_many(queries, params)

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        """Answer a :class:`~scidx.index.retrieval.RetrievalRequest`: ``Index`` is a ``Retriever``.

        The same as ``scidx.index.retrieval.IndexRetriever(self).retrieve(request)``; use that
        adapter to set a retriever name, hybrid weight or snippet length.
        """
        # Imported here: scidx.index.retrieval adapts an Index (it imports this module).
        from scidx.index.retrieval import IndexRetriever

        return IndexRetriever(self).retrieve(request)

    def search_vector(
        self,
        vector: Any,
        k: int = 10,
        *,
        query: str | None = None,
        min_score: float | None = None,
        source: str | None = None,
        heading: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        snippet_chars: int = DEFAULT_SNIPPET_CHARS,
        group: str | None = None,
    ) -> list[Hit]:
        """Rank chunks by cosine similarity to a caller-embedded query ``vector``.

        Args:
            vector: ``D`` finite numbers (normalised here), from the index's embedding model.
            k: Maximum number of hits (> 0).
            query: Optional query text, used only to pick snippets.
            min_score: Drop hits with a cosine below this.
            source: As for :meth:`search`.
            heading: As for :meth:`search`.
            metadata: As for :meth:`search`.
            snippet_chars: As for :meth:`search`.
            group: As for :meth:`search`, but raw chunks (``None``) by default.

        Returns:
            Hits ordered by cosine descending, then by chunk id.

        Raises:
            QueryError: Bad ``k``, or a vector with NaN/inf, zero norm or the wrong length.
        """
        if vector is None:
            raise QueryError("search_vector needs a vector")
        params = SearchParams.of(
            k=k,
            mode="vector",
            min_score=min_score,
            source=source,
            heading=heading,
            metadata=metadata,
            snippet_chars=snippet_chars,
            query_vector=vector,
            group=group,
        )
        return self._live().search(query, params)

    def embed_query(self, query: str) -> np.ndarray:
        """Embed ``query`` with the index's provider (as vector search would).

        Raises:
            QueryEmbeddingError: As for :meth:`search`.
        """
        return self._live().encoder.embed(query)

    # -- chunk access ---------------------------------------------------------------------------

    def chunk(self, i: int, *, snippet_chars: int = DEFAULT_SNIPPET_CHARS) -> Hit:
        """Return chunk row ``i`` as a :class:`Hit` with score 0.0 and a leading snippet.

        Raises:
            IndexError: ``i`` is out of range (negative indices count from the end).
        """
        searcher = self._live()
        i = int(i)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(f"chunk index {i} is out of range for {self._n} chunks")
        return searcher.renderer.hit(i, 0.0, [], snippet_chars)

    def get(self, chunk_id: str) -> Hit | None:
        """Return the chunk with id ``chunk_id``, or ``None``.

        The first call builds an id → row map (one pass over ``chunk.id``); later calls are
        dictionary lookups.
        """
        searcher = self._live()
        with self._lock:
            if self._ids is None:
                table = searcher.corpus.chunk_id
                self._ids = {table[i]: i for i in range(len(table))}
            row = self._ids.get(chunk_id)
        return None if row is None else self.chunk(row)

    def source_metadata(self) -> dict[str, dict[str, Any]]:
        """Each page's front matter by source path (what the ``metadata=`` filter compares).

        Reads the whole ``source.meta`` table, one small JSON map per page; callers that ask
        often should keep the result.

        Raises:
            CorruptIndexError: A row is not a JSON map.
        """
        corpus = self._live().corpus
        out: dict[str, dict[str, Any]] = {}
        for i in range(len(corpus.source_path)):
            raw = corpus.source_meta[i]
            try:
                value = parse_meta_json(raw) if raw else {}
            except ValueError:
                raise _corrupt(corpus.source, f"`source.meta` row {i} is not JSON") from None
            out[corpus.source_path[i]] = value if isinstance(value, dict) else {}
        return out

    # -- lifetime -------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the memory map. Searching a closed index raises :class:`QueryError`.

        Idempotent. A search still running in another thread finishes safely: the mapping is
        only unmapped once no array view over it remains.
        """
        with self._lock:
            self._searcher = None
            self._corpus = None
            self._ids = None
            self._buf = None
            mm, self._mm = self._mm, None
            fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)
        if mm is not None:
            try:
                mm.close()
            except BufferError:
                # Views are still exported (a running search, or a caller holding `vectors`);
                # the mapping is released when the last of them is garbage-collected.
                pass

    def __del__(self) -> None:
        # An index dropped without close(): release the watched descriptor (the mapping goes
        # with its last view).
        fd = getattr(self, "_fd", -1)
        if fd >= 0:
            self._fd = -1
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> Index:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def load(
    path: str | os.PathLike[str],
    *,
    verify: bool = False,
    in_memory: bool = False,
    query_embedder: Any | None = None,
    embedder_options: Mapping[str, Any] | None = None,
    rescore: int | None = None,
    model_dir: str | os.PathLike[str] | None = None,
) -> Index:
    """Memory-map (or read) and validate the index at ``path``.

    A memory-mapped index reads the file's pages on demand, so the file must not be overwritten
    *in place* while it is open (``cp new.scidx docs.scidx`` truncates the mapped inode; the
    next access to a lost page kills the process with SIGBUS). ``pack-docs`` never does that:
    it writes a temporary file and renames it over the old one, which leaves the open mapping
    intact. An open index notices an in-place change where it can (the file's size or
    modification time differ from when it was loaded, checked with ``fstat`` before each
    search) and raises :class:`~scidx.errors.CorruptIndexError` instead of reading it. Hosts
    whose deploy tools overwrite files in place should pass ``in_memory=True``.

    Args:
        path: The ``.scidx`` file.
        verify: Also check every checksum, string table, posting and vector norm (reads the
            whole file).
        in_memory: Read the whole file into memory instead of mapping it: the index then never
            depends on the file again (no SIGBUS whatever happens to it), at the cost of
            holding the file in RAM.
        query_embedder: An embedder for vector/hybrid queries; must match the index's stamp.
            Default: the index's own provider (``hashing`` in process, others imported lazily).
        embedder_options: Keyword arguments for a lazily created provider's query embedder.
        rescore: ``binary`` indexes only: rows rescored with the int8 codes per vector query
            (at least ``k``; default :data:`scidx.index.vectors.DEFAULT_RESCORE`). Larger is
            closer to exact and slower.
        model_dir: Where a ``local``-provider index's model is (its folder, or a folder holding
            it by name); default ``$SCIDX_MODEL_DIR``, then the Hugging Face cache. Nothing is
            loaded until the first vector or hybrid query.

    Returns:
        The open :class:`Index`.

    Raises:
        OSError: The file cannot be opened.
        IndexFormatError: ``path`` is not a regular file (a FIFO, a device, a folder).
        BadMagicError: Not a ``.scidx`` file.
        UnsupportedFormatVersionError: Written by an incompatible format or tokenizer version.
        CorruptIndexError: Truncated or inconsistent (``ChecksumMismatchError`` with ``verify``).
        QueryEmbeddingError: ``query_embedder`` does not match the index's stamp.

    Example:
        >>> import scidx
        >>> idx = scidx.load("docs.scidx")  # doctest: +SKIP
        >>> [h.id for h in idx.search("install", k=2, mode="keyword")]  # doctest: +SKIP
        ['install.md:install:0', 'install.md:linux:0']
    """
    source = str(os.fspath(path))
    if model_dir is not None:
        embedder_options = {**(embedder_options or {}), "model_dir": os.fspath(model_dir)}
    fd = open_regular(source)
    try:
        st = os.fstat(fd)
        size = st.st_size
        if in_memory:
            data = _read_all(fd, size)
            os.close(fd)
            fd = -1
            return load_bytes(
                data,
                verify=verify,
                source=source,
                query_embedder=query_embedder,
                embedder_options=embedder_options,
                rescore=rescore,
            )
        if size == 0:
            # mmap cannot map an empty file; the header reader explains what is wrong.
            read_header(b"", source=source, file_size=0)
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise
    try:
        header = read_header(mm, source=source, file_size=size)
        index = Index(
            mm,
            header,
            verify=verify,
            mm=mm,
            query_embedder=query_embedder,
            embedder_options=embedder_options,
            rescore=rescore,
        )
    except BaseException:
        os.close(fd)
        _close_quietly(mm)
        raise
    index._watch_file(fd, st)
    return index


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


def _close_quietly(mm: mmap.mmap) -> None:
    try:
        mm.close()
    except BufferError:
        pass


def load_bytes(
    data: bytes | bytearray | memoryview,
    *,
    verify: bool = False,
    source: str = "<buffer>",
    query_embedder: Any | None = None,
    embedder_options: Mapping[str, Any] | None = None,
    rescore: int | None = None,
) -> Index:
    """Open an index held in memory (no copy; do not modify a mutable buffer afterwards).

    Args:
        data: The whole ``.scidx`` file contents.
        verify: As for :func:`load`.
        source: A name for error messages.
        query_embedder: As for :func:`load`.
        embedder_options: As for :func:`load`.
        rescore: As for :func:`load`.

    Returns:
        The open :class:`Index`.

    Raises:
        IndexFormatError: As for :func:`load`.
    """
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    view = view.toreadonly()
    header = read_header(view, source=source)
    return Index(
        view,
        header,
        verify=verify,
        query_embedder=query_embedder,
        embedder_options=embedder_options,
        rescore=rescore,
    )


def load_resource(
    package: str,
    resource: str,
    *,
    verify: bool = False,
    query_embedder: Any | None = None,
    embedder_options: Mapping[str, Any] | None = None,
    rescore: int | None = None,
) -> Index:
    """Open an index shipped as package data (``importlib.resources``).

    A resource that is a real file is memory-mapped; one inside a zip import or another loader is
    read into memory.

    Args:
        package: The importable package holding the resource, e.g. ``"mydocs"``.
        resource: The resource path inside it, e.g. ``"data/docs.scidx"``.
        verify: As for :func:`load`.
        query_embedder: As for :func:`load`.
        embedder_options: As for :func:`load`.
        rescore: As for :func:`load`.

    Returns:
        The open :class:`Index`.

    Raises:
        ModuleNotFoundError: ``package`` cannot be imported.
        FileNotFoundError: The resource does not exist.
        IndexFormatError: As for :func:`load`.
    """
    # Imported here: a process that loads from a path never pays for importlib.resources.
    from importlib import resources
    from pathlib import Path

    ref = resources.files(package)
    for part in resource.replace("\\", "/").split("/"):
        if part:
            ref = ref.joinpath(part)
    if isinstance(ref, Path) and ref.is_file():
        return load(
            ref,
            verify=verify,
            query_embedder=query_embedder,
            embedder_options=embedder_options,
            rescore=rescore,
        )
    if not ref.is_file():
        raise FileNotFoundError(f"package {package!r} has no resource {resource!r}")
    return load_bytes(
        ref.read_bytes(),
        verify=verify,
        source=f"{package}:{resource}",
        query_embedder=query_embedder,
        embedder_options=embedder_options,
        rescore=rescore,
    )
