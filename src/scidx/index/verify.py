"""The full content check behind ``load(..., verify=True)`` (docs/FORMAT.md, Part 2).

Opening (:mod:`scidx.index.opening`) checks only what costs constant time. This reads the whole
file: every checksum, every string table, the postings (chunk rows in range and ascending
within a term, frequency codes and idf tables in bounds), the snippet offsets, the stored
vectors (unit length for float32), the ``vectors.key`` rows and every ``source.meta`` row.
Large arrays are checked a block at a time, so verifying adds little to a packer's peak memory.

Runtime module: numpy, msgpack, xxhash and the stdlib only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scidx.index.bm25 import MAX_TF, BM25Arrays, idf_limit, posting_blocks
from scidx.index.columns import IndexedStrings, PathColumn
from scidx.index.corpus import Corpus
from scidx.index.format import Header, StringTable, array_view, verify_checksums
from scidx.index.ids import DerivedIds
from scidx.index.keys import VECTOR_KEY_ARRAY, vector_array_names, vector_key
from scidx.index.opening import corrupt
from scidx.index.safety import parse_meta_json
from scidx.index.texts import TextColumn

__all__ = ["verify_all"]


def verify_all(buf: Any, header: Header, corpus: Corpus) -> None:
    """The full scan behind ``verify=True``: checksums, string tables, postings, vectors."""
    src = header.source
    verify_checksums(buf, header)
    ids = corpus.chunk_id
    assert isinstance(ids, (StringTable, DerivedIds))
    ids.validate_all()
    for column in (corpus.chunk_heading, corpus.chunk_anchor):
        assert isinstance(column, (StringTable, IndexedStrings, PathColumn))
        column.validate_all()
    for table in (
        corpus.source_path,
        corpus.source_title,
        corpus.source_meta,
    ):
        assert isinstance(table, StringTable)
        table.validate_all()
    assert isinstance(corpus.chunk_text, TextColumn)
    corpus.chunk_text.store.validate_all()  # every record inflated, bounded, UTF-8
    n, s = corpus.n, len(corpus.source_path)
    if n and int(corpus.chunk_source.max()) >= s:
        raise corrupt(src, f"array `chunk.source` points past the {s} sources")
    bm = corpus.bm25
    if bm.term_hash.shape[0] > 1 and not bool(np.all(bm.term_hash[1:] > bm.term_hash[:-1])):
        raise corrupt(src, "array `bm25.term_hash` is not sorted and unique")
    _verify_postings(src, bm, n)
    if corpus.hints is not None:
        corpus.hints.verify(src)
    if corpus.dictionary is not None:
        corpus.dictionary.verify()
    assert corpus.store is not None  # always set by build_corpus
    corpus.store.verify()
    if corpus.windows is not None:
        corpus.windows.verify()
    if corpus.store.encoding == "float32":
        # Compact encodings are approximate by design; float32 rows must be unit length.
        _verify_vectors(src, corpus.store.decode_all())
    if VECTOR_KEY_ARRAY in header.arrays:
        _verify_vector_keys(buf, header, corpus)
    if corpus.versions is not None:
        corpus.versions.checked_rows()  # every row names a version (FORMAT.md §2.12)
    if corpus.source_page is not None:
        assert isinstance(corpus.source_page, StringTable)
        corpus.source_page.validate_all()
        corpus.pages(range(s))  # every row a usable page path
    for row in range(s):
        raw = corpus.source_meta[row]
        try:
            value = parse_meta_json(raw) if raw else {}
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise corrupt(src, f"`source.meta` row {row} is not a JSON object")


def max_bm25_weight(n: int, k1: float) -> float:
    """The largest impact the packer can write for ``n`` chunks (FORMAT.md's BM25 formula).

    ``idf`` is largest for a term in one chunk, ``ln(1 + (n - 0.5) / 1.5)``, and the
    term-frequency factor ``tf * (k1 + 1) / (tf + k1 * (...))`` stays below ``k1 + 1``.
    """
    return (k1 + 1.0) * math.log1p(max(n - 0.5, 0.0) / 1.5)


def _verify_postings(src: str, bm: BM25Arrays, n: int) -> None:
    """Runs decode to chunk rows ascending within a term and to possible impacts.

    Every run has its term's length and zero padding bits (so the same postings have one
    encoding); every frequency code is inside ``bm25.tf_values``, whose values are finite and
    positive; every term's document frequency is an entry of ``bm25.df_values`` (ascending,
    unique), whose idf is in ``[0, idf_limit(n)]``: then every impact is finite, non-negative
    and at most :func:`max_bm25_weight` (FORMAT.md §2.4), without computing any.

    Decoded a block of terms at a time (:func:`scidx.index.bm25.posting_blocks`): the postings
    can be most of a file, and a packer verifies the file it has just written.
    """
    t = bm.tf_values.shape[0]
    tf = bm.tf_values
    if t and not (float(tf.min()) > 0.0 and float(tf.max()) <= MAX_TF):
        raise corrupt(src, f"array `bm25.tf_values` holds a frequency outside (0, {MAX_TF:g}]")
    dv, idf = bm.df_values, bm.idf_values
    if dv.shape[0] > 1 and not bool(np.all(dv[1:] > dv[:-1])):
        raise corrupt(src, "array `bm25.df_values` is not ascending and unique")
    limit = idf_limit(n)
    if idf.shape[0] and not (float(idf.min()) >= 0.0 and float(idf.max()) <= limit):
        raise corrupt(
            src, f"array `bm25.idf_values` holds a value outside [0, {limit:.6g}] ({n} chunks)"
        )
    for _, df, rows, _codes in posting_blocks(bm, n, src):
        # Within each term's run the chunk rows strictly increase: every gap after a
        # term's first is at least 1.
        starts = np.cumsum(df) - df
        rising = np.ones(rows.shape[0], dtype=bool)
        rising[1:] = rows[1:] > rows[:-1]
        rising[starts] = True
        if not bool(rising.all()):
            raise corrupt(src, "array `bm25.runs` has chunk rows not ascending within a term")
    _verify_run_padding(src, bm)


def _verify_run_padding(src: str, bm: BM25Arrays) -> None:
    """The unused high bits of each run's last byte are 0 (FORMAT.md §2.4)."""
    ptr = bm.run_ptr.astype(np.int64)
    if not bm.term_df.shape[0]:
        return
    df = bm.df_values[bm.term_df.astype(np.int64)].astype(np.int64)
    used = (df * (bm.term_width[:, 0].astype(np.int64) + bm.term_width[:, 1])) % 8
    last = ptr[1:] - 1
    partial = np.flatnonzero((used > 0) & (last >= ptr[:-1]))
    high = bm.runs[last[partial]].astype(np.int64) >> used[partial]
    if bool(np.any(high)):
        term = int(partial[np.flatnonzero(high)[0]])
        raise corrupt(src, f"array `bm25.runs` has padding bits set after term {term}'s run")


def _verify_vector_keys(buf: Any, header: Header, corpus: Corpus) -> None:
    """Each row's ``vectors.key`` matches its title, heading, text and vector (scidx.index.keys)."""
    src = header.source
    keys = array_view(buf, header, VECTOR_KEY_ARRAY, dtype="<u8", ndim=1)
    if keys.shape != (corpus.n,):
        raise corrupt(src, f"array `{VECTOR_KEY_ARRAY}` has shape {list(keys.shape)}")
    shapes = {name: info.shape for name, info in header.arrays.items()}
    stored = [array_view(buf, header, name) for name in vector_array_names(shapes, corpus.n)]
    for i in range(corpus.n):
        title = corpus.source_title[int(corpus.chunk_source[i])]
        rows = [a[i] for a in stored]
        key = vector_key(title, corpus.chunk_heading[i], corpus.chunk_text[i], rows)
        if int(keys[i]) != key:
            raise corrupt(
                src,
                f"array `{VECTOR_KEY_ARRAY}` row {i} does not match the row's text and vector "
                "(a vector was swapped or altered)",
            )


# Rows whose L2 norm is further than this from 1 are not the unit vectors FORMAT.md requires.
_NORM_TOLERANCE = 1e-3
_VERIFY_BLOCK = 1 << 14


def _verify_vectors(src: str, vectors: np.ndarray) -> None:
    """Every row finite and of unit length (or all zero), checked in bounded blocks."""
    for lo in range(0, vectors.shape[0], _VERIFY_BLOCK):
        block = np.asarray(vectors[lo : lo + _VERIFY_BLOCK], dtype=np.float64)
        if not bool(np.all(np.isfinite(block))):
            raise corrupt(src, "array `vectors` holds NaN or infinite values")
        # float64: a float32 of 3e38 squared would overflow, and the check must not warn.
        peak = np.max(np.abs(block), axis=1, initial=0.0)
        if bool(np.any(peak > 2.0)):
            row = lo + int(np.flatnonzero(peak > 2.0)[0])
            raise corrupt(src, f"array `vectors` row {row} is not L2-normalised")
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        bad = np.flatnonzero((np.abs(norms - 1.0) > _NORM_TOLERANCE) & (norms != 0.0))
        if bad.shape[0]:
            row = lo + int(bad[0])
            raise corrupt(
                src,
                f"array `vectors` row {row} has L2 norm {float(norms[bad[0]]):.6g}; stored "
                "vectors must be unit length (or all zero)",
            )
