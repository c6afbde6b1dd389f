"""BM25: build the ``bm25.*`` arrays at pack time and score queries over them at run time.

Build (:func:`build_arrays`) is deterministic: the same headings and bodies give byte-identical
arrays. Each chunk is indexed as two fields, its heading text (document title + heading path) and
its body; a heading term counts ``heading_weight`` times (BM25F-style field boost folded into the
term frequency and the document length).

Stored per (term, chunk) posting is the final BM25 *impact*, so a query only adds numbers::

    idf(t)    = ln(1 + (N - df + 0.5) / (df + 0.5))            # Lucene's idf, never negative
    impact    = idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
    score(q,d) = sum of impact(t, d) over the distinct terms t of q

``tf`` and ``dl`` are the field-weighted term frequency and length; ``dl`` is the stored
``bm25.doc_len`` (rounded to an integer). Repeated query terms count once: queries are short
questions, and repeating a word there is phrasing, not emphasis (SciFact train agrees, see the
benchmark notes in the package docs).

Terms are identified by ``xxh3_64(term.encode("utf-8"))``; ``bm25.term_hash`` is sorted and
unique, so a query term is found with one ``np.searchsorted``.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import xxhash

from scidx.tokenize import TOKENIZER_VERSION, tokenize

__all__ = [
    "ARRAY_NAMES",
    "DEFAULT_B",
    "DEFAULT_HEADING_WEIGHT",
    "DEFAULT_K1",
    "BM25Arrays",
    "build_arrays",
    "build_arrays_from_hashes",
    "hash_fields",
    "query_terms",
    "score_query",
    "term_hash",
    "top_k",
]

# Chosen on SciFact train (a 27-point grid, k1 0.9/1.2/1.5 x b 0.6/0.75/0.9 x heading weight
# 1/2/3, nDCG@10): heading weight matters most (1: 0.696-0.702, 2: 0.701-0.704, 3: 0.702-0.705);
# k1 and b move it by < 0.003. 1.2 / 0.75 / 2 is at the top within noise (0.7038; bm25s 0.696)
# without leaning on the title as hard as 3 would for docs whose headings are generic.
DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
DEFAULT_HEADING_WEIGHT = 2.0

ARRAY_NAMES = (
    "bm25.term_hash",
    "bm25.term_ptr",
    "bm25.post_doc",
    "bm25.post_weight",
    "bm25.doc_len",
)


def term_hash(term: str) -> int:
    """The 64-bit identifier of ``term`` in ``bm25.term_hash``."""
    return xxhash.xxh3_64_intdigest(term.encode("utf-8"))


def build_arrays(
    headings: Sequence[str],
    bodies: Sequence[str],
    *,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    heading_weight: float = DEFAULT_HEADING_WEIGHT,
) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """Build the ``bm25.*`` arrays and ``meta["bm25"]`` for chunks in row order.

    Args:
        headings: Per chunk, the heading text (title and heading path, one per line).
        bodies: Per chunk, the body text. Same length as ``headings``.
        k1: BM25 term-frequency saturation (> 0).
        b: BM25 length normalisation in [0, 1].
        heading_weight: How many body occurrences one heading occurrence is worth (>= 0).

    Returns:
        ``(arrays, meta)``: arrays named as in ARCHITECTURE.md (``bm25.term_hash`` uint64 [V],
        ``bm25.term_ptr`` uint64 [V+1], ``bm25.post_doc`` uint32 [P], ``bm25.post_weight``
        float32 [P], ``bm25.doc_len`` uint32 [N]) and the ``bm25`` meta dict.

    Raises:
        ValueError: Mismatched lengths or parameters out of range.
    """
    if len(headings) != len(bodies):
        raise ValueError(f"headings has {len(headings)} entries but bodies has {len(bodies)}")
    _check_params(k1, b, heading_weight)
    heading_hashes, body_hashes = hash_fields(headings if heading_weight else None, bodies)
    return build_arrays_from_hashes(
        heading_hashes, body_hashes, k1=k1, b=b, heading_weight=heading_weight
    )


def _check_params(k1: float, b: float, heading_weight: float) -> None:
    # Checked before any tokenising, so a bad parameter fails fast.
    if not (k1 > 0 and math.isfinite(k1)):
        raise ValueError(f"k1 must be a positive number, got {k1!r}")
    if not (0.0 <= b <= 1.0):
        raise ValueError(f"b must be in [0, 1], got {b!r}")
    if not (heading_weight >= 0 and math.isfinite(heading_weight)):
        raise ValueError(f"heading_weight must be >= 0, got {heading_weight!r}")


def hash_fields(
    headings: Sequence[str] | None, bodies: Sequence[str]
) -> tuple[list[npt.NDArray[np.uint64]], list[npt.NDArray[np.uint64]]]:
    """Tokenise each chunk's heading and body and return their term hashes, in text order.

    The packer runs this in worker processes (numpy arrays travel cheaply between them) and
    hands the results to :func:`build_arrays_from_hashes`. ``headings`` None gives empty
    heading fields.
    """
    # Each distinct term is hashed once per call, however often it occurs.
    vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    getid = vocab.__getitem__
    head_ids = [list(map(getid, tokenize(h))) for h in headings] if headings is not None else None
    body_ids = [list(map(getid, tokenize(t))) for t in bodies]
    table = np.fromiter((term_hash(t) for t in vocab), dtype=np.uint64, count=len(vocab))
    empty = np.zeros(0, dtype=np.uint64)

    def lookup(ids: list[int]) -> npt.NDArray[np.uint64]:
        return table[np.asarray(ids, dtype=np.int64)] if ids else empty

    heads = [lookup(ids) for ids in head_ids] if head_ids is not None else [empty] * len(bodies)
    return heads, [lookup(ids) for ids in body_ids]


def build_arrays_from_hashes(
    heading_hashes: Sequence[npt.NDArray[np.uint64]],
    body_hashes: Sequence[npt.NDArray[np.uint64]],
    *,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    heading_weight: float = DEFAULT_HEADING_WEIGHT,
) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """:func:`build_arrays` from per-chunk term hashes (see :func:`hash_fields`).

    The result depends only on the hashes, never on how they were computed or batched.
    """
    n = len(body_hashes)
    if len(heading_hashes) != n:
        raise ValueError(f"heading_hashes has {len(heading_hashes)} entries but bodies has {n}")
    _check_params(k1, b, heading_weight)
    if not heading_weight:
        heading_hashes = [np.zeros(0, dtype=np.uint64)] * n

    # Per chunk: its heading terms, then its body terms (the order only feeds sums below).
    parts = [p for pair in zip(heading_hashes, body_hashes, strict=True) for p in pair]
    lengths = np.fromiter((p.shape[0] for p in parts), dtype=np.int64, count=len(parts))
    hashes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    # np.unique sorts the hashes; a (practically impossible) 64-bit collision merges two terms,
    # which is exactly what the query side would do too.
    term_hashes, tid = np.unique(hashes, return_inverse=True)
    tid = tid.reshape(-1)
    v = int(term_hashes.shape[0])
    did = np.repeat(np.repeat(np.arange(n, dtype=np.int64), 2), lengths)
    field_weight = np.tile(np.array([heading_weight, 1.0], dtype=np.float64), n)
    weight = np.repeat(field_weight, lengths)

    # Term-major keys give CSR order directly: terms by hash, chunks ascending within a term.
    key = tid.astype(np.int64) * max(n, 1) + did
    ukey, inverse = np.unique(key, return_inverse=True)
    tf = np.bincount(inverse.reshape(-1), weights=weight, minlength=ukey.shape[0])
    post_term = ukey // max(n, 1)
    post_doc = (ukey % max(n, 1)).astype(np.uint32)

    dl_float = np.bincount(did, weights=weight, minlength=n) if n else np.zeros(0)
    doc_len = np.rint(dl_float).astype(np.uint32)
    avgdl = float(doc_len.mean()) if n and doc_len.any() else 1.0

    df_count = np.bincount(post_term, minlength=v)
    term_ptr = np.zeros(v + 1, dtype=np.uint64)
    term_ptr[1:] = np.cumsum(df_count, dtype=np.uint64)
    df = df_count.astype(np.float64)
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    dl = doc_len.astype(np.float64)[post_doc]
    norm = k1 * (1.0 - b + b * dl / avgdl)
    impact = idf[post_term] * tf * (k1 + 1.0) / (tf + norm)

    arrays: dict[str, np.ndarray] = {
        "bm25.term_hash": np.ascontiguousarray(term_hashes, dtype=np.uint64),
        "bm25.term_ptr": term_ptr,
        "bm25.post_doc": np.ascontiguousarray(post_doc),
        "bm25.post_weight": impact.astype(np.float32),
        "bm25.doc_len": doc_len,
    }
    meta: dict[str, object] = {
        "k1": float(k1),
        "b": float(b),
        "avgdl": avgdl,
        "tokenizer": TOKENIZER_VERSION,
        "fieldWeights": {"heading": float(heading_weight), "body": 1.0},
        "idf": "lucene",
        "queryTerms": "distinct",
    }
    return arrays, meta


@dataclass(frozen=True)
class BM25Arrays:
    """Views of the ``bm25.*`` arrays of one index (typically over a memory map)."""

    term_hash: npt.NDArray[np.uint64]
    term_ptr: npt.NDArray[np.uint64]
    post_doc: npt.NDArray[np.uint32]
    post_weight: npt.NDArray[np.float32]
    doc_len: npt.NDArray[np.uint32]


def query_terms(query: str) -> list[str]:
    """Return the distinct terms of ``query`` in first-occurrence order."""
    return list(dict.fromkeys(tokenize(query)))


def score_query(
    arrays: BM25Arrays, terms: Sequence[str]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Score every chunk that contains at least one of ``terms``.

    Args:
        arrays: The index's BM25 arrays.
        terms: Query terms (already tokenised; duplicates are scored once each time listed).

    Returns:
        ``(rows, scores)``: the matching chunk rows ascending and their float32 BM25 scores.
        Chunks without any query term are absent (their score is 0).
    """
    if not terms:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    th = arrays.term_hash
    v = th.shape[0]
    qh = np.fromiter((term_hash(t) for t in terms), dtype=np.uint64, count=len(terms))
    pos = np.searchsorted(th, qh)
    # Keep the query terms the index has (one vectorised comparison, not one per term).
    inside = pos < v
    found = pos[inside][th[pos[inside]] == qh[inside]]
    doc_parts: list[np.ndarray] = []
    weight_parts: list[np.ndarray] = []
    ptr = arrays.term_ptr
    p_total = arrays.post_doc.shape[0]
    starts = ptr[found].tolist()
    ends = ptr[found + 1].tolist()
    for start, end in zip(starts, ends, strict=True):
        # Clamp so a corrupt pointer can never index past the postings (verify=True checks it).
        end = min(end, p_total)
        if start >= end:
            continue
        doc_parts.append(arrays.post_doc[start:end])
        weight_parts.append(arrays.post_weight[start:end])
    if not doc_parts:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    if len(doc_parts) == 1:
        return doc_parts[0].astype(np.int64), np.asarray(weight_parts[0], dtype=np.float32)
    all_docs = np.concatenate(doc_parts)
    all_w = np.concatenate(weight_parts)
    n = arrays.doc_len.shape[0]
    # Both paths add the impacts in float64 in posting order, so they give identical sums; the
    # dense one avoids a sort when the postings are not much sparser than the chunks.
    if n <= 16 * all_docs.shape[0] and int(all_docs.max()) < n:
        dense = np.bincount(all_docs, weights=all_w, minlength=n)
        rows = np.flatnonzero(dense)
        return rows.astype(np.int64), dense[rows].astype(np.float32)
    rows, inverse = np.unique(all_docs, return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=all_w, minlength=rows.shape[0])
    return rows.astype(np.int64), sums.astype(np.float32)


def top_k(
    rows: npt.NDArray[np.int64], scores: npt.NDArray[np.float32], k: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Return the ``k`` best ``(rows, scores)``, ordered by score descending then row ascending.

    Ties at the cut are resolved by row too, so the result is fully deterministic.
    """
    m = scores.shape[0]
    if k <= 0 or m == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    if m > k:
        part = np.argpartition(-scores, k - 1)[:k]
        threshold = scores[part].min()
        keep = np.flatnonzero(scores >= threshold)
        rows, scores = rows[keep], scores[keep]
    order = np.lexsort((rows, -scores))[:k]
    return rows[order], scores[order]
