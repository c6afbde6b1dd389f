"""The postings an export writes: each chunk's term frequencies, as the file stores them.

PostgreSQL ranks exactly as the file only if it applies the file's BM25 formula to the same term
frequencies. Format 4 stores each posting's frequency as a code into the table
``bm25.tf_values`` (format 6: bit-packed in ``bm25.runs``), so the export reads them
through the library (:func:`scidx.index.bm25.posting_tfs`) and the impacts the same way
(:func:`scidx.index.bm25.posting_impacts`, the values a query sums), both with the reader's
bounds checks. One more check ties the frequencies to the file: each chunk's sum to its
``bm25.doc_len`` (which the packer rounds from the same sums), so a forged frequency table or
code is refused (exit 4) before anything is written.

The file's keyword arrays are read in one place, :func:`file_postings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError
from scidx.index.bm25 import BM25Arrays, posting_impacts, posting_tfs

if TYPE_CHECKING:
    from scidx.index.index import Index

__all__ = ["FilePostings", "Postings", "file_postings", "rows_postings"]

_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class FilePostings:
    """The file's keyword index, decoded: postings in term order, rows ascending per term.

    Attributes:
        n: Chunks.
        term_hash: Sorted term hashes (``uint64``), one per term.
        df: Document frequency per term.
        idf: The packer's idf per term, from the file (``bm25.idf_values``).
        term: Term number (into ``term_hash``) per posting.
        doc: Chunk row per posting.
        tf: Field-weighted term frequency per posting (``bm25.tf_values`` at its code).
        weight: BM25 impact (float32) per posting, as a query sums it.
        doc_len: Document length per chunk.
        k1, b, avgdl: The BM25 parameters.
    """

    n: int
    term_hash: npt.NDArray[np.uint64]
    df: _I64
    idf: _F64
    term: _I64
    doc: _I64
    tf: _F64
    weight: npt.NDArray[np.float32]
    doc_len: _I64
    k1: float
    b: float
    avgdl: float


def file_postings(index: Index) -> FilePostings:
    """Decode ``index``'s keyword arrays (the one reader of them in the exporter).

    Raises:
        CorruptIndexError: An array is out of bounds (as a query would find it), or a chunk's
            term frequencies do not sum to its ``bm25.doc_len``.
    """
    bm = index._live().corpus.bm25  # noqa: SLF001 - read-only; the format's decoding lives here
    meta = index.meta.get("bm25") or {}
    n = len(index)
    # Impacts first: this checks every term's run (format 6: `bm25.term_df` in bounds, each
    # run its length) before the document frequencies are used.
    weight = posting_impacts(bm, n, index.source)
    doc, tf = posting_tfs(bm, n, index.source)
    df: _I64 = np.asarray(bm.df_values)[np.asarray(bm.term_df).astype(np.int64)].astype(np.int64)
    doc_len = np.asarray(bm.doc_len).astype(np.int64)
    _check_lengths(index, doc, tf, doc_len)
    return FilePostings(
        n=n,
        term_hash=np.asarray(bm.term_hash),
        df=df,
        idf=_file_idf(bm, df),
        term=np.repeat(np.arange(df.shape[0], dtype=np.int64), df),
        doc=doc,
        tf=tf,
        weight=weight,
        doc_len=doc_len,
        k1=float(meta["k1"]),
        b=float(meta["b"]),
        avgdl=float(meta["avgdl"]),
    )


def _check_lengths(index: Index, doc: _I64, tf: _F64, doc_len: _I64) -> None:
    """Each chunk's term frequencies sum to its stored length (which the packer rounded).

    The sums are taken in another order than the packer's, so a heading weight that is not a
    binary fraction (1.1) may move them in the last bits: the bound allows for that, and a
    frequency that is off by any whole occurrence still fails.
    """
    sums = np.bincount(doc, weights=tf, minlength=doc_len.shape[0])
    target = doc_len.astype(np.float64)
    off = np.flatnonzero(np.abs(sums - target) > 0.5 + 1e-9 * np.maximum(target, 1.0))
    if off.shape[0]:
        row = int(off[0])
        raise CorruptIndexError(
            f"{index.source}: chunk {index.chunk(row, snippet_chars=1).id!r} has term "
            f"frequencies (array `bm25.tf_values` at the codes in `bm25.runs`) summing to "
            f"{float(sums[row]):g}, but array `bm25.doc_len` gives it {int(doc_len[row])} "
            f"({off.shape[0]} chunks disagree); the file is corrupt. Rebuild it with "
            "`toolup-rag pack-docs`."
        )


def _file_idf(bm: BM25Arrays, df: _I64) -> _F64:
    """Each term's idf as the file stores it (a term's document frequency is always listed)."""
    dv = np.asarray(bm.df_values)
    if not dv.shape[0]:
        return np.zeros(df.shape[0], dtype=np.float64)
    at = np.minimum(dv.searchsorted(df), dv.shape[0] - 1)
    return np.asarray(np.asarray(bm.idf_values)[at], dtype=np.float64)


@dataclass(frozen=True)
class Postings:
    """Postings of the rows being written, ordered by (term, row).

    Attributes:
        term: Term number (into the file's ``term_hash``).
        row: Chunk row in the file.
        tf: Field-weighted term frequency.
        impact: BM25 impact (float32), the file's.
    """

    term: _I64
    row: _I64
    tf: _F64
    impact: npt.NDArray[np.float32]


def rows_postings(fp: FilePostings, write: _I64) -> Postings:
    """The postings of chunk rows ``write`` (ascending), in the file's (term, row) order."""
    if write.shape[0] == fp.n:  # a full export: every posting, no copies
        return Postings(fp.term, fp.doc, fp.tf, fp.weight)
    in_write = np.zeros(fp.n, dtype=bool)
    in_write[write] = True
    sel = np.flatnonzero(in_write[fp.doc])
    return Postings(fp.term[sel], fp.doc[sel], fp.tf[sel], fp.weight[sel])
