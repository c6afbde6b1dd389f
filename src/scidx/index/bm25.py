"""BM25: build the ``bm25.*`` arrays at pack time and score queries over them at run time.

Build (:func:`build_arrays`) is deterministic: the same headings and bodies give byte-identical
arrays. Each chunk is indexed as two fields, its heading text (document title + heading path) and
its body; a heading term counts ``heading_weight`` times (BM25F-style field boost folded into the
term frequency and the document length).

A query adds, per chunk, the BM25 *impact* of each of its distinct terms::

    idf(t)    = ln(1 + (N - df + 0.5) / (df + 0.5))            # Lucene's idf, never negative
    impact    = idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
    score(q,d) = sum of impact(t, d) over the distinct terms t of q

``tf`` and ``dl`` are the field-weighted term frequency and length; ``dl`` is the stored
``bm25.doc_len`` (rounded to an integer). Since format 4 a posting stores not the float32
impact but a code of its ``tf`` (a row of ``bm25.tf_values``, the index's distinct
frequencies), and the packer's float64 ``idf`` is stored once per distinct document frequency
(``bm25.df_values``/``bm25.idf_values``); :func:`term_postings` computes a term's impacts from
them with the packer's own float64 operations, so they are the float32 impacts of format 3,
bit for bit. Format 6 packs each term's chunk-row gaps and codes into bits
(:mod:`scidx.index.postings`, ``bm25.runs``). Storing the idf (rather than
recomputing ``log1p``) keeps that exact on every machine: numpy's SIMD ``log1p`` and the C
library's differ in the last bit for about 8% of arguments.

Repeated query terms count once: queries are short questions, and repeating a word there is
phrasing, not emphasis (SciFact train agrees, see the benchmark notes in the package docs).

Terms are identified by ``xxh3_64(term.encode("utf-8"))``; ``bm25.term_hash`` is sorted and
unique, so a query term is found with one ``np.searchsorted``.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import xxhash

from scidx.errors import CorruptIndexError
from scidx.index.format import uint_dtype
from scidx.index.postings import MAX_WIDTH, decode_runs, encode_runs
from scidx.index.topk import top_k, top_k_sums
from scidx.tokenize import TOKENIZER_VERSION, tokenize, tokenize_as

__all__ = [
    "ARRAY_NAMES",
    "DEFAULT_B",
    "DEFAULT_HEADING_WEIGHT",
    "DEFAULT_PAGE_WEIGHT",
    "MAX_PAGE_WEIGHT",
    "DEFAULT_K1",
    "MAX_TF",
    "BM25Arrays",
    "PostingLookup",
    "Postings",
    "bm25_impacts",
    "build_arrays",
    "build_arrays_from_blocks",
    "build_arrays_from_hashes",
    "TermBlock",
    "hash_fields",
    "hash_terms",
    "code_dtype",
    "csr_postings",
    "encode_postings",
    "idf_limit",
    "keyword_top_k",
    "posting_blocks",
    "posting_layout",
    "lucene_idf",
    "posting_impacts",
    "posting_tfs",
    "query_terms",
    "score_postings",
    "score_query",
    "term_hash",
    "term_postings",
    "top_k",
]

# Chosen on SciFact train (a 27-point grid, k1 0.9/1.2/1.5 x b 0.6/0.75/0.9 x heading weight
# 1/2/3, nDCG@10): heading weight matters most (1: 0.696-0.702, 2: 0.701-0.704, 3: 0.702-0.705);
# k1 and b move it by < 0.003. 1.2 / 0.75 / 2 is at the top within noise (0.7038; bm25s 0.696)
# without leaning on the title as hard as 3 would for docs whose headings are generic.
DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
DEFAULT_HEADING_WEIGHT = 2.0

# Page evidence (``meta.bm25.pageWeight``): each posting's impact adds this share of its term's
# BM25 impact on the whole page (the source file as one document: page tf, page length and an
# idf over pages). A section whose page is about the query outranks a look-alike section on an
# unrelated page. Measured on ../shared/docs-questions, keyword gold@3 of the 160 English
# questions (benchmarks/bench_docs_questions.py): 0 -> 102, 0.1 -> 105, 0.2 -> 107 (5 gained,
# 0 lost), 0.3 -> 107 (6 gained, 1 lost), 0.5 -> 107 (7 gained, 2 lost). Adding the page score
# of every query term (not only the chunk's own) gained as much but needs query-time work that
# the bundle reader and PostgreSQL would have to repeat; baking it into each posting's impact
# keeps every consumer of the impacts (search, export-web, PostgreSQL) identical.
DEFAULT_PAGE_WEIGHT = 0.2
#: The largest ``meta.bm25.pageWeight`` a reader accepts.
MAX_PAGE_WEIGHT = 10.0

ARRAY_NAMES = (
    "bm25.term_hash",
    "bm25.term_df",
    "bm25.term_width",
    "bm25.run_ptr",
    "bm25.runs",
    "bm25.tf_values",
    "bm25.df_values",
    "bm25.idf_values",
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
        ``(arrays, meta)``: arrays named as in FORMAT.md §2.3 (``bm25.term_hash`` uint64 [V],
        ``bm25.term_df`` uint8/16/32 [V] (:func:`code_dtype`), ``bm25.term_width`` uint8
        [V, 2], ``bm25.run_ptr`` uint32 (or uint64) [V+1], ``bm25.runs`` uint8 [R],
        ``bm25.tf_values`` float64 [T], ``bm25.df_values`` uint32 [K], ``bm25.idf_values``
        float64 [K], ``bm25.doc_len`` uint16 (or uint32) [N]) and the ``bm25`` meta.

    Raises:
        ValueError: Mismatched lengths or parameters out of range.
    """
    if len(headings) != len(bodies):
        raise ValueError(f"headings has {len(headings)} entries but bodies has {len(bodies)}")
    _check_params(k1, b, heading_weight)
    heads = headings if heading_weight else None
    blocks = (
        hash_terms(
            heads[i : i + _BUILD_BLOCK] if heads is not None else None,
            bodies[i : i + _BUILD_BLOCK],
        )
        for i in range(0, len(bodies), _BUILD_BLOCK)
    )
    return build_arrays_from_blocks(blocks, len(bodies), k1=k1, b=b, heading_weight=heading_weight)


def _check_params(k1: float, b: float, heading_weight: float) -> None:
    # Checked before any tokenising, so a bad parameter fails fast.
    if not (k1 > 0 and math.isfinite(k1)):
        raise ValueError(f"k1 must be a positive number, got {k1!r}")
    if not (0.0 <= b <= 1.0):
        raise ValueError(f"b must be in [0, 1], got {b!r}")
    if not (heading_weight >= 0 and math.isfinite(heading_weight)):
        raise ValueError(f"heading_weight must be >= 0, got {heading_weight!r}")


@dataclass(frozen=True)
class TermBlock:
    """The term occurrences of a run of consecutive chunks, compactly (what a worker returns).

    Each occurrence is a 4-byte index into the block's table of distinct term hashes, so a
    block is about half the size of the hashes themselves and is a handful of arrays however
    many chunks it holds (cheap to send between processes).

    Attributes:
        hashes: The block's distinct term hashes (``uint64``).
        head_ids: Heading occurrences of every chunk in turn, as indexes into ``hashes``.
        head_lens: Heading occurrences per chunk.
        body_ids: Body occurrences of every chunk in turn.
        body_lens: Body occurrences per chunk.
    """

    hashes: npt.NDArray[np.uint64]
    head_ids: npt.NDArray[np.uint32]
    head_lens: npt.NDArray[np.int64]
    body_ids: npt.NDArray[np.uint32]
    body_lens: npt.NDArray[np.int64]

    @property
    def chunks(self) -> int:
        """How many chunks the block holds."""
        return int(self.body_lens.shape[0])

    @classmethod
    def from_hashes(
        cls,
        heads: Sequence[npt.NDArray[np.uint64]],
        bodies: Sequence[npt.NDArray[np.uint64]],
    ) -> TermBlock:
        """The block of per-chunk heading and body hash arrays (as :func:`hash_fields` gives)."""
        if len(heads) != len(bodies):
            raise ValueError(f"a block has {len(heads)} headings but {len(bodies)} bodies")
        empty = np.zeros(0, dtype=np.uint64)
        head_all = np.concatenate([empty, *heads]).astype(np.uint64, copy=False)
        body_all = np.concatenate([empty, *bodies]).astype(np.uint64, copy=False)
        table, inverse = np.unique(np.concatenate([head_all, body_all]), return_inverse=True)
        ids: npt.NDArray[np.uint32] = inverse.astype(np.uint32)
        return cls(
            table,
            ids[: head_all.shape[0]],
            np.array([h.shape[0] for h in heads], dtype=np.int64),
            ids[head_all.shape[0] :],
            np.array([t.shape[0] for t in bodies], dtype=np.int64),
        )


def hash_terms(
    headings: Sequence[str] | None,
    bodies: Sequence[str],
    languages: Sequence[str] | None = None,
) -> TermBlock:
    """Tokenise each chunk's heading and body into a :class:`TermBlock` (in text order).

    The packer runs this in worker processes and streams the blocks to
    :func:`build_arrays_from_blocks`. ``headings`` None gives empty heading fields.
    ``languages``: each chunk's page language (its stemmer and stop words); None: English.
    """
    if languages is not None and any(lang != "en" for lang in languages):
        return _hash_terms_as(headings, bodies, languages)
    # Each distinct term is hashed once per call, however often it occurs.
    vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    getid = vocab.__getitem__
    heads = [tokenize(h) for h in headings] if headings is not None else [[] for _ in bodies]
    head_ids = np.fromiter(
        (getid(t) for terms in heads for t in terms), dtype=np.uint32, count=sum(map(len, heads))
    )
    head_lens = np.array([len(terms) for terms in heads], dtype=np.int64)
    del heads
    body_lens = np.zeros(len(bodies), dtype=np.int64)
    body_parts: list[npt.NDArray[np.uint32]] = []
    for i, text in enumerate(bodies):
        terms = tokenize(text)
        body_lens[i] = len(terms)
        body_parts.append(np.fromiter(map(getid, terms), dtype=np.uint32, count=len(terms)))
    body_ids = np.concatenate(body_parts) if body_parts else np.zeros(0, dtype=np.uint32)
    table = np.fromiter((term_hash(t) for t in vocab), dtype=np.uint64, count=len(vocab))
    return TermBlock(table, head_ids, head_lens, body_ids, body_lens)


def _hash_terms_as(
    headings: Sequence[str] | None, bodies: Sequence[str], languages: Sequence[str]
) -> TermBlock:
    """:func:`hash_terms` with each chunk tokenised in its own language (issue 42)."""
    vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    getid = vocab.__getitem__
    heads = (
        [tokenize_as(h, lang) for h, lang in zip(headings, languages, strict=True)]
        if headings is not None
        else [[] for _ in bodies]
    )
    head_ids = np.fromiter(
        (getid(t) for terms in heads for t in terms), dtype=np.uint32, count=sum(map(len, heads))
    )
    head_lens = np.array([len(terms) for terms in heads], dtype=np.int64)
    body_lens = np.zeros(len(bodies), dtype=np.int64)
    body_parts: list[npt.NDArray[np.uint32]] = []
    for i, (text, lang) in enumerate(zip(bodies, languages, strict=True)):
        terms = tokenize_as(text, lang)
        body_lens[i] = len(terms)
        body_parts.append(np.fromiter(map(getid, terms), dtype=np.uint32, count=len(terms)))
    body_ids = np.concatenate(body_parts) if body_parts else np.zeros(0, dtype=np.uint32)
    table = np.fromiter((term_hash(t) for t in vocab), dtype=np.uint64, count=len(vocab))
    return TermBlock(table, head_ids, head_lens, body_ids, body_lens)


def hash_fields(
    headings: Sequence[str] | None, bodies: Sequence[str]
) -> tuple[list[npt.NDArray[np.uint64]], list[npt.NDArray[np.uint64]]]:
    """Tokenise each chunk's heading and body and return their term hashes, in text order.

    The per-chunk form of :func:`hash_terms` (for callers that want each chunk's hashes).
    ``headings`` None gives empty heading fields.
    """
    block = hash_terms(headings, bodies)
    heads = np.split(block.hashes[block.head_ids], np.cumsum(block.head_lens)[:-1])
    texts = np.split(block.hashes[block.body_ids], np.cumsum(block.body_lens)[:-1])
    return list(heads) if len(bodies) else [], list(texts) if len(bodies) else []


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
    blocks = (
        TermBlock.from_hashes(
            heading_hashes[i : i + _BUILD_BLOCK], body_hashes[i : i + _BUILD_BLOCK]
        )
        for i in range(0, n, _BUILD_BLOCK)
    )
    return build_arrays_from_blocks(blocks, n, k1=k1, b=b, heading_weight=heading_weight)


def build_arrays_from_blocks(
    blocks: Iterable[TermBlock],
    n: int,
    *,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    heading_weight: float = DEFAULT_HEADING_WEIGHT,
) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """:func:`build_arrays_from_hashes` from :class:`TermBlock` blocks.

    The blocks cover the ``n`` chunks in order, each block a run of consecutive chunks (the
    result of one :func:`hash_terms` call). Each block is reduced to postings and dropped
    before the next is read, so a packer streaming blocks never holds every term occurrence of
    the corpus; the second pass then sorts the postings one hash range at a time. Memory is
    about 28 bytes per posting at the peak, and the bytes never depend on the blocking.

    Raises:
        ValueError: The blocks do not cover exactly ``n`` chunks, or a bad parameter.
    """
    _check_params(k1, b, heading_weight)
    parts = _PostingParts(n, heading_weight)
    for block in blocks:
        parts.add(block)
        del block  # the block's occurrences are not needed once reduced
    if parts.chunks != n:
        raise ValueError(f"the blocks hold {parts.chunks} chunks, not {n}")
    doc_len = np.rint(parts.dl_float).astype(np.uint32)
    avgdl = float(doc_len.mean()) if n and doc_len.any() else 1.0
    arrays = parts.finish(doc_len)
    meta: dict[str, object] = {
        "k1": float(k1),
        "b": float(b),
        "avgdl": avgdl,
        "tokenizer": TOKENIZER_VERSION,
        "fieldWeights": {"heading": float(heading_weight), "body": 1.0},
        "idf": "lucene",
        "queryTerms": "distinct",
        "pageWeight": DEFAULT_PAGE_WEIGHT,
    }
    return arrays, meta


class _PostingParts:
    """Pass 1 of the BM25 build: chunks' term occurrences reduced to sorted postings parts.

    Each part covers consecutive chunks and is sorted by (term hash, chunk); it holds each
    chunk's distinct terms with their weighted term frequency, so only the P postings (not
    every term occurrence) are ever held together. The result does not depend on how the
    chunks were split into parts: each (term, chunk) run is summed on its own, in input order
    (exactly, for field weights that are small binary fractions such as 2.0).
    """

    def __init__(self, n: int, heading_weight: float) -> None:
        self.heading_weight = heading_weight
        self.chunks = 0
        self.dl_float = np.zeros(n, dtype=np.float64)
        self.hashes: list[npt.NDArray[np.uint64]] = []
        self.docs: list[npt.NDArray[np.uint32]] = []
        self.tfs: list[npt.NDArray[np.floating[Any]]] = []

    def add(self, block: TermBlock) -> None:
        """Reduce the next chunks' term occurrences to a part."""
        start, count = self.chunks, block.chunks
        stop = start + count
        if stop > self.dl_float.shape[0]:
            raise ValueError(f"the blocks hold more than {self.dl_float.shape[0]} chunks")
        if block.head_lens.shape[0] != count:
            raise ValueError(f"a block has {block.head_lens.shape[0]} headings but {count} bodies")
        self.chunks = stop
        docs = np.arange(start, stop, dtype=np.int64)
        body_did = np.repeat(docs, block.body_lens)
        if self.heading_weight:
            # Headings before bodies: within a (term, chunk) run the weights are summed in
            # this order, heading occurrences first, as they are in the text order.
            ids = np.concatenate([block.head_ids, block.body_ids])
            did = np.concatenate([np.repeat(docs, block.head_lens), body_did])
            weight = np.concatenate(
                [
                    np.full(block.head_ids.shape[0], self.heading_weight),
                    np.ones(block.body_ids.shape[0]),
                ]
            )
        else:
            ids, did, weight = block.body_ids, body_did, np.ones(block.body_ids.shape[0])
        hashes = block.hashes[ids]
        self.dl_float[start:stop] = np.bincount(did - start, weights=weight, minlength=count)
        if not hashes.shape[0]:
            return
        order = np.lexsort((did, hashes))
        hashes, did, weight = hashes[order], did[order], weight[order]
        first = np.ones(hashes.shape[0], dtype=bool)
        first[1:] = (hashes[1:] != hashes[:-1]) | (did[1:] != did[:-1])
        runs = np.flatnonzero(first)
        self.hashes.append(hashes[runs])
        self.docs.append(did[runs].astype(np.uint32))
        tf = np.add.reduceat(weight, runs)
        # Term frequencies are sums of small field weights (integers for the packer's 2.0 and
        # 1.0): kept as float32 when that is exact, which saves a fifth of the build's memory.
        tf32 = tf.astype(np.float32)
        self.tfs.append(tf32 if np.array_equal(tf32, tf) else tf)

    def finish(self, doc_len: npt.NDArray[np.uint32]) -> dict[str, np.ndarray]:
        """Pass 2: CSR order (terms by hash, chunks ascending within a term), codes and tables.

        Done one range of hash values at a time: a term's postings all fall in one range, and
        the ranges in order are the global order. Only the output arrays and one range's
        copies exist next to the parts. A (practically impossible) 64-bit collision merges two
        terms, which is what the query side does too. No impact is computed here (format 4:
        the reader computes a term's impacts from the stored codes and tables).
        """
        total = sum(h.shape[0] for h in self.hashes)
        n = doc_len.shape[0]
        # Every distinct field-weighted frequency, ascending (SciFact: 71; Kubernetes: 58).
        tf_values = np.unique(
            np.concatenate([np.zeros(0), *(np.unique(t).astype(np.float64) for t in self.tfs)])
        )
        term_parts: list[npt.NDArray[np.uint64]] = []
        df_parts: list[npt.NDArray[np.int64]] = []
        width_parts: list[npt.NDArray[np.uint8]] = []
        length_parts: list[npt.NDArray[np.int64]] = []
        run_parts: list[npt.NDArray[np.uint8]] = []
        bits = min(max((total // _PASS2_POSTINGS).bit_length(), 0), 16)
        bounds = [np.uint64(i) << np.uint64(64 - bits) for i in range(1, 1 << bits)] if bits else []
        cuts = [h.searchsorted(np.array(bounds, dtype=np.uint64)) for h in self.hashes]
        for r in range(1 << bits):
            sel = [
                (p, int(c[r - 1]) if r else 0, int(c[r]) if r < len(bounds) else h.shape[0])
                for p, (h, c) in enumerate(zip(self.hashes, cuts, strict=True))
            ]
            sel = [(p, lo, hi) for p, lo, hi in sel if hi > lo]
            if not sel:
                continue
            ph = np.concatenate([self.hashes[p][lo:hi] for p, lo, hi in sel])
            pd = np.concatenate([self.docs[p][lo:hi] for p, lo, hi in sel])
            tf = np.concatenate([self.tfs[p][lo:hi].astype(np.float64) for p, lo, hi in sel])
            order = np.lexsort((pd, ph))
            ph, pd, tf = ph[order], pd[order], tf[order]
            new_term = np.ones(ph.shape[0], dtype=bool)
            new_term[1:] = ph[1:] != ph[:-1]
            term_start = np.flatnonzero(new_term)
            df = np.diff(np.append(term_start, ph.shape[0]))
            widths, lengths, runs = encode_runs(
                df, pd.astype(np.int64), tf_values.searchsorted(tf).astype(np.int64)
            )
            term_parts.append(ph[term_start])
            df_parts.append(df)
            width_parts.append(widths)
            length_parts.append(lengths)
            run_parts.append(runs)
        self.hashes, self.docs, self.tfs = [], [], []
        df_all = _concat(df_parts, np.int64)
        lengths_all = _concat(length_parts, np.int64)
        run_ptr = np.zeros(df_all.shape[0] + 1, dtype=np.uint64)
        run_ptr[1:] = np.cumsum(lengths_all, dtype=np.uint64)
        df_values = np.unique(df_all).astype(np.uint32)
        return {
            "bm25.term_hash": np.ascontiguousarray(_concat(term_parts, np.uint64)),
            "bm25.term_df": df_values.searchsorted(df_all).astype(code_dtype(df_values.shape[0])),
            "bm25.term_width": (
                np.concatenate(width_parts) if width_parts else np.zeros((0, 2), np.uint8)
            ),
            "bm25.run_ptr": run_ptr.astype(uint_dtype(int(run_ptr[-1]), at_least=4)),
            "bm25.runs": _concat(run_parts, np.uint8),
            "bm25.tf_values": tf_values,
            "bm25.df_values": df_values,
            "bm25.idf_values": lucene_idf(n, df_values),
            "bm25.doc_len": doc_len.astype(uint_dtype(int(doc_len.max(initial=0)), at_least=2)),
        }


def lucene_idf(n: int, df: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """Lucene's idf of each document frequency in ``df`` for ``n`` chunks, in float64.

    Computed only here, by the packer, and stored (``bm25.idf_values``): the exporters and
    the reader take it from the file, so they agree with the packer on any machine.
    """
    d = np.asarray(df, dtype=np.float64)
    return np.asarray(np.log1p((n - d + 0.5) / (d + 0.5)), dtype=np.float64)


def code_dtype(values: int) -> type[np.unsignedinteger[Any]]:
    """The dtype of rows into a table of ``values`` entries (``bm25.term_df``): 1 byte up to 256."""
    if values <= 1 << 8:
        return np.uint8
    return np.uint16 if values <= 1 << 16 else np.uint32


_BUILD_BLOCK = 8192
"""Chunks whose term occurrences are reduced to postings at a time (bounds build memory)."""

_PASS2_POSTINGS = 1 << 19
"""About how many postings pass 2 sorts at a time (it splits the hash range in powers of 2)."""


def _concat(parts: Sequence[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


@dataclass(frozen=True)
class BM25Arrays:
    """Views of the ``bm25.*`` arrays of one index (typically over a memory map).

    With the ``meta.bm25`` parameters its impacts are computed with (checked on open).
    """

    term_hash: npt.NDArray[np.uint64]
    term_df: npt.NDArray[np.unsignedinteger[Any]]
    term_width: npt.NDArray[np.uint8]
    run_ptr: npt.NDArray[np.unsignedinteger[Any]]
    runs: npt.NDArray[np.uint8]
    tf_values: npt.NDArray[np.float64]
    df_values: npt.NDArray[np.uint32]
    idf_values: npt.NDArray[np.float64]
    doc_len: npt.NDArray[np.unsignedinteger[Any]]
    k1: float = DEFAULT_K1
    b: float = DEFAULT_B
    avgdl: float = 1.0
    #: ``meta.bm25.pageWeight`` (0: no page evidence, as in indexes packed before it).
    page_weight: float = 0.0
    #: Each chunk row's page (its ``chunk.source`` row); page evidence needs it.
    page_of: npt.NDArray[np.unsignedinteger[Any]] | None = None
    _pages: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def page_stats(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float] | None:
        """Page rows, page lengths and mean page length, or None without page evidence.

        Computed once per index (O(chunks)). None when the weight is 0, when the chunks'
        pages are not known, or when every page is one chunk (page and section scores would
        then only repeat each other).
        """
        if not self.page_weight > 0 or self.page_of is None:
            return None
        memo = self._pages
        if "stats" not in memo:
            page = np.asarray(self.page_of, dtype=np.int64)
            count = int(page.max()) + 1 if page.shape[0] else 0
            if count == 0 or count >= page.shape[0] or page.shape[0] != self.doc_len.shape[0]:
                memo["stats"] = None
            else:
                lens = np.bincount(page, weights=self.doc_len.astype(np.float64), minlength=count)
                used = lens[lens > 0]
                avg = float(used.mean()) if used.shape[0] else 1.0
                memo["stats"] = (page, lens, avg if avg > 0 else 1.0)
        found: tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], float] | None
        found = memo["stats"]
        return found

    @classmethod
    def of(cls, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> BM25Arrays:
        """The arrays :func:`build_arrays` returns, with its ``meta`` (for in-memory use)."""
        a = arrays
        return cls(
            a["bm25.term_hash"],
            a["bm25.term_df"],
            a["bm25.term_width"],
            a["bm25.run_ptr"],
            a["bm25.runs"],
            a["bm25.tf_values"],
            a["bm25.df_values"],
            a["bm25.idf_values"],
            a["bm25.doc_len"],
            k1=float(meta["k1"]),
            b=float(meta["b"]),
            avgdl=float(meta["avgdl"]),
        )

    @property
    def postings(self) -> int:
        """How many postings the runs hold (each term's document frequency, summed)."""
        if not self.term_df.shape[0] or not self.df_values.shape[0]:
            return 0
        at = np.minimum(self.term_df, self.df_values.shape[0] - 1)
        return int(self.df_values[at].sum(dtype=np.int64))


def query_terms(query: str, languages: Sequence[str] = ()) -> list[str]:
    """Return the distinct terms of ``query`` in first-occurrence order.

    ``languages``: the languages to tokenise it in (issue 42), each one's terms in turn (a
    multilingual index's pages were tokenised each in its own); empty: English.
    """
    if not languages or all(lang == "en" for lang in languages):
        return list(dict.fromkeys(tokenize(query)))
    return list(dict.fromkeys(t for lang in languages for t in tokenize_as(query, lang)))


#: One query term's postings: chunk rows (ascending) and their BM25 impacts (views of the map),
#: and, for its best impacts in descending order (at most :data:`TOP_IMPACTS` of them), the
#: float32 just below each (``bars[k - 1]``: every chunk of a top ``k`` scores above it).
Postings = tuple[npt.NDArray[np.unsignedinteger[Any]], npt.NDArray[np.float32], list[float]]

#: How many of a term's best impacts :class:`PostingLookup` remembers (the largest ``k`` for
#: which :func:`keyword_top_k` can prune with them).
TOP_IMPACTS = 64

_UNSEEN: Any = object()


class PostingLookup:
    """Finds query terms' postings in one index, remembering the terms it has looked up.

    A term costs one hash, one binary search over ``bm25.term_hash`` and one decode of its
    bit-packed run the first time; later queries with the same term (a search box sees a
    small vocabulary) get its decoded rows and impacts from a dictionary. The decoded arrays
    are copies (about 6-8 bytes a posting), so the memo is bounded both in terms
    (:attr:`MAX_TERMS`) and in bytes (:attr:`MAX_BYTES`): a long-running server fed novel
    words over a million-chunk index would otherwise end up holding every posting decoded
    (about 0.7 GB at 90M postings). When either bound would be passed the memo starts over,
    which costs only re-decoding. It is safe to share between threads (a race only repeats a
    lookup or miscounts the bytes of one entry). Each posting run is bounds-checked against
    the chunk count when it is first read, so its rows can index per-chunk arrays safely.

    Args:
        arrays: The index's BM25 arrays.
        n: The number of chunks.
        source: The index's file name, for messages.
    """

    MAX_TERMS = 1 << 16
    MAX_BYTES = 128 << 20
    """Most bytes of decoded rows and impacts the memo keeps (a term's own are always kept)."""

    def __init__(self, arrays: BM25Arrays, n: int, source: str = "<index>") -> None:
        self.arrays = arrays
        self.n = n
        self.source = source
        self._memo: dict[str, Postings | None] = {}
        self._bytes = 0

    def postings(self, terms: Sequence[str]) -> list[Postings]:
        """The postings of those of ``terms`` that the index has, in the order given.

        Raises:
            CorruptIndexError: A posting points past the chunks.
        """
        memo = self._memo
        out = []
        for term in terms:
            found = memo.get(term, _UNSEEN)
            if found is _UNSEEN:
                found = self._read(term)
                size = 0 if found is None else found[0].nbytes + found[1].nbytes
                if len(memo) >= self.MAX_TERMS or self._bytes + size > self.MAX_BYTES:
                    memo.clear()
                    self._bytes = 0
                memo[term] = found
                self._bytes += size
            if found is not None:
                out.append(found)
        return out

    def _read(self, term: str) -> Postings | None:
        found = term_postings(self.arrays, term, self.n, self.source)
        if found is None:
            return None
        docs, weights = found
        m = min(TOP_IMPACTS, weights.shape[0])
        best = np.sort(np.partition(weights, weights.shape[0] - m)[weights.shape[0] - m :])
        # Anything that rounds to float32 b or above is >= the float32 just below b.
        bars = np.nextafter(best[::-1], np.float32(-np.inf)).astype(np.float64)
        return docs, weights, bars.tolist()


def term_postings(
    arrays: BM25Arrays, term: str, n: int, source: str = "<index>"
) -> tuple[npt.NDArray[np.unsignedinteger[Any]], npt.NDArray[np.float32]] | None:
    """The postings of ``term``: its chunk rows (ascending) and their BM25 impacts (float32).

    The one place a query term's stored run is decoded (FORMAT.md §2.3, §2.4): a query's
    keyword score of a chunk is the float32 sum, in float64, of these impacts over its distinct
    terms. ``None`` when the index does not have the term. Rows come back as ``uint16`` for
    indexes of at most 65,536 chunks, else ``uint32`` (what a search keeps per term).

    Raises:
        CorruptIndexError: The term's run is out of bounds or points at a chunk row ``>= n``,
            or a frequency code, a frequency or an idf is out of bounds.
    """
    th = arrays.term_hash
    h = np.uint64(term_hash(term))
    pos = int(th.searchsorted(h))
    if pos >= th.shape[0] or th[pos] != h:
        return None
    k, rows, codes = _term_run(arrays, pos, n, source)
    weights = _impacts(arrays, k, rows, codes, n, source)
    return rows.astype(np.uint16 if n <= 1 << 16 else np.uint32), weights


def _term_run(
    arrays: BM25Arrays, t: int, n: int, source: str
) -> tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Term ``t``'s row of ``bm25.df_values``, chunk rows and frequency codes, bounds-checked.

    Every value that sizes or locates the run is checked before the run is read, and the
    decoded rows and codes before they index anything (rows are sums of at most ``n`` gaps
    below 2**32, so they cannot overflow int64 for any ``n`` a file can hold).
    """
    k = int(arrays.term_df[t])
    kk = arrays.df_values.shape[0]
    if k >= kk:
        raise _corrupt(
            source, f"array `bm25.term_df` points at entry {k}, but `bm25.df_values` has {kk}"
        )
    df = int(arrays.df_values[k])
    if not 1 <= df <= n:
        raise _corrupt(
            source, f"array `bm25.df_values` holds the document frequency {df}, outside [1, {n}]"
        )
    bd, bt = int(arrays.term_width[t, 0]), int(arrays.term_width[t, 1])
    if bd > MAX_WIDTH or bt > MAX_WIDTH:
        raise _corrupt(source, f"array `bm25.term_width` holds a width over {MAX_WIDTH} bits")
    lo, hi = int(arrays.run_ptr[t]), int(arrays.run_ptr[t + 1])
    want = (df * (bd + bt) + 7) // 8
    if not lo <= hi <= arrays.runs.shape[0] or hi - lo != want:
        raise _corrupt(
            source,
            f"array `bm25.run_ptr` gives term {t} the bytes [{lo}, {hi}) of "
            f"{arrays.runs.shape[0]}; its {df} postings take {want}",
        )
    rows, codes = decode_runs(arrays.runs, [lo], np.array([df]), np.array([bd]), np.array([bt]))
    _check_decoded(arrays, rows, codes, n, source)
    return k, rows, codes


def _check_decoded(
    arrays: BM25Arrays,
    rows: npt.NDArray[np.int64],
    codes: npt.NDArray[np.int64],
    n: int,
    source: str,
) -> None:
    """Decoded rows point at chunks and codes at frequencies (before either indexes)."""
    if rows.shape[0] and int(rows.max()) >= n:
        raise _corrupt(
            source, f"array `bm25.runs` points at chunk {int(rows.max())}, but the index has {n}"
        )
    t = arrays.tf_values.shape[0]
    if codes.shape[0] and int(codes.max()) >= t:
        raise _corrupt(
            source,
            f"array `bm25.runs` holds frequency code {int(codes.max())}, but `bm25.tf_values` "
            f"has {t} entries",
        )


def _impacts(
    arrays: BM25Arrays,
    k: int,
    rows: npt.NDArray[np.int64],
    codes: npt.NDArray[np.int64],
    n: int,
    source: str,
) -> npt.NDArray[np.float32]:
    """The float32 impacts of one term's postings (document frequency ``df_values[k]``).

    The packer's format 3 formula, operation for operation in float64 (elementwise IEEE
    arithmetic is exact on every machine), so the result is its stored impacts, bit for bit.
    """
    idf = float(arrays.idf_values[k])
    if not 0.0 <= idf <= idf_limit(n):
        raise _corrupt(
            source, f"array `bm25.idf_values` holds {idf!r}, outside [0, {idf_limit(n):.6g}]"
        )
    tf = arrays.tf_values[codes]
    if not (float(tf.min()) > 0.0 and float(tf.max()) <= MAX_TF):
        raise _corrupt(source, f"array `bm25.tf_values` holds a frequency outside (0, {MAX_TF:g}]")
    dl = arrays.doc_len[rows]
    impacts = bm25_impacts(idf, tf, dl, arrays.k1, arrays.b, arrays.avgdl)
    return _with_page(arrays, rows, tf, impacts).astype(np.float32)


def _with_page(
    arrays: BM25Arrays,
    rows: npt.NDArray[np.int64],
    tf: npt.NDArray[np.float64],
    impacts: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """One term's chunk impacts plus ``pageWeight`` times its impact on each chunk's page.

    The page is the chunk's source file taken as one document: the term's frequency there is
    the sum over the page's chunks, its length the sum of their lengths, and the idf counts
    pages, with the same BM25 formula (:func:`bm25_impacts`) in float64, so every reader of
    the impacts gets the same values bit for bit.
    """
    stats = arrays.page_stats()
    if stats is None or not rows.shape[0]:
        return impacts
    page_of, page_len, avg = stats
    pages = page_of[rows]
    found, at = np.unique(pages, return_inverse=True)
    page_tf = np.bincount(at.reshape(-1), weights=tf, minlength=found.shape[0]).astype(np.float64)
    count = int(page_len.shape[0])
    df = float(found.shape[0])
    idf = math.log1p((count - df + 0.5) / (df + 0.5))
    page = bm25_impacts(idf, page_tf, page_len[found], arrays.k1, arrays.b, avg)
    return np.asarray(impacts + arrays.page_weight * page[at.reshape(-1)], dtype=np.float64)


def bm25_impacts(
    idf: float | npt.NDArray[np.float64],
    tf: npt.NDArray[np.float64],
    dl: npt.NDArray[Any],
    k1: float,
    b: float,
    avgdl: float,
) -> npt.NDArray[np.float64]:
    """The BM25 impact of each posting, in float64: the one home of the formula.

    ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``, operation for operation as
    the packer's format 3 stored it, so its float32 rounding is those impacts bit for bit on
    every machine (elementwise IEEE arithmetic is exact). The query path, the exporters and the
    PostgreSQL check all call it, so they cannot drift apart.
    """
    norm = k1 * (1.0 - b + b * dl.astype(np.float64) / avgdl)
    return np.asarray(idf * tf * (k1 + 1.0) / (tf + norm), dtype=np.float64)


def posting_blocks(
    arrays: BM25Arrays, n: int, source: str = "<index>"
) -> Iterator[tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """Every term's postings, decoded a block of terms at a time, in term order.

    For exporters and ``verify`` (the runtime decodes only a query's terms). Yields
    ``(first_term, df, rows, codes)``: the block's first term, each of its terms' document
    frequency, and their chunk rows and frequency codes, term after term. The whole run layout
    is checked when this is called (:func:`posting_layout`: every ``bm25.term_df`` entry,
    document frequency, width and run length), and each block's rows and codes before it is
    yielded.

    Raises:
        CorruptIndexError: As :func:`term_postings`, for any term.
    """
    return _blocks(arrays, n, source, posting_layout(arrays, n, source))


_Layout = tuple[npt.NDArray[np.int64], ...]


def posting_layout(arrays: BM25Arrays, n: int, source: str = "<index>") -> _Layout:
    """Each term's document frequency, widths and run offsets, checked before anything is sized.

    Returns ``(df, bd, bt, ptr)``. ``int(df.sum())`` is then the number of postings, at most
    ``8 * len(bm25.runs) + terms`` (a term in two or more chunks has a gap of at least 1, so at
    least one bit per posting): an exporter can allocate per posting without trusting a field
    (issue 39: one forged ``bm25.df_values`` entry asked for 624 GiB).

    Raises:
        CorruptIndexError: A ``bm25.term_df`` entry past ``bm25.df_values``, a document
            frequency outside ``[1, n]``, a width over :data:`MAX_WIDTH` or a zero gap width
            for a term in several chunks, or a run whose length is not its postings'.
    """
    v = int(arrays.term_hash.shape[0])
    kk = arrays.df_values.shape[0]
    codes_of = arrays.term_df.astype(np.int64)
    if v and int(codes_of.max()) >= kk:
        raise _corrupt(source, f"array `bm25.term_df` points past the {kk} document frequencies")
    df = arrays.df_values[codes_of].astype(np.int64) if v else np.zeros(0, np.int64)
    if v and not (int(df.min()) >= 1 and int(df.max()) <= n):
        raise _corrupt(
            source, f"array `bm25.df_values` holds a document frequency outside [1, {n}]"
        )
    bd = arrays.term_width[:, 0].astype(np.int64)
    bt = arrays.term_width[:, 1].astype(np.int64)
    if v and max(int(bd.max()), int(bt.max())) > MAX_WIDTH:
        raise _corrupt(source, f"array `bm25.term_width` holds a width over {MAX_WIDTH} bits")
    if v and bool(np.any((df > 1) & (bd == 0))):
        raise _corrupt(
            source,
            "array `bm25.runs` has chunk rows not ascending within a term (`bm25.term_width` "
            "gives a term in several chunks no gap bits)",
        )
    ptr = arrays.run_ptr.astype(np.int64)
    if int(ptr[0]) != 0 or int(ptr[-1]) != arrays.runs.shape[0] or bool(np.any(ptr[1:] < ptr[:-1])):
        raise _corrupt(source, "array `bm25.run_ptr` is not monotonic from 0 to `bm25.runs`")
    if not np.array_equal(np.diff(ptr), (df * (bd + bt) + 7) // 8):
        raise _corrupt(source, "array `bm25.run_ptr` gives a term a run of the wrong length")
    return df, bd, bt, ptr


def _blocks(
    arrays: BM25Arrays,
    n: int,
    source: str,
    layout: _Layout,
) -> Iterator[tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    df, bd, bt, ptr = layout
    v = int(df.shape[0])
    cuts = np.searchsorted(np.cumsum(df), np.arange(_IMPACT_BLOCK, int(df.sum()), _IMPACT_BLOCK))
    bounds = [0, *sorted(set((cuts + 1).tolist()) - {0, v}), v] if v else [0]
    for t0, t1 in itertools.pairwise(bounds):
        lo, hi = int(ptr[t0]), int(ptr[t1])
        rows, codes = decode_runs(
            arrays.runs[lo:hi], ptr[t0:t1] - lo, df[t0:t1], bd[t0:t1], bt[t0:t1]
        )
        _check_decoded(arrays, rows, codes, n, source)
        yield t0, df[t0:t1], rows, codes


def csr_postings(
    arrays: BM25Arrays, n: int, source: str = "<index>"
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every posting as CSR arrays ``(term_ptr, rows, codes)``, for exporters and tools.

    Term ``t``'s postings are ``[term_ptr[t], term_ptr[t + 1])`` (format 5's layout).

    Raises:
        CorruptIndexError: As :func:`posting_blocks`.
    """
    blocks = list(posting_blocks(arrays, n, source))
    empty = np.zeros(0, dtype=np.int64)
    df = np.concatenate([empty, *(b[1] for b in blocks)])
    ptr = np.zeros(df.shape[0] + 1, dtype=np.int64)
    np.cumsum(df, out=ptr[1:])
    rows = np.concatenate([empty, *(b[2] for b in blocks)])
    return ptr, rows, np.concatenate([empty, *(b[3] for b in blocks)])


def encode_postings(
    term_ptr: npt.ArrayLike, rows: npt.ArrayLike, codes: npt.ArrayLike, df_values: npt.ArrayLike
) -> dict[str, np.ndarray]:
    """The run arrays (``bm25.term_df``, ``term_width``, ``run_ptr``, ``runs``) of CSR postings.

    The packer's encoding of :func:`csr_postings`' output, for tools and tests that rewrite
    postings; every term's document frequency must be an entry of ``df_values``.

    Raises:
        ValueError: A term is empty, its document frequency is not listed, or a row or code
            does not fit in a run.
    """
    ptr = np.asarray(term_ptr, dtype=np.int64)
    dv = np.asarray(df_values, dtype=np.int64)
    df = np.diff(ptr)
    at = np.minimum(dv.searchsorted(df), max(dv.shape[0] - 1, 0))
    if df.shape[0] and (not dv.shape[0] or bool(np.any(dv[at] != df))):
        raise ValueError("a term's document frequency is not listed in df_values")
    widths, lengths, runs = encode_runs(df, np.asarray(rows), np.asarray(codes))
    run_ptr = np.zeros(df.shape[0] + 1, dtype=np.uint64)
    run_ptr[1:] = np.cumsum(lengths, dtype=np.uint64)
    return {
        "bm25.term_df": at.astype(code_dtype(dv.shape[0])),
        "bm25.term_width": widths,
        "bm25.run_ptr": run_ptr.astype(uint_dtype(int(run_ptr[-1]), at_least=4)),
        "bm25.runs": runs,
    }


def posting_impacts(arrays: BM25Arrays, n: int, source: str = "<index>") -> npt.NDArray[np.float32]:
    """Every posting's float32 impact, in posting order: :func:`term_postings` for all terms.

    For exporters (PostgreSQL), which copy every posting; the runtime never calls it (it
    decodes the runs of a query's terms only). The same operations as :func:`_impacts`, so
    the values are the ones a query sums.

    Raises:
        CorruptIndexError: As :func:`term_postings`, for any posting.
    """
    layout = posting_layout(arrays, n, source)  # sizes `out` from checked frequencies only
    out = np.empty(int(layout[0].sum()), dtype=np.float32)
    k1, b, at = arrays.k1, arrays.b, 0
    limit = idf_limit(n)
    for t0, df, rows, codes in _blocks(arrays, n, source, layout):
        idf = arrays.idf_values[arrays.term_df[t0 : t0 + df.shape[0]].astype(np.int64)]
        if idf.shape[0] and not (float(idf.min()) >= 0.0 and float(idf.max()) <= limit):
            raise _corrupt(
                source, f"array `bm25.idf_values` holds a value outside [0, {limit:.6g}]"
            )
        tf = arrays.tf_values[codes]
        if tf.shape[0] and not (float(tf.min()) > 0.0 and float(tf.max()) <= MAX_TF):
            raise _corrupt(
                source, f"array `bm25.tf_values` holds a frequency outside (0, {MAX_TF:g}]"
            )
        dl = arrays.doc_len[rows]
        impacts = bm25_impacts(np.repeat(idf, df), tf, dl, k1, b, arrays.avgdl)
        if arrays.page_stats() is not None:  # page evidence is per term: one run at a time
            ends = np.cumsum(df)
            for lo, hi in zip(ends - df, ends, strict=True):
                impacts[lo:hi] = _with_page(arrays, rows[lo:hi], tf[lo:hi], impacts[lo:hi])
        out[at : at + rows.shape[0]] = impacts
        at += rows.shape[0]
    return out


_IMPACT_BLOCK = 1 << 20
"""About how many postings :func:`posting_blocks` decodes at a time."""


def posting_tfs(
    arrays: BM25Arrays, n: int, source: str = "<index>"
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Every posting's chunk row and field-weighted term frequency, in posting order.

    For exporters that store frequencies rather than impacts (PostgreSQL, whose SQL
    recomputes impacts when N or avgdl move); the runtime never calls it. Posting order is
    :func:`posting_impacts`'s: terms as in ``bm25.term_hash``, rows ascending within a term.

    Raises:
        CorruptIndexError: A run is out of bounds (as :func:`posting_blocks` checks), a
            posting points past the chunks, a code past ``bm25.tf_values``, or the table
            holds a frequency outside ``(0, MAX_TF]``.
    """
    values = arrays.tf_values
    t = int(values.shape[0])
    if t and not (float(values.min()) > 0.0 and float(values.max()) <= MAX_TF):
        raise _corrupt(source, f"array `bm25.tf_values` holds a frequency outside (0, {MAX_TF:g}]")
    layout = posting_layout(arrays, n, source)
    total = int(layout[0].sum())
    rows = np.empty(total, dtype=np.int64)
    tfs = np.empty(total, dtype=np.float64)
    at = 0
    for _, _, block_rows, codes in _blocks(arrays, n, source, layout):  # bounds-checked there
        rows[at : at + block_rows.shape[0]] = block_rows
        tfs[at : at + block_rows.shape[0]] = values[codes]
        at += block_rows.shape[0]
    return rows, tfs


def idf_limit(n: int) -> float:
    """The largest idf ``n`` chunks give (a term in one chunk), with float rounding room."""
    return math.log1p(max(n - 0.5, 0.0) / 1.5) * (1.0 + 1e-12) + 1e-12


MAX_TF = float(1 << 53)
"""The largest field-weighted term frequency a reader accepts (far above any chunk's)."""


def _corrupt(source: str, what: str) -> CorruptIndexError:
    return CorruptIndexError(
        f"{source}: {what}. The file is truncated or corrupt; rebuild it with "
        "`toolup-rag pack-docs`."
    )


def accumulate(
    postings: Sequence[Postings], n: int
) -> npt.NDArray[np.float64] | tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Sum the impacts per chunk of two or more posting runs.

    Returns:
        A dense float64 score per chunk (``n`` of them), or ``(rows, float32 scores)`` of the
        chunks present when the postings are much sparser than the chunks. Both add the
        impacts in float64 in posting order, so they give identical sums.
    """
    docs = np.concatenate([p[0] for p in postings])
    weights = np.concatenate([p[1] for p in postings])
    # Every run was bounds-checked when looked up, so bincount's length is exactly n.
    if n <= 16 * docs.shape[0]:
        return np.asarray(np.bincount(docs, weights=weights, minlength=n), dtype=np.float64)
    rows, inverse = np.unique(docs, return_inverse=True)
    sums = np.bincount(inverse.reshape(-1), weights=weights, minlength=rows.shape[0])
    return rows.astype(np.int64), sums.astype(np.float32)


def keyword_top_k(
    postings: Sequence[Postings], n: int, k: int, min_score: float | None = None
) -> tuple[list[int], list[float]]:
    """The best ``k`` chunks for a query's postings, gathering only chunks that can make it.

    The same result as :func:`score_postings` + :func:`top_k` + the ``min_score`` cut (a cut on
    a lower bound commutes with taking the best k). Pruning: impacts are positive, so a chunk's
    score is at least its impact for any one term, and the ``k``-th best impact of any single
    term is a score that ``k`` chunks reach; only chunks scoring about that much are ranked.

    Returns:
        ``(rows, scores)`` as lists, score descending then row ascending; chunks scoring 0 or
        below ``min_score`` are left out.
    """
    if not postings or k <= 0:
        return [], []
    low = max((p[2][k - 1] for p in postings if len(p[2]) >= k), default=0.0)
    if len(postings) == 1:
        docs, weights, _ = postings[0]
        if low > 0:
            keep = np.flatnonzero(weights >= low)
            docs, weights = docs[keep], weights[keep]
        rows, scores = top_k(docs.astype(np.int64), weights, k)
    else:
        summed = accumulate(postings, n)
        if isinstance(summed, tuple):
            rows, scores = top_k(summed[0], summed[1], k)
        else:
            rows, scores = top_k_sums(summed, k, low)
    if min_score is not None and float(min_score) > 0:
        keep_scores = scores >= np.float32(min_score)
    elif low <= 0:  # not pruned: a float32 score may have rounded to 0
        keep_scores = scores > 0
    else:
        return rows.tolist(), scores.tolist()
    if not bool(keep_scores.all()):
        rows, scores = rows[keep_scores], scores[keep_scores]
    return rows.tolist(), scores.tolist()


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
    n = arrays.doc_len.shape[0]
    return score_postings(PostingLookup(arrays, n).postings(terms), n)


def score_postings(
    postings: Sequence[Postings], n: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """:func:`score_query` for postings already looked up."""
    if not postings:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    if len(postings) == 1:
        docs, weights, _ = postings[0]
        return docs.astype(np.int64), np.asarray(weights, dtype=np.float32)
    summed = accumulate(postings, n)
    if isinstance(summed, tuple):
        return summed
    rows = np.flatnonzero(summed)
    return rows.astype(np.int64), summed[rows].astype(np.float32)
