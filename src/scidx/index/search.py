"""Query-time ranking over an index's arrays: keyword, vector and hybrid top-k.

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
  defaults (alpha 0.3, 3 chunks, beta 2) give 0.7075. Those are the hashing provider's
  settings: each index records its provider's own in its header (``meta.fusion``: ``alpha``,
  ``prfDocs``, ``prfBeta``; the ``local`` provider's were tuned the same way, see
  ``scidx.embed.local.FUSION``). ``alpha`` defaults to the header's and can be overridden per
  query; an index without ``meta.fusion`` uses :data:`DEFAULT_ALPHA`, :data:`PRF_DOCS` and
  :data:`PRF_BETA`.
* **Evidence.** A text query in vector or hybrid mode returns only chunks with evidence: a
  query term matches them, or their cosine is at least the header's ``meta.fusion.vectorFloor``
  (calibrated per provider on SciFact train, ``benchmarks/bench_evidence.py``). The hashing
  provider records no floor (nil), so its vectors reorder keyword matches and never add a
  chunk; nonsense (``xyzzyplugh``) finds nothing in any mode. A query given only as a vector
  is not filtered.
* Ordering is deterministic: score descending, then chunk row ascending. Rows are stored in
  chunk-id order (code points), so equal scores are listed by chunk id; ties at the k-th place
  are resolved the same way.
* Filters (``source`` glob or path prefix, ``heading`` substring, front-matter ``metadata``
  equality) restrict the candidates *before* the top-k cut, so ``k`` filtered hits come back
  when that many exist. ``min_score`` drops hits scoring below it.
* Query embeddings: see :mod:`scidx.index.query`. Filters: :mod:`scidx.index.filters`. Hits
  and snippets: :mod:`scidx.index.hits`. Parameters (validated once): :mod:`scidx.index.params`.

Runtime module: numpy, msgpack, xxhash and the stdlib only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scidx.errors import CorruptIndexError, QueryError
from scidx.fusion import DEFAULT_FUSION
from scidx.index.bm25 import (
    PostingLookup,
    accumulate,
    keyword_top_k,
    score_postings,
)
from scidx.index.corpus import Corpus
from scidx.index.expand import expand_query, weighted_postings
from scidx.index.filters import FilterMasks
from scidx.index.format import REBUILD_HINT
from scidx.index.grouping import Group, group_rows, mmr_order
from scidx.index.hits import Hit, HitRenderer
from scidx.index.languages import query_language
from scidx.index.params import DEFAULT_ALPHA, MODES, SearchParams
from scidx.index.query import QueryEncoder, stamps_match
from scidx.index.rerank import DEFAULT_RERANK_TOP, STAGE_RERANKING, rerank_order
from scidx.index.topk import top_k, top_k_dense

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

PRF_DOCS = int(DEFAULT_FUSION["prfDocs"])
PRF_BETA = float(DEFAULT_FUSION["prfBeta"])
#: The most decoded chunk ids :meth:`Searcher.chunk_ids` remembers.
ID_MEMO = 1 << 16
_MEMO_QUERY_CHARS = 256  # longer queries are expanded afresh (bounds the memo's memory)

_Rows = npt.NDArray[np.int64]
_Scores = npt.NDArray[np.float32]
_Selection = tuple[list[int], list[float], list[str]]
_NOTHING: _Selection = ([], [], [])


class Searcher:
    """Answers queries over one :class:`Corpus`; safe to share between threads.

    Ranking lives here; query vectors come from a :class:`~scidx.index.query.QueryEncoder`,
    filters from :class:`~scidx.index.filters.FilterMasks` and hits from a
    :class:`~scidx.index.hits.HitRenderer`.

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
        self.encoder = QueryEncoder(
            corpus.source,
            corpus.stamp,
            int(corpus.vectors.shape[1]),
            query_embedder=query_embedder,
            embedder_options=embedder_options,
            token_counts=corpus.token_counts,
        )
        self.filters = FilterMasks(corpus)
        self.postings = PostingLookup(corpus.bm25, corpus.n, corpus.source)
        self.renderer = HitRenderer(corpus, self.postings)
        self._ids: dict[int, str] = {}
        self._sections: dict[int, tuple[int, str]] = {}
        self._expansions: dict[tuple[str, bool, bool, tuple[str, ...]], list[str]] = {}

    def search(
        self,
        query: str | None,
        params: SearchParams,
        on_stage: Callable[[str], None] | None = None,
    ) -> list[Hit]:
        """Run one search and build its hits (the engine behind ``Index.search``)."""
        chars = params.snippet_chars
        if params.group is None and params.mmr is None and params.rerank is None:
            rows, scores, terms = self.select(query, params, on_stage)
            if on_stage is not None:
                on_stage("hits")
            return self.renderer.hits(rows, scores, terms, chars)
        groups, terms = self.choose(query, params, on_stage)
        if on_stage is not None:
            on_stage("hits")
        render = self.renderer.hits
        out = render([g.row for g in groups], [g.score for g in groups], terms, chars)
        for hit, g in zip(out, groups, strict=True):
            if g.sections:
                subs = render(
                    [r for r, _ in g.sections], [sc for _, sc in g.sections], terms, chars
                )
                object.__setattr__(hit, "sections", tuple(subs))  # Hit is frozen
        return out

    def search_batch(self, queries: Sequence[str], params: SearchParams) -> list[list[Hit]]:
        """:meth:`search` for each of ``queries`` (the engine behind ``Index.search_batch``)."""
        if params.group is not None or params.mmr is not None or params.rerank is not None:
            return [self.search(query, params) for query in queries]
        render = self.renderer.hits
        chars = params.snippet_chars
        return [
            render(rows, scores, terms, chars)
            for rows, scores, terms in self._many(queries, params)
        ]

    def rank_batch(
        self, queries: Sequence[str], params: SearchParams
    ) -> list[list[tuple[str, float]]]:
        """:meth:`rank` for each of ``queries`` (the engine behind ``Index.rank_batch``)."""
        if params.group is not None or params.mmr is not None or params.rerank is not None:
            return [self.rank(query, params) for query in queries]
        ids = self.chunk_ids
        return [
            list(zip(ids(rows), scores, strict=True))
            for rows, scores, _ in self._many(queries, params)
        ]

    def _many(self, queries: Sequence[str], params: SearchParams) -> list[_Selection]:
        """:meth:`select` for each of ``queries`` (raw chunks), under one numpy error state.

        Raw keyword queries without filters (the common batch) skip the per-query checks of
        :meth:`_select`, done once here, and go straight to the postings.
        """
        out: list[_Selection] = []
        with np.errstate(all="ignore"):  # as in select()
            if params.mode != "keyword" or self.filters.active(params.filters):
                return [
                    self._finite(self._select(query, params, None), params.mode)
                    for query in queries
                ]
            n = self.corpus.n
            k = min(int(params.k), n)
            lookup = self.postings
            vectorless = params.query_vector is None
            for query in queries:
                text = query.strip() if isinstance(query, str) and vectorless else ""
                terms = self.terms(query, params) if text else []
                if not terms:  # None, not a string, no terms, a query vector: as search()
                    out.append(self._finite(self._select(query, params, None), params.mode))
                    continue
                rows, scores = keyword_top_k(
                    weighted_postings(lookup, terms), n, k, params.min_score
                )
                out.append(self._finite((rows, scores, terms), "keyword"))
        return out

    def rank(self, query: str | None, params: SearchParams) -> list[tuple[str, float]]:
        """Chunk ids and scores only, in result order (the engine behind ``Index.rank``)."""
        if params.group is None and params.mmr is None and params.rerank is None:
            rows, scores, _ = self.select(query, params)
        else:
            groups, _ = self.choose(query, params)
            rows, scores = [g.row for g in groups], [g.score for g in groups]
        return list(zip(self.chunk_ids(rows), scores, strict=True))

    def chunk_ids(self, rows: list[int]) -> list[str]:
        """The chunk ids of ``rows``; ids read before come from a bounded memo.

        Rankings keep returning the same popular chunks, and an id is short, so remembering
        decoded ids (at most :data:`ID_MEMO` of them) saves most of the string decoding.
        """
        memo = self._ids
        found = [memo.get(r) for r in rows]
        if None not in found:
            return found  # type: ignore[return-value]  # no None left
        missing = [r for r, v in zip(rows, found, strict=True) if v is None]
        read = dict(zip(missing, self.corpus.chunk_id.take(missing), strict=True))
        if len(memo) + len(read) > ID_MEMO:
            memo.clear()
        memo.update(read)  # another thread may clear it meanwhile: answer from `read`
        return [v if v is not None else read[r] for r, v in zip(rows, found, strict=True)]

    def choose(
        self,
        query: str | None,
        params: SearchParams,
        on_stage: Callable[[str], None] | None = None,
    ) -> tuple[list[Group], list[str]]:
        """The result rows after ``mmr`` re-ranking and ``group`` collapsing, and the terms.

        Without either it is :meth:`select`. Otherwise a wider candidate list is selected
        (``max(4k, 32)`` rows; ``k + max(k // 2, 4)`` for section grouping alone, whose answer
        does not depend on the cut) and widened 4x at a time until ``k`` groups are found or
        the candidates run out, so grouping never returns fewer hits than exist.
        """
        k = int(params.k)
        if params.group is None and params.mmr is None and params.rerank is None:
            rows, scores, terms = self.select(query, params, on_stage)
            return [Group(r, sc) for r, sc in zip(rows, scores, strict=True)], terms
        # Section grouping takes the first k distinct sections of the ranking, so any cut that
        # holds k of them gives the same answer: start just above k (most sections are one
        # chunk) and widen. Page sub-results and MMR look at the whole candidate list, so
        # their cut stays fixed at the documented size.
        if params.rerank is not None:  # a fixed candidate list: the reranker's budget
            want = max(k, int(params.rerank_top or DEFAULT_RERANK_TOP))
        elif params.group == "section" and params.mmr is None:
            want = k + max(k // 2, 4)
        else:
            want = max(4 * k, 32)
        c = self.corpus
        memo = self._sections

        def section_of(row: int) -> tuple[int, str]:
            key = memo.get(row)
            if key is None:
                key = (c.source_of(row), c.chunk_anchor[row])
                if len(memo) >= ID_MEMO:
                    memo.clear()  # bounded, like the id memo; a race only repeats a read
                memo[row] = key
            return key

        while True:
            wide = params.widened(want)
            rows, scores, terms = self.select(query, wide, on_stage)
            exhausted = len(rows) < want or want >= c.n
            if params.rerank is not None:
                rows, scores = self._rerank(query, rows, scores, terms, params, on_stage)
                exhausted = True
            if params.mmr is not None and rows:
                # Grouping needs the whole list in MMR order; without it, the first k do.
                chosen = len(rows) if params.group is not None else k
                order = mmr_order(rows, scores, c.vectors, float(params.mmr), chosen)
                rows = [rows[i] for i in order]
                scores = [scores[i] for i in order]
            if params.group is None:
                return [Group(r, sc) for r, sc in zip(rows[:k], scores[:k], strict=True)], terms
            groups = group_rows(rows, scores, k, params.group, section_of, c.source_of)
            if len(groups) >= k or exhausted:
                return groups, terms
            want *= 4

    def _rerank(
        self,
        query: str | None,
        rows: list[int],
        scores: list[float],
        terms: list[str],
        params: SearchParams,
        on_stage: Callable[[str], None] | None,
    ) -> tuple[list[int], list[float]]:
        """The candidates in the reranker's order, with its scores (:mod:`scidx.index.rerank`)."""
        reranker = params.rerank
        assert reranker is not None  # only called when a reranker is set
        if on_stage is not None:
            on_stage(STAGE_RERANKING)
        hits = self.renderer.hits(rows, scores, terms, params.snippet_chars)
        order, new = rerank_order(reranker, (query or "").strip(), hits)
        return [rows[i] for i in order], new

    def select(
        self,
        query: str | None,
        params: SearchParams,
        on_stage: Callable[[str], None] | None = None,
    ) -> _Selection:
        """Choose the result rows: ``(rows, scores, query terms)``, best first.

        Raises:
            QueryError: The query is not a string, or a bad ``query_vector``.
            QueryEmbeddingError: Vector search impossible for this index and query.
        """
        # Hostile or degenerate stored vectors (3e38, inf) overflow in the scoring arithmetic;
        # the scores are checked (NaN ranks last), so numpy must not print RuntimeWarnings.
        with np.errstate(all="ignore"):
            return self._finite(self._select(query, params, on_stage), params.mode)

    def _finite(self, selection: _Selection, mode: str) -> _Selection:
        """``selection`` itself when every score is finite.

        A score that is not can only come from out-of-range stored values (``verify`` bounds
        them), so it never reaches a hit, JSON or a response.

        Raises:
            CorruptIndexError: A selected score is infinite or NaN.
        """
        scores = selection[1]
        if all(math.isfinite(x) for x in scores):
            return selection
        arrays = {
            "keyword": "`bm25.tf_values` or `bm25.idf_values`",
            "vector": "`vectors` (or `vectors.scale`)",
        }.get(mode, "`bm25.tf_values`, `bm25.idf_values` or `vectors`")
        raise CorruptIndexError(
            f"{self.corpus.source}: a search scored a chunk {_bad(scores)}: array {arrays} "
            f"holds values no packer writes. {REBUILD_HINT}"
        )

    def _vectors_cover(self, text: str) -> bool:
        """Whether the index's model covers the query's language (issue 42).

        The query's language is its script's (CJK) or the index's; a model of unknown
        languages is trusted, as before.
        """
        langs = self.corpus.languages
        return langs.model_covers(query_language(text) or langs.default)

    def _select(
        self,
        query: str | None,
        params: SearchParams,
        on_stage: Callable[[str], None] | None,
    ) -> _Selection:
        if query is not None and not isinstance(query, str):
            raise QueryError(f"the query must be a str, got {type(query).__name__}")
        text = (query or "").strip()
        vector = params.query_vector
        qvec = self.encoder.check_vector(vector) if vector is not None else None
        if not text and qvec is None:
            return _NOTHING  # an empty query matches nothing (documented), in every mode
        terms = self.terms(query, params) if text else []
        # The vector leg embeds the corrected query (scidx.index.expand).
        text = getattr(terms, "text", "") or text
        stage = on_stage or _no_stage
        if params.mode == "keyword":
            if not terms:
                return _NOTHING
            stage("retrieval")
            if not self.filters.active(params.filters):
                # The common case, in the fewest passes: no candidate rows are materialised.
                k = min(int(params.k), self.corpus.n)
                found = weighted_postings(self.postings, terms)
                return (*keyword_top_k(found, self.corpus.n, k, params.min_score), terms)
            rows, scores = self.keyword_scores(terms)
        elif params.mode == "vector":
            if qvec is None:
                stage("embedding")
                qvec = self.encoder.embed_normalised(text)
                if qvec is None:
                    return _NOTHING
            stage("retrieval")
            if not text and params.min_score is None and not self.filters.active(params.filters):
                rows, scores = self._vector_top_k(qvec, min(int(params.k), self.corpus.n))
                return rows.tolist(), scores.tolist(), terms
            scores = self.vector_scores(qvec)
            rows = np.arange(self.corpus.n, dtype=np.int64)
            if text:
                evidence = self._evidence(terms, scores, floor=self._vectors_cover(text))
                rows = np.flatnonzero(evidence).astype(np.int64)
                scores = scores[rows]
        else:
            rows, scores = self._hybrid_rows(text, terms, qvec, vector is None, params, stage)
        k = min(int(params.k), self.corpus.n)
        rows, scores = self.filters.apply(rows, scores, k, params.min_score, params.filters)
        return rows.tolist(), scores.tolist(), terms

    def _hybrid_rows(
        self,
        text: str,
        terms: list[str],
        qvec: npt.NDArray[np.float32] | None,
        embed: bool,
        params: SearchParams,
        stage: Callable[[str], None],
    ) -> tuple[_Rows, _Scores]:
        """The hybrid candidates (rows, fused scores > 0) before filters and the top-k cut."""
        alpha = self.corpus.fusion["alpha"] if params.alpha is None else params.alpha
        if text and embed and not self._vectors_cover(text):
            alpha = 0.0  # the model's cosines mean nothing in this language: keyword only
        elif qvec is None:
            stage("embedding")
            qvec = self.encoder.embed_normalised(text)
        stage("retrieval")
        fused: npt.NDArray[np.float32] | tuple[_Rows, _Scores]
        if self.corpus.fusion["method"] == "rerank":
            fused = self._rerank_keyword(terms, qvec, float(alpha), params)
        else:
            fused = self._hybrid(terms, qvec, float(alpha), evidence=bool(text))
        stage("fusion")
        if isinstance(fused, tuple):
            rows, scores = fused
        elif params.min_score is None and not self.filters.active(params.filters):
            rows, scores = top_k_dense(fused, min(int(params.k), self.corpus.n))
        else:
            rows = np.flatnonzero(fused > 0).astype(np.int64)
            scores = fused[rows]
        keep = scores > 0  # chunks neither leg found are not hits
        return rows[keep], scores[keep]

    def terms(self, query: str | None, params: SearchParams) -> list[str]:
        """The query's terms, with corrections and completions as ``params`` asks.

        A :class:`~scidx.index.expand.QueryTerms` (see :mod:`scidx.index.expand`), read-only
        and remembered per query (at most :data:`ID_MEMO` of them): a search box sends the
        same queries again, and their expansion depends on the text and the index alone.
        """
        # The languages to tokenise it in (issue 42): the one asked, else every page language.
        languages = tuple(self.corpus.languages.query_languages(params.filters.language))
        key = (query or "", bool(params.fuzzy), bool(params.prefix), languages)
        memo = self._expansions
        found = memo.get(key)
        if found is None:
            found = expand_query(
                key[0],
                self.corpus.dictionary,
                fuzzy=params.fuzzy,
                prefix=params.prefix,
                languages=languages,
            )
            if len(key[0]) <= _MEMO_QUERY_CHARS:  # a huge query is not kept
                if len(memo) >= ID_MEMO:
                    memo.clear()
                memo[key] = found
        return found

    def keyword_scores(self, terms: Sequence[str]) -> tuple[_Rows, _Scores]:
        """BM25 scores of the chunks containing any of ``terms`` (rows ascending).

        Every row is below the chunk count (each posting run is checked when first read).
        """
        return score_postings(weighted_postings(self.postings, terms), self.corpus.n)

    def _vector_top_k(self, q: npt.NDArray[np.float32], k: int) -> tuple[_Rows, _Scores]:
        """The best ``k`` rows by cosine; a binary index rescores its Hamming pre-ranking."""
        store = self.corpus.store
        # Windows score every chunk exactly: a Hamming pre-ranking of the main rows alone
        # could drop a chunk whose best window is not its first.
        windowed = self.corpus.windows is not None and len(self.corpus.windows) > 0
        pool = store.candidates(q, k) if store is not None and not windowed else None
        if pool is not None and store is not None:
            return top_k(pool, store.score_rows(pool, q), k)
        return top_k_dense(self.vector_scores(q), k)

    def vector_scores(self, q: npt.NDArray[np.float32]) -> _Scores:
        """Cosine scores of every chunk against the normalised query ``q``.

        One matrix-vector product straight over the memory map, no copy: for float32 one BLAS
        product at a time in the process, for int8 and binary the rows split over one thread
        per core (see :mod:`scidx.index.vectors`). A chunk with window rows scores its best
        window (:mod:`scidx.index.windows`).
        """
        store = self.corpus.store
        assert store is not None  # always set when the corpus is built
        scores = np.asarray(store @ q, dtype=np.float32)
        if self.corpus.windows is not None:
            self.corpus.windows.best(scores, q)
        return scores

    def _expand(
        self, qvec: npt.NDArray[np.float32], kw_rows: _Rows, kw_scores: _Scores
    ) -> npt.NDArray[np.float32]:
        """Rocchio feedback: add the BM25-weighted mean vector of the best keyword hits."""
        docs = int(self.corpus.fusion["prfDocs"])
        beta = float(self.corpus.fusion["prfBeta"])
        if docs <= 0 or beta <= 0:
            return qvec
        top_rows, top_scores = top_k(kw_rows, kw_scores, docs)
        weights = top_scores.astype(np.float64)
        total = float(weights.sum())
        if top_rows.shape[0] == 0 or not total > 0:
            return qvec
        centroid = weights @ self.corpus.vectors[top_rows].astype(np.float64) / total
        expanded = qvec.astype(np.float64) + beta * centroid
        norm = float(np.linalg.norm(expanded))
        if not norm > 0:
            return qvec
        return (expanded / norm).astype(np.float32)

    def _hybrid(
        self,
        terms: Sequence[str],
        qvec: npt.NDArray[np.float32] | None,
        alpha: float,
        *,
        evidence: bool = True,
    ) -> npt.NDArray[np.float32] | tuple[_Rows, _Scores]:
        """Fused scores: a dense array over all chunks, or ``(rows, scores)`` without vectors.

        With ``evidence`` (a text query), a chunk no query term matches scores 0 unless its
        cosine clears the header's ``vectorFloor`` (:meth:`_floor`).
        """
        if qvec is not None and terms:
            dense = self._dense_keyword(terms)
            if dense is not None:
                return self._fuse_dense(dense, qvec, alpha)
        kw_rows, kw_scores = self.keyword_scores(terms) if terms else (_empty_rows(), _empty())
        kw_max = float(kw_scores.max()) if kw_rows.shape[0] else 0.0
        if qvec is None:
            if not kw_max > 0:
                return _empty_rows(), _empty()
            fused_kw = (1.0 - alpha) * kw_scores.astype(np.float64) / kw_max
            return kw_rows, fused_kw.astype(np.float32)
        # Every chunk has a cosine, so fusing densely costs O(N) next to the O(N * D) product
        # and ranks every chunk exactly (no candidate pools that a filter could empty).
        fused, cos = self._vector_part(self._expand(qvec, kw_rows, kw_scores), alpha)
        if kw_max > 0:
            fused[kw_rows] += (1.0 - alpha) * kw_scores.astype(np.float64) / kw_max
        if evidence:
            keep = self._floor(cos)
            keep[kw_rows] = True
            fused[~keep] = 0.0
        return fused.astype(np.float32)

    def _vector_part(
        self, qvec: npt.NDArray[np.float32], alpha: float
    ) -> tuple[npt.NDArray[np.float64], _Scores]:
        """``alpha`` times every chunk's cosine (negatives as 0) scaled by the best one.

        Returns:
            The scaled vector leg and the raw cosines (for the evidence floor).
        """
        raw = self.vector_scores(qvec)
        cos = raw.astype(np.float64)
        np.maximum(cos, 0.0, out=cos)
        vmax = float(cos.max()) if cos.shape[0] else 0.0
        return (cos * (alpha / vmax) if vmax > 0 else np.zeros_like(cos)), raw

    def _floor(self, cos: _Scores) -> npt.NDArray[np.bool_]:
        """Chunks whose cosine alone is evidence: at least the header's ``vectorFloor``.

        No floor (the hashing provider's, and any index packed before floors): none is, so the
        vector leg reorders keyword matches and never adds a chunk the query does not contain.
        """
        floor = self.corpus.fusion.get("vectorFloor")
        if floor is None:
            return np.zeros(cos.shape[0], dtype=np.bool_)
        return np.asarray(cos >= float(floor), dtype=np.bool_)

    def _evidence(
        self, terms: Sequence[str], cos: _Scores, *, floor: bool = True
    ) -> npt.NDArray[np.bool_]:
        """Chunks a text query may return: those matching a term, or clearing the floor.

        ``floor`` False: only those matching a term (a query the model does not cover).
        """
        keep = self._floor(cos) if floor else np.zeros(cos.shape[0], dtype=np.bool_)
        if terms:
            keep[self.keyword_scores(terms)[0]] = True
        return keep

    def _dense_keyword(self, terms: Sequence[str]) -> npt.NDArray[np.float32] | None:
        """BM25 scores of every chunk as one float32 array, when summing them densely is cheap.

        The same float32 scores as :meth:`keyword_scores` (0 where a chunk has none of the
        terms); ``None`` when the postings are sparse next to the chunks (then rows are better).
        """
        postings = weighted_postings(self.postings, terms)
        if len(postings) < 2:
            return None
        summed = accumulate(postings, self.corpus.n)
        return None if isinstance(summed, tuple) else summed.astype(np.float32)

    def _fuse_dense(
        self, kw: npt.NDArray[np.float32], qvec: npt.NDArray[np.float32], alpha: float
    ) -> npt.NDArray[np.float32]:
        """:meth:`_hybrid` from dense keyword scores: no row lists, same result bit for bit.

        A chunk without the terms adds ``0.0`` to its fused score, which leaves it unchanged,
        so adding the whole array equals adding the keyword rows alone.
        """
        kw_max = float(kw.max())
        kw64 = kw.astype(np.float64)
        docs = int(self.corpus.fusion["prfDocs"])
        if kw_max > 0 and docs > 0:
            # The feedback rows: the best `docs` keyword chunks (those scoring 0 dropped), the
            # same rows and order as ranking the keyword rows alone.
            rows, scores = top_k_dense(kw, docs)
            keep = scores > 0
            qvec = self._expand(qvec, rows[keep], scores[keep])
        fused, cos = self._vector_part(qvec, alpha)
        keep = self._floor(cos)
        keep |= kw > 0
        if kw_max > 0:
            np.multiply(kw64, 1.0 - alpha, out=kw64)
            np.divide(kw64, kw_max, out=kw64)
            fused += kw64
        fused[~keep] = 0.0
        return fused.astype(np.float32)

    # --- static vectors (issue 41) ---------------------------------------------------------

    def _rerank_keyword(
        self,
        terms: Sequence[str],
        qvec: npt.NDArray[np.float32] | None,
        alpha: float,
        params: SearchParams,
    ) -> tuple[_Rows, _Scores]:
        """Fusion method ``rerank``: the vector leg reorders keyword's best candidates only.

        The ``meta.fusion.candidates`` best keyword chunks (among those the source filters
        let through) score ``(bm25 / max_bm25 + alpha * max(cos, 0)) / (1 + alpha)``; no chunk
        without a query term is ever a hit, whatever its cosine. A query without vector
        (no known token) ranks as keyword search.
        """
        if not terms:
            return _empty_rows(), _empty()
        rows, scores = self.keyword_scores(terms)
        mask = self.filters.source_mask(params.filters)
        if mask is not None:
            keep = mask[rows]
            rows, scores = rows[keep], scores[keep]
        rows, scores = top_k(rows, scores, int(self.corpus.fusion["candidates"]))
        kw_max = float(scores.max()) if rows.shape[0] else 0.0
        if not kw_max > 0:
            return _empty_rows(), _empty()
        fused = scores.astype(np.float64) / kw_max
        if qvec is not None:
            cos = self._row_cosines(rows, qvec).astype(np.float64)
            fused += alpha * np.maximum(cos, 0.0)
        fused /= 1.0 + alpha
        return rows, fused.astype(np.float32)

    def _row_cosines(self, rows: _Rows, q: npt.NDArray[np.float32]) -> _Scores:
        """The cosines of chunk ``rows`` alone against ``q`` (their best window where any)."""
        store = self.corpus.store
        assert store is not None  # always set when the corpus is built
        if self.corpus.windows is not None and len(self.corpus.windows) > 0:
            return self.vector_scores(q)[rows]
        return np.asarray(store.score_rows(rows, q), dtype=np.float32)


def _bad(scores: Sequence[float]) -> str:
    value = next(x for x in scores if not math.isfinite(x))
    return "NaN" if math.isnan(value) else f"{value}"


def _empty() -> _Scores:
    return np.zeros(0, dtype=np.float32)


def _empty_rows() -> _Rows:
    return np.zeros(0, dtype=np.int64)


def _no_stage(name: str) -> None:
    return None
