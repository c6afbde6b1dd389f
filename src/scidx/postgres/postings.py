"""The postings an export writes: each chunk's term frequencies, checked against the file.

PostgreSQL ranks exactly as the file only if it applies the file's BM25 formula to the same term
frequencies. The file stores impacts (``idf * tf * (k1 + 1) / (tf + norm)`` as float32), not
frequencies, so the export recovers them:

1. **Inverting the impacts** (all postings at once, numpy): ``tf = w * norm / (idf * (k1 + 1) -
   w)``, rounded to the nearest whole number when the heading weight is whole (then every
   frequency is: body occurrences plus ``headingWeight`` times heading occurrences). A chunk is
   accepted when every recovered frequency gives back its stored impact bit for bit and they sum
   to its stored document length.
2. **Tokenising** the chunks that step 1 could not settle (a heading weight that is not whole,
   frequencies too large to invert in float32, or a corrupt file): their text goes through the
   index's own tokenizer, in the packer's worker processes, and the frequencies must give the
   file's postings and impacts bit for bit, or the index is corrupt (exit 4).

Step 1 settles every chunk of a file the packer wrote with the default settings, in seconds at
100k chunks; tokenising everything took minutes. Either way the stored frequencies reproduce
the file's impacts exactly, so keyword scores in SQL equal the file's.

The file's keyword arrays are read in one place, :func:`file_postings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError
from scidx.index.bm25 import BM25Arrays, bm25_impacts, hash_fields, posting_impacts

if TYPE_CHECKING:
    from scidx.index.index import Index

__all__ = ["FilePostings", "Postings", "file_postings", "impacts_of", "term_frequencies"]

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
        weight: Stored BM25 impact (float32) per posting.
        doc_len: Document length per chunk.
        k1, b, avgdl, heading: The BM25 parameters and the heading field weight.
    """

    n: int
    term_hash: npt.NDArray[np.uint64]
    df: _I64
    idf: _F64
    term: _I64
    doc: _I64
    weight: npt.NDArray[np.float32]
    doc_len: _I64
    k1: float
    b: float
    avgdl: float
    heading: float


def file_postings(index: Index) -> FilePostings:
    """Decode ``index``'s keyword arrays (the one reader of them in the exporter)."""
    bm = index._live().corpus.bm25  # noqa: SLF001 - read-only; the format's decoding lives here
    meta = index.meta.get("bm25") or {}
    ptr = np.asarray(bm.term_ptr).astype(np.int64)
    df = np.diff(ptr)
    v = int(df.shape[0])
    return FilePostings(
        n=len(index),
        term_hash=np.asarray(bm.term_hash),
        df=df,
        idf=_file_idf(bm, df),
        term=np.repeat(np.arange(v, dtype=np.int64), df),
        doc=np.asarray(bm.post_doc).astype(np.int64),
        weight=posting_impacts(bm, len(index), index.source),
        doc_len=np.asarray(bm.doc_len).astype(np.int64),
        k1=float(meta["k1"]),
        b=float(meta["b"]),
        avgdl=float(meta["avgdl"]),
        heading=float((meta.get("fieldWeights") or {}).get("heading", 0.0)),
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
    """

    term: _I64
    row: _I64
    tf: _F64


def impacts_of(fp: FilePostings, term: _I64, row: _I64, tf: _F64) -> npt.NDArray[np.float32]:
    """The float32 BM25 impact of each posting (file term ``term``, file row ``row``, ``tf``).

    The packer's formula, operation for operation (:mod:`scidx.index.bm25`), so equality with
    the file's stored impacts is exact.
    """
    impacts = bm25_impacts(fp.idf[term], tf, fp.doc_len[row], fp.k1, fp.b, fp.avgdl)
    return impacts.astype(np.float32)


def _invert(fp: FilePostings, sel: _I64) -> tuple[_F64, npt.NDArray[np.bool_]]:
    """Frequencies recovered from the impacts of postings ``sel``, and which chunks they settle."""
    term, row = fp.term[sel], fp.doc[sel]
    w = fp.weight[sel].astype(np.float64)
    idf = fp.idf[term]
    norm = fp.k1 * (1.0 - fp.b + fp.b * fp.doc_len[row].astype(np.float64) / fp.avgdl)
    with np.errstate(all="ignore"):
        tf = np.rint(w * norm / (idf * (fp.k1 + 1.0) - w))
    bad_posting = ~np.isfinite(tf) | (tf < 1)
    tf[bad_posting] = 1.0
    bad_posting |= impacts_of(fp, term, row, tf) != fp.weight[sel]
    bad = np.zeros(fp.n, dtype=bool)
    bad[row[bad_posting]] = True
    sums = np.bincount(row, weights=tf, minlength=fp.n)
    bad |= np.rint(sums) != fp.doc_len.astype(np.float64)
    return tf, ~bad


def term_frequencies(
    index: Index,
    fp: FilePostings,
    write: _I64,
    heads: Sequence[str],
    bodies: Sequence[str],
) -> Postings:
    """The postings of rows ``write`` (ascending), checked to reproduce the file's impacts.

    Args:
        index: The index (for messages).
        fp: Its decoded keyword arrays.
        write: The chunk rows to write, ascending.
        heads: Every chunk's BM25 heading field (indexed by row); read only for the rows
            step 1 cannot settle.
        bodies: Every chunk's BM25 body text, likewise.

    Raises:
        CorruptIndexError: The keyword arrays do not match the chunk text.
    """
    in_write = np.zeros(fp.n, dtype=bool)
    in_write[write] = True
    sel = np.flatnonzero(in_write[fp.doc])
    if fp.heading == float(int(fp.heading)):
        tf, settled = _invert(fp, sel)
    else:
        tf, settled = np.zeros(sel.shape[0]), np.zeros(fp.n, dtype=bool)
    keep = settled[fp.doc[sel]]
    rest = write[~settled[write]]
    term, row, tf = fp.term[sel][keep], fp.doc[sel][keep], tf[keep]
    if rest.shape[0]:
        t2, r2, f2 = _tokenised(index, fp, rest, heads, bodies)
        term = np.concatenate([term, t2])
        row = np.concatenate([row, r2])
        tf = np.concatenate([tf, f2])
        order = np.lexsort((row, term))
        term, row, tf = term[order], row[order], tf[order]
    return Postings(term, row, tf)


def _corrupt(index: Index, what: str) -> CorruptIndexError:
    return CorruptIndexError(
        f"{index.source}: {what}; the index's BM25 arrays do not match its chunk text "
        "(a corrupt file, or one packed by a different scidx). Rebuild it with "
        "`toolup-rag pack-docs`."
    )


_HASH_JOB = 2048  # chunks per tokenising job in the worker processes


def _hash_all(
    heads: list[str] | None, bodies: list[str]
) -> tuple[list[npt.NDArray[np.uint64]], list[npt.NDArray[np.uint64]]]:
    """:func:`hash_fields` over all rows, in the packer's worker processes for large exports."""
    from scidx.pack.workers import Pool

    pool = Pool.start(None, sum(len(b) for b in bodies))
    jobs = [
        (heads[i : i + _HASH_JOB] if heads is not None else None, bodies[i : i + _HASH_JOB])
        for i in range(0, len(bodies), _HASH_JOB)
    ]
    hh: list[npt.NDArray[np.uint64]] = []
    bh: list[npt.NDArray[np.uint64]] = []
    try:
        for h, b in pool.map(hash_fields, jobs):
            hh.extend(h)
            bh.extend(b)
    finally:
        pool.close()
    return hh, bh


def _tokenised(
    index: Index, fp: FilePostings, rows: _I64, heads: Sequence[str], bodies: Sequence[str]
) -> tuple[_I64, _I64, _F64]:
    """(term, row, tf) of ``rows`` from their text, checked against the file's postings."""
    hw = fp.heading
    term_hash = fp.term_hash
    v = int(term_hash.shape[0])
    m = int(rows.shape[0])
    rl = rows.tolist()
    hh, bh = _hash_all([heads[i] for i in rl] if hw else None, [bodies[i] for i in rl])
    parts = [p for pair in zip(hh, bh, strict=True) for p in pair]
    lengths = np.fromiter((p.shape[0] for p in parts), dtype=np.int64, count=len(parts))
    hashes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    local = np.repeat(np.repeat(np.arange(m, dtype=np.int64), 2), lengths)
    weight = np.repeat(np.tile(np.array([hw, 1.0]), m), lengths)
    tidx = np.searchsorted(term_hash, hashes).astype(np.int64)
    inside = tidx < v
    ok = np.zeros(hashes.shape[0], dtype=bool)
    ok[inside] = term_hash[tidx[inside]] == hashes[inside]
    ids = index.chunk(int(rows[int(local[np.flatnonzero(~ok)[0]])])).id if not ok.all() else ""
    if ids:
        raise _corrupt(index, f"chunk {ids!r} has a term the keyword index does not list")
    key = local * max(v, 1) + tidx
    ukey, inverse = np.unique(key, return_inverse=True)
    tf = np.asarray(
        np.bincount(inverse.reshape(-1), weights=weight, minlength=ukey.shape[0]), dtype=np.float64
    )
    post_row = rows[ukey // max(v, 1)]
    post_term = ukey % max(v, 1)
    dl = np.rint(np.bincount(local, weights=weight, minlength=m)) if m else np.zeros(0)
    if not np.array_equal(dl, fp.doc_len[rows].astype(np.float64)):
        bad = int(np.flatnonzero(dl != fp.doc_len[rows])[0])
        raise _corrupt(index, f"chunk {index.chunk(int(rows[bad])).id!r} has a different length")
    local_of = np.full(fp.n, -1, dtype=np.int64)
    local_of[rows] = np.arange(m, dtype=np.int64)
    sel = local_of[fp.doc] >= 0
    f_key = local_of[fp.doc[sel]] * max(v, 1) + fp.term[sel]
    order = np.argsort(f_key, kind="stable")
    if not np.array_equal(f_key[order], ukey):
        raise _corrupt(index, "the postings of some chunks differ from their tokenised text")
    if not np.array_equal(impacts_of(fp, post_term, post_row, tf), fp.weight[sel][order]):
        raise _corrupt(index, "the stored BM25 impacts differ from those of the chunk text")
    return post_term, post_row, tf
