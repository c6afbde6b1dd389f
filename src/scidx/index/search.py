"""Query-time search over an index's arrays: keyword, vector and hybrid top-k, filters, snippets.

Contract:

* **keyword** — BM25 (see :mod:`scidx.index.bm25`); makes no query embedding at all. A query with no
  index terms (empty, or only stop-words) returns ``[]``.
* **vector** — exact cosine similarity: the query vector is L2-normalised and scored against every
  stored (normalised) row with one ``vectors @ q`` over the memory map.
* **hybrid** (default) — both legs, fused by a *max-normalised weighted sum*::

      fused(d) = (1 - alpha) * bm25(d) / max_bm25  +  alpha * max(cos(d, q'), 0) / max_cos

  computed for every chunk (dense, O(N) next to the O(N × D) vector product), where the maxima
  are the best score of each leg for this query, so each leg contributes in [0, 1]. Chunks with
  a fused score of 0 (no query term and no positive cosine) are not returned. The vector leg
  uses the query vector expanded with the best keyword hits (Rocchio pseudo-relevance
  feedback)::

      q' = normalise(q + PRF_BETA * sum_i(bm25_i * v_i) / sum_i(bm25_i))   # top PRF_DOCS hits

  Choices measured on SciFact train (benchmarks/bench_scifact.py, nDCG@10; keyword 0.704,
  hashing vector 0.50): reciprocal-rank fusion (k=60) scored 0.60–0.65 because it gives the
  weak lexical-hash vector leg the same say as BM25; min-max or max-normalised sums without
  feedback stayed at or below keyword (0.700–0.704 for alpha 0.1–0.2, lower above); with
  feedback the sum gives 0.705–0.708 across alpha 0.2–0.4 and 2–5 feedback chunks, and the
  defaults (alpha 0.3, 3 chunks, beta 2) give 0.7075. ``alpha`` defaults to
  :data:`DEFAULT_ALPHA`.
* Ordering is deterministic: score descending, then chunk row ascending. Rows are stored in
  chunk-id order (code points), so equal scores are listed by chunk id; ties at the k-th place
  are resolved the same way.
* Filters (``source`` glob or path prefix, ``heading`` substring, front-matter ``metadata``
  equality) restrict the candidates *before* the top-k cut, so ``k`` filtered hits come back
  when that many exist. ``min_score`` drops hits scoring below it.
* Query embeddings follow the index's provider stamp: ``hashing`` indexes embed queries in
  process with :class:`~scidx.embed.hashing.HashingEmbedder`; other providers are imported lazily
  (``scidx.embed.<provider>.query_embedder_from_stamp``), or the caller passes ``query_vector``.
  An embedder whose stamp differs from the index's is refused (:class:`QueryEmbeddingError`).

Runtime module: numpy, msgpack, xxhash and the stdlib only.
"""

from __future__ import annotations

import fnmatch
import json
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from scidx.embed.hashing import MODEL_ID as HASHING_MODEL_ID
from scidx.embed.hashing import PROVIDER_ID as HASHING_PROVIDER_ID
from scidx.embed.hashing import HashingEmbedder
from scidx.embed.registry import resolve_provider
from scidx.errors import CorruptIndexError, EmbeddingError, QueryEmbeddingError, QueryError
from scidx.index.bm25 import BM25Arrays, query_terms, score_query, top_k
from scidx.index.hits import DEFAULT_SNIPPET_CHARS, Hit
from scidx.index.urls import render_url

__all__ = [
    "DEFAULT_ALPHA",
    "MODES",
    "PRF_BETA",
    "PRF_DOCS",
    "Corpus",
    "Searcher",
    "top_k_dense",
    "stamps_match",
]

MODES = ("hybrid", "keyword", "vector")
DEFAULT_ALPHA = 0.3
PRF_DOCS = 3
PRF_BETA = 2.0

_Rows = npt.NDArray[np.int64]
_Scores = npt.NDArray[np.float32]


class StringLookup(Protocol):
    """What the searcher needs from a string table: length and lazy item access."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int) -> str: ...


@dataclass(frozen=True)
class Corpus:
    """Lazy views of one index's arrays, as the searcher uses them (built by ``scidx.load``)."""

    source: str
    n: int
    chunk_id: StringLookup
    chunk_text: StringLookup
    chunk_heading: StringLookup
    chunk_anchor: StringLookup
    chunk_source: npt.NDArray[np.uint32]
    source_path: StringLookup
    source_title: StringLookup
    source_meta: StringLookup
    vectors: npt.NDArray[np.float32]
    bm25: BM25Arrays
    stamp: Mapping[str, Any]
    url_template: str | None = None


def stamps_match(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two provider stamps describe the same embedding space."""

    def key(s: Mapping[str, Any]) -> tuple[object, ...]:
        return (
            s.get("provider"),
            s.get("model"),
            s.get("dimensions"),
            s.get("normalization", "l2"),
        )

    return key(a) == key(b)


def _describe(stamp: Mapping[str, Any]) -> str:
    return f"{stamp.get('provider')}/{stamp.get('model')} ({stamp.get('dimensions')} dims)"


# ---------------------------------------------------------------------------------------------
# The searcher
# ---------------------------------------------------------------------------------------------


@dataclass
class _Filters:
    source: str | None = None
    heading: str | None = None
    metadata: Mapping[str, str] | None = None
    key: tuple[object, ...] = field(default=())


class Searcher:
    """Answers queries over one :class:`Corpus`; safe to share between threads.

    Args:
        corpus: The index's arrays.
        query_embedder: An embedder for vector/hybrid queries; it must have the index's stamp.
        embedder_options: Keyword arguments for a lazily imported provider's
            ``query_embedder_from_stamp`` (e.g. ``base_url``).
    """

    def __init__(
        self,
        corpus: Corpus,
        *,
        query_embedder: Any | None = None,
        embedder_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.corpus = corpus
        self._options = dict(embedder_options or {})
        self._lock = threading.Lock()
        self._embedder: Any | None = None
        self._source_masks: dict[tuple[object, ...], npt.NDArray[np.bool_]] = {}
        self._sources_checked = False
        if query_embedder is not None:
            self._embedder = self._checked_embedder(query_embedder)

    # -- query embedding --------------------------------------------------------------------

    def _checked_embedder(self, embedder: Any) -> Any:
        stamp = embedder.stamp()
        if not stamps_match(stamp, self.corpus.stamp):
            raise QueryEmbeddingError(
                f"{self.corpus.source}: the query embedder is {_describe(stamp)} but the index "
                f"was embedded with {_describe(self.corpus.stamp)}; vectors from different "
                'models are not comparable. Use the index\'s provider, mode="keyword", or '
                "rebuild the index."
            )
        return embedder

    def query_embedder(self) -> Any:
        """Return (creating it once) the embedder for this index's query vectors.

        Raises:
            QueryEmbeddingError: The provider cannot be used here (not installed, no API key,
                or a mismatched stamp); the message suggests ``mode="keyword"``.
        """
        with self._lock:
            if self._embedder is not None:
                return self._embedder
            stamp = self.corpus.stamp
            provider = stamp.get("provider")
            hint = 'pass query_vector=..., or search with mode="keyword"'
            if provider == HASHING_PROVIDER_ID:
                if stamp.get("model") != HASHING_MODEL_ID:
                    raise QueryEmbeddingError(
                        f"{self.corpus.source}: the index was embedded with hashing model "
                        f"{stamp.get('model')!r}, but this scidx has {HASHING_MODEL_ID!r}; "
                        f"upgrade scidx or rebuild the index, or {hint}."
                    )
                dims = stamp.get("dimensions")
                if not isinstance(dims, int) or dims < 8:
                    raise QueryEmbeddingError(
                        f"{self.corpus.source}: the provider stamp has dimensions {dims!r}; "
                        f"rebuild the index, or {hint}."
                    )
                self._embedder = HashingEmbedder(dims)
                return self._embedder
            try:
                module = resolve_provider(provider)
            except LookupError:
                raise QueryEmbeddingError(
                    f"{self.corpus.source}: the index's embedding provider {provider!r} is not "
                    f"known to scidx; {hint}."
                ) from None
            except ImportError as exc:
                raise QueryEmbeddingError(
                    f"{self.corpus.source}: vector search needs the {provider!r} embedding "
                    f"provider, which cannot be imported here ({exc}); {hint}."
                ) from exc
            try:
                factory = module.query_embedder_from_stamp
                embedder = factory(dict(stamp), **self._options)
            except AttributeError as exc:
                raise QueryEmbeddingError(
                    f"{self.corpus.source}: the {provider!r} provider cannot embed queries; {hint}."
                ) from exc
            except Exception as exc:  # the provider's own ScidxError (no key, bad stamp...)
                raise QueryEmbeddingError(
                    f"{self.corpus.source}: cannot embed the query with {_describe(stamp)}: "
                    f"{exc}; {hint}."
                ) from exc
            self._embedder = self._checked_embedder(embedder)
            return self._embedder

    def embed_query(self, query: str) -> npt.NDArray[np.float32]:
        """Embed ``query`` with the index's provider; see :meth:`query_embedder`."""
        embedder = self.query_embedder()
        try:
            if hasattr(embedder, "embed_query"):
                vec = embedder.embed_query(query)
            else:
                vec = embedder.embed([query])[0]
        except EmbeddingError as exc:
            raise QueryEmbeddingError(
                f"{self.corpus.source}: embedding the query failed: {exc}; pass "
                'query_vector=..., or search with mode="keyword".'
            ) from exc
        return np.asarray(vec, dtype=np.float32).reshape(-1)

    def check_vector(self, vector: Any) -> npt.NDArray[np.float32]:
        """Validate a caller-supplied query vector and return it L2-normalised.

        Raises:
            QueryError: Wrong length or shape, NaN/inf, or zero norm.
        """
        d = int(self.corpus.vectors.shape[1])
        raw = np.asarray(vector)
        if raw.dtype.kind not in "biuf":
            raise QueryError(
                f"the query vector must hold real numbers, got dtype {raw.dtype}; pass floats"
            )
        try:
            arr = raw.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise QueryError(f"the query vector is not a numeric array ({exc})") from None
        if arr.ndim == 2 and arr.shape[0] == 1:
            arr = arr[0]
        if arr.ndim != 1 or arr.shape[0] != d:
            raise QueryError(
                f"the query vector has shape {list(arr.shape)}, but this index's vectors have "
                f"{d} dimensions ({_describe(self.corpus.stamp)}); embed the query with the "
                "same model."
            )
        if not np.all(np.isfinite(arr)):
            raise QueryError("the query vector contains NaN or infinite values")
        # Scale by the largest component first, so huge or tiny values cannot overflow the norm.
        peak = float(np.max(np.abs(arr)))
        if peak == 0.0:
            raise QueryError("the query vector is all zeros; it matches nothing")
        arr = arr / peak
        return (arr / float(np.linalg.norm(arr))).astype(np.float32)

    # -- filters ------------------------------------------------------------------------------

    def _source_mask(self, filters: _Filters) -> npt.NDArray[np.bool_] | None:
        if filters.source is None and not filters.metadata:
            return None
        with self._lock:
            cached = self._source_masks.get(filters.key)
        if cached is not None:
            return cached
        c = self.corpus
        s = len(c.source_path)
        mask = np.ones(s, dtype=bool)
        pattern = filters.source
        is_glob = pattern is not None and any(ch in pattern for ch in "*?[")
        for i in range(s):
            if pattern is not None:
                path = c.source_path[i]
                ok = fnmatch.fnmatchcase(path, pattern) if is_glob else path.startswith(pattern)
                if not ok:
                    mask[i] = False
                    continue
            if filters.metadata:
                meta = self._source_meta(i)
                for name, want in filters.metadata.items():
                    have = meta.get(name)
                    if have is None or _meta_str(have) != _meta_str(want):
                        mask[i] = False
                        break
        chunk_mask = mask[self._chunk_sources()]
        with self._lock:
            if len(self._source_masks) >= 64:  # bounded: filters are usually a handful
                self._source_masks.clear()
            self._source_masks[filters.key] = chunk_mask
        return chunk_mask

    def _chunk_sources(self) -> npt.NDArray[np.uint32]:
        c = self.corpus
        if not self._sources_checked:
            # One vectorised pass the first time a filter needs it, not at load.
            if c.n and int(c.chunk_source.max()) >= len(c.source_path):
                raise CorruptIndexError(
                    f"{c.source}: array `chunk.source` points past the {len(c.source_path)} "
                    "sources. The file is truncated or corrupt; rebuild it with "
                    "`toolup-rag pack-docs`."
                )
            self._sources_checked = True
        return c.chunk_source

    def _source_meta(self, i: int) -> dict[str, Any]:
        raw = self.corpus.source_meta[i]
        try:
            value = json.loads(raw) if raw else {}
        except ValueError:
            raise CorruptIndexError(
                f"{self.corpus.source}: `source.meta` row {i} is not JSON. The file is truncated "
                "or corrupt; rebuild it with `toolup-rag pack-docs`."
            ) from None
        return value if isinstance(value, dict) else {}

    def _heading_ok(self, row: int, needle: str) -> bool:
        c = self.corpus
        title = self._title(row)
        heading = c.chunk_heading[row].replace("\x1f", "\n")
        return needle in f"{title}\n{heading}".casefold()

    # -- assembling hits ----------------------------------------------------------------------

    def _title(self, row: int) -> str:
        c = self.corpus
        s = int(c.chunk_source[row])
        if s >= len(c.source_title):
            raise CorruptIndexError(
                f"{c.source}: chunk {row} points at source {s}, past the "
                f"{len(c.source_title)} sources. The file is truncated or corrupt; rebuild it "
                "with `toolup-rag pack-docs`."
            )
        return c.source_title[s]

    def hit(self, row: int, score: float, terms: Sequence[str], snippet_chars: int) -> Hit:
        """Build the :class:`Hit` for chunk ``row``."""
        c = self.corpus
        if not 0 <= row < c.n:
            raise CorruptIndexError(
                f"{c.source}: a posting points at chunk {row}, but the index has {c.n}. The "
                "file is truncated or corrupt; rebuild it with `toolup-rag pack-docs`."
            )
        title = self._title(row)
        source = c.source_path[int(c.chunk_source[row])]
        anchor = c.chunk_anchor[row]
        heading = c.chunk_heading[row]
        text = c.chunk_text[row]
        return Hit(
            id=c.chunk_id[row],
            score=float(score),
            source=source,
            anchor=anchor,
            heading_path=heading.split("\x1f") if heading else [],
            title=title,
            text=text,
            url=render_url(c.url_template, source, anchor),
            query_terms=tuple(terms),
            snippet_chars=snippet_chars,
        )

    # -- ranking --------------------------------------------------------------------------------

    def _rank(
        self,
        rows: _Rows,
        scores: _Scores,
        k: int,
        min_score: float | None,
        filters: _Filters,
    ) -> tuple[_Rows, _Scores]:
        if min_score is not None:
            keep = scores >= np.float32(min_score)
            rows, scores = rows[keep], scores[keep]
        mask = self._source_mask(filters)
        if mask is not None:
            keep = mask[rows]
            rows, scores = rows[keep], scores[keep]
        if filters.heading is None:
            return top_k(rows, scores, k)
        needle = filters.heading.casefold()
        # Heading text is per chunk, so it is checked lazily on the best candidates, widening
        # the cut until k pass (no per-chunk work for the rest of the index).
        want = max(k * 4, 32)
        while True:
            r, s = top_k(rows, scores, want)
            ok = np.fromiter(
                (self._heading_ok(int(x), needle) for x in r), dtype=bool, count=r.shape[0]
            )
            if int(ok.sum()) >= k or r.shape[0] >= rows.shape[0]:
                return r[ok][:k], s[ok][:k]
            want *= 4

    def keyword_scores(self, terms: Sequence[str]) -> tuple[_Rows, _Scores]:
        """BM25 scores of the chunks containing any of ``terms`` (rows ascending)."""
        rows, scores = score_query(self.corpus.bm25, terms)
        # One vectorised check guards every later index with these rows (a corrupt posting
        # list need not be sorted, so check the maximum, not the last row).
        top = int(rows.max()) if rows.shape[0] else -1
        if top >= self.corpus.n:
            raise CorruptIndexError(
                f"{self.corpus.source}: array `bm25.post_doc` points at chunk {top}, "
                f"but the index has {self.corpus.n}. The file is truncated or corrupt; rebuild "
                "it with `toolup-rag pack-docs`."
            )
        return rows, scores

    def vector_scores(self, q: npt.NDArray[np.float32]) -> _Scores:
        """Cosine scores of every chunk against the normalised query ``q``."""
        # One BLAS matrix-vector product straight over the memory map; no copy, no chunking
        # (the result is N floats).
        return np.asarray(self.corpus.vectors @ q, dtype=np.float32)

    def run(
        self,
        query: str | None,
        *,
        snippet_chars: int,
        on_stage: Callable[[str], None] | None = None,
        **options: Any,
    ) -> list[Hit]:
        """Run one search (the engine behind ``Index.search`` / ``Index.search_vector``).

        ``options`` are those of :meth:`select`.
        """
        rows, scores, terms = self.select(
            query, snippet_chars=snippet_chars, on_stage=on_stage, **options
        )
        if on_stage is not None:
            on_stage("hits")
        return [self.hit(r, s, terms, snippet_chars) for r, s in zip(rows, scores, strict=True)]

    def rank(self, query: str | None, **options: Any) -> list[tuple[str, float]]:
        """Chunk ids and scores only, in result order (the engine behind ``Index.rank``)."""
        rows, scores, _ = self.select(query, **options)
        ids = self.corpus.chunk_id
        return [(ids[r], s) for r, s in zip(rows, scores, strict=True)]

    def select(
        self,
        query: str | None,
        *,
        k: int,
        mode: str,
        alpha: float,
        min_score: float | None,
        source: str | None,
        heading: str | None,
        metadata: Mapping[str, Any] | None,
        query_vector: Any | None,
        snippet_chars: int = DEFAULT_SNIPPET_CHARS,
        on_stage: Callable[[str], None] | None = None,
    ) -> tuple[list[int], list[float], list[str]]:
        """Choose the result rows: ``(rows, scores, query terms)``, best first.

        ``snippet_chars`` is accepted (and validated) here so that every entry point checks the
        same arguments.

        Raises:
            QueryError: Invalid arguments (see ``Index.search``).
            QueryEmbeddingError: Vector search impossible for this index and query.
        """
        if mode not in MODES:
            raise QueryError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k <= 0:
            raise QueryError(f"k must be a positive integer, got {k!r}")
        if not isinstance(alpha, (int, float)) or not 0.0 <= float(alpha) <= 1.0:
            raise QueryError(f"alpha must be a number in [0, 1], got {alpha!r}")
        if min_score is not None and (
            not isinstance(min_score, (int, float)) or math.isnan(float(min_score))
        ):
            raise QueryError(f"min_score must be a number, got {min_score!r}")
        if isinstance(snippet_chars, bool) or not isinstance(snippet_chars, int):
            raise QueryError(f"snippet_chars must be a positive integer, got {snippet_chars!r}")
        if snippet_chars <= 0:
            raise QueryError(f"snippet_chars must be a positive integer, got {snippet_chars!r}")
        filters = _make_filters(source, heading, metadata)
        if query is not None and not isinstance(query, str):
            raise QueryError(f"the query must be a str, got {type(query).__name__}")
        text = (query or "").strip()
        k = int(k)
        n = self.corpus.n
        stage = on_stage or _no_stage

        qvec = self.check_vector(query_vector) if query_vector is not None else None
        if not text and qvec is None:
            return [], [], []  # an empty query matches nothing (documented), in every mode
        terms = query_terms(text) if text else []

        if mode == "keyword":
            if not terms:
                return [], [], []
            stage("retrieval")
            rows, scores = self.keyword_scores(terms)
            rows, scores = self._rank(rows, scores, min(k, n), min_score, filters)
        elif mode == "vector":
            if qvec is None:
                stage("embedding")
                qvec = self._embed_checked(text)
                if qvec is None:
                    return [], [], []
            stage("retrieval")
            scores = self.vector_scores(qvec)
            if min_score is None and filters.key == (None, ()) and filters.heading is None:
                rows, scores = top_k_dense(scores, min(k, n))
            else:
                rows = np.arange(n, dtype=np.int64)
                rows, scores = self._rank(rows, scores, min(k, n), min_score, filters)
        else:
            if qvec is None:
                stage("embedding")
                qvec = self._embed_checked(text)
            stage("retrieval")
            fused = self._hybrid(terms, qvec, float(alpha))
            stage("fusion")
            if isinstance(fused, tuple):
                rows, scores = fused
            elif min_score is None and filters.key == (None, ()) and filters.heading is None:
                rows, scores = top_k_dense(fused, min(k, n))
            else:
                rows = np.flatnonzero(fused > 0).astype(np.int64)
                scores = fused[rows]
            keep = scores > 0  # chunks neither leg found are not hits
            rows, scores = self._rank(rows[keep], scores[keep], min(k, n), min_score, filters)
        return rows.tolist(), scores.tolist(), terms

    def _embed_checked(self, text: str) -> npt.NDArray[np.float32] | None:
        vec = self.embed_query(text)
        if vec.shape[0] != self.corpus.vectors.shape[1] or not np.all(np.isfinite(vec)):
            raise QueryEmbeddingError(
                f"{self.corpus.source}: the query embedder returned a vector of shape "
                f"{list(vec.shape)} (or with NaN), expected {self.corpus.vectors.shape[1]} "
                'finite values; search with mode="keyword".'
            )
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            return None  # e.g. a hashing query of only stop-words: no vector evidence
        return (vec / norm).astype(np.float32)

    def _expand(
        self, qvec: npt.NDArray[np.float32], kw_rows: _Rows, kw_scores: _Scores
    ) -> npt.NDArray[np.float32]:
        """Rocchio feedback: add the BM25-weighted mean vector of the best keyword hits."""
        top_rows, top_scores = top_k(kw_rows, kw_scores, PRF_DOCS)
        weights = top_scores.astype(np.float64)
        total = float(weights.sum())
        if top_rows.shape[0] == 0 or not total > 0:
            return qvec
        centroid = weights @ self.corpus.vectors[top_rows].astype(np.float64) / total
        expanded = qvec.astype(np.float64) + PRF_BETA * centroid
        norm = float(np.linalg.norm(expanded))
        if not norm > 0:
            return qvec
        return (expanded / norm).astype(np.float32)

    def _hybrid(
        self, terms: Sequence[str], qvec: npt.NDArray[np.float32] | None, alpha: float
    ) -> npt.NDArray[np.float32] | tuple[_Rows, _Scores]:
        """Fused scores: a dense array over all chunks, or ``(rows, scores)`` without vectors."""
        kw_rows, kw_scores = self.keyword_scores(terms) if terms else (_empty_rows(), _empty())
        kw_max = float(kw_scores.max()) if kw_rows.shape[0] else 0.0
        if qvec is None:
            if not kw_max > 0:
                return _empty_rows(), _empty()
            fused_kw = (1.0 - alpha) * kw_scores.astype(np.float64) / kw_max
            return kw_rows, fused_kw.astype(np.float32)
        # Every chunk has a cosine, so fusing densely costs O(N) next to the O(N * D) product
        # and ranks every chunk exactly (no candidate pools that a filter could empty).
        cos = self.vector_scores(self._expand(qvec, kw_rows, kw_scores)).astype(np.float64)
        np.maximum(cos, 0.0, out=cos)
        vmax = float(cos.max()) if cos.shape[0] else 0.0
        fused = cos * (alpha / vmax) if vmax > 0 else np.zeros_like(cos)
        if kw_max > 0:
            fused[kw_rows] += (1.0 - alpha) * kw_scores.astype(np.float64) / kw_max
        return fused.astype(np.float32)


_BLOCK = 64


def _dense_threshold(scores: _Scores, k: int) -> float | None:
    """A score t such that at least ``k`` entries are >= t (so the top k all are), or None.

    The k-th largest of the per-block maxima: k blocks reach it, each with an entry >= t. This
    costs one vectorised pass instead of an argpartition over every row (5x faster at 100k).
    """
    n = scores.shape[0]
    full = n // _BLOCK * _BLOCK
    if full // _BLOCK <= 4 * k:
        return None
    bmax = scores[:full].reshape(-1, _BLOCK).max(axis=1)
    if full < n:
        bmax = np.append(bmax, scores[full:].max())
    if bool(np.isnan(bmax).any()):  # a corrupt NaN vector: let the exact path rank it
        return None
    t = float(np.partition(bmax, bmax.shape[0] - k)[bmax.shape[0] - k])
    return t if math.isfinite(t) else None


def top_k_dense(scores: _Scores, k: int) -> tuple[_Rows, _Scores]:
    """Top ``k`` of a score per chunk row: score descending, then row ascending (no row array)."""
    n = scores.shape[0]
    if k <= 0 or n == 0:
        return _empty_rows(), _empty()
    if n > k:
        t = _dense_threshold(scores, k)
        if t is None:
            part = np.argpartition(scores, n - k)[n - k :]
            t = scores[part].min()
            if not t == t:  # NaN (only a corrupt vector does that): rank NaN last
                scores = np.where(np.isnan(scores), np.float32(-np.inf), scores)
                part = np.argpartition(scores, n - k)[n - k :]
                t = scores[part].min()
        keep = np.flatnonzero(scores >= t)
    else:
        keep = np.arange(n, dtype=np.int64)
    order = np.lexsort((keep, -scores[keep]))[:k]
    rows = keep[order].astype(np.int64)
    return rows, scores[rows]


def _empty() -> _Scores:
    return np.zeros(0, dtype=np.float32)


def _empty_rows() -> _Rows:
    return np.zeros(0, dtype=np.int64)


def _no_stage(name: str) -> None:
    return None


def _meta_str(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _make_filters(
    source: str | None, heading: str | None, metadata: Mapping[str, Any] | None
) -> _Filters:
    if source is not None and (not isinstance(source, str) or not source):
        raise QueryError(f"the source filter must be a non-empty glob or path prefix: {source!r}")
    if heading is not None and (not isinstance(heading, str) or not heading):
        raise QueryError(f"the heading filter must be a non-empty string, got {heading!r}")
    items: tuple[tuple[str, str], ...] = ()
    if metadata is not None:
        if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
            raise QueryError(
                f"the metadata filter must map front-matter field names to values: {metadata!r}"
            )
        items = tuple(sorted((k, _meta_str(v)) for k, v in metadata.items()))
    return _Filters(
        source=source,
        heading=heading,
        metadata=dict(items) if items else None,
        key=(source, items),
    )
