"""Retrieval requests and matches: the :class:`Retriever` protocol and the adapter for one index.

These live in the runtime, beside :class:`~scidx.index.index.Index`, so that an ``Index`` is a
``Retriever`` without importing the RAG layer; :mod:`scidx.rag.pipeline` composes retrievers
(several indexes, traces, prompts) on top of them. :class:`IndexRetriever` needs only what
:class:`SearchableIndex` names, so this module does not import the ``Index`` module (which
imports this one to answer ``Index.retrieve``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from scidx.errors import QueryError
from scidx.index.hits import Hit
from scidx.index.params import SearchParams
from scidx.index.rerank import STAGE_RERANKING, FixedQuery

__all__ = [
    "STAGE_CONTEXT",
    "STAGE_EMBEDDING",
    "STAGE_FUSION",
    "STAGE_RERANKING",
    "STAGE_RETRIEVAL",
    "IndexRetriever",
    "Match",
    "Progress",
    "RetrievalRequest",
    "Retriever",
    "SearchableIndex",
    "StageEvent",
]


STAGE_EMBEDDING = "embedding"


STAGE_RETRIEVAL = "retrieval"


STAGE_FUSION = "fusion"


STAGE_CONTEXT = "context"


@dataclass(frozen=True)
class StageEvent:
    """One finished pipeline stage, as sent to a progress callback.

    Attributes:
        stage: ``"embedding"``, ``"retrieval"``, ``"fusion"``, ``"reranking"`` or
            ``"context"``.
        seconds: How long the stage took.
        count: Items the stage produced, when meaningful (candidates after retrieval,
            matches after fusion, blocks after context building), else ``None``.
        retriever: The name of the retriever that reported it ("" when anonymous).
    """

    stage: str
    seconds: float
    count: int | None = None
    retriever: str = ""


Progress = Callable[[StageEvent], None]


@dataclass(frozen=True)
class RetrievalRequest(SearchParams):
    """What to retrieve: the question plus the :class:`~scidx.index.params.SearchParams`.

    Validated when it is made (:class:`~scidx.errors.QueryError`), like every ``SearchParams``.

    Attributes:
        query: The user's question; embedded for the vector leg, searched by the keyword leg
            unless ``text_query`` is set.
        k: The most matches to return (> 0; default 5).
        mode: ``"hybrid"`` (default), ``"keyword"`` or ``"vector"``.
        text_query: Lexical override: the keyword leg searches this text instead of
            ``query`` (e.g. extracted keywords). ``""`` skips the keyword leg altogether, so
            ``hybrid`` runs as ``vector`` and ``keyword`` returns nothing. ``None``: use
            ``query``.
        min_score: Drop matches scoring below this (in the retriever's own score scale).
        source: Keep chunks whose source path matches this glob or prefix.
        heading: Keep chunks whose title or heading path contains this text.
        metadata: Keep chunks whose front matter has all these ``field: value`` pairs.
        on_progress: Called with a :class:`StageEvent` as each stage finishes.
        group: As for ``Index.search``: ``"section"`` by default, so one long section does not
            fill the prompt; ``"page"``, or ``None`` for raw chunks.
        mmr: Maximal-marginal-relevance weight in [0, 1], or ``None`` (off).

    ``alpha``, ``snippet_chars`` and ``query_vector`` are inherited from ``SearchParams``; an
    :class:`IndexRetriever` made with its own ``alpha`` or ``snippet_chars`` uses those instead.
    """

    query: str
    k: int = field(default=5, kw_only=True)
    text_query: str | None = field(default=None, kw_only=True)
    group: str | None = field(default="section", kw_only=True)
    on_progress: Progress | None = field(default=None, compare=False, repr=False, kw_only=True)

    def __post_init__(self) -> None:
        """Validate the request (see :meth:`validate`)."""
        self.validate()

    def validate(self) -> None:
        """Check the request's fields.

        Raises:
            QueryError: ``query`` is not a string, ``k`` is not a positive integer, the mode is
                unknown, or another search parameter is invalid.
        """
        if not isinstance(self.query, str):
            raise QueryError(f"the query must be a str, got {type(self.query).__name__}")
        if self.text_query is not None and not isinstance(self.text_query, str):
            raise QueryError(
                f"text_query must be a str or None, got {type(self.text_query).__name__}"
            )
        self._check()

    def legs(self) -> tuple[str, str] | None:
        """The mode to run and the keyword leg's text, after the ``text_query`` override.

        Every retriever reads ``text_query`` through this, so they agree on what ``""`` means.

        Returns:
            ``(mode, keyword text)``, where ``text_query=""`` turns ``hybrid`` into ``vector``;
            ``None`` when there is nothing to search (``keyword`` with ``text_query=""``).
        """
        lexical = self.query if self.text_query is None else self.text_query
        if self.text_query == "":
            return None if self.mode == "keyword" else ("vector", lexical)
        return self.mode, lexical

    def report(self, event: StageEvent) -> None:
        """Send ``event`` to the progress callback, if any."""
        if self.on_progress is not None:
            self.on_progress(event)


@dataclass(frozen=True)
class Match(Hit):
    """One retrieved chunk: a :class:`~scidx.index.hits.Hit` plus where it came from.

    ``score`` is the score the list is ordered by: the index's own score for a single index,
    the fused score after ``interleaved`` reciprocal-rank fusion.

    Attributes:
        retriever: Name of the retriever (index) the match came from.
        raw_score: The retriever's own score when ``score`` is a fused one, else ``None``.
    """

    retriever: str = ""
    raw_score: float | None = None

    @classmethod
    def from_hit(cls, hit: Hit, retriever: str = "") -> Match:
        """Wrap a search :class:`~scidx.index.hits.Hit` (its snippet, if computed, is kept)."""
        # A copy of the hit's state: fields it has not read yet stay lazy in the match too.
        match = object.__new__(cls)
        match.__dict__.update(hit.__dict__, retriever=retriever, raw_score=None)
        return match

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: :meth:`Hit.to_dict` plus ``link``, ``retriever`` and ``rawScore``."""
        data = super().to_dict()
        data["link"] = self.link
        data["retriever"] = self.retriever
        data["rawScore"] = self.raw_score
        return data


@runtime_checkable
class Retriever(Protocol):
    """Anything that answers a :class:`RetrievalRequest` with ranked :class:`Match` objects.

    Implementations return at most ``request.k`` matches, best first, drop matches below
    ``request.min_score``, and report their stages through ``request.report`` (optional for
    custom retrievers; the trace then shows only what was reported).
    """

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        """Return the best matches for ``request``, best first."""
        ...


class SearchableIndex(Protocol):
    """What :class:`IndexRetriever` needs of an index (:class:`~scidx.index.index.Index` has it)."""

    @property
    def source(self) -> str:
        """The file the index was loaded from (names the retriever by default)."""
        ...

    def search_with(
        self,
        query: str,
        params: SearchParams,
        *,
        on_stage: Callable[[str], None] | None = None,
    ) -> list[Hit]:
        """Search with prepared parameters, calling ``on_stage`` as each stage starts."""
        ...

    def embed_query(self, query: str) -> np.ndarray:
        """Embed ``query`` with the index's provider."""
        ...


class StageClock:
    """Turns ``Index.search``'s stage-start callbacks into finished stages with durations."""

    # search.py reports "hits" while building snippets: that is still retrieval work.
    _RENAME = {"hits": STAGE_RETRIEVAL}

    def __init__(self) -> None:
        self.durations: dict[str, float] = {}
        self._stage: str | None = None
        self._start = time.perf_counter()

    def start(self, stage: str) -> None:
        now = time.perf_counter()
        if self._stage is not None:
            self.durations[self._stage] = self.durations.get(self._stage, 0.0) + now - self._start
        self._stage = self._RENAME.get(stage, stage)
        self._start = now

    def stop(self) -> dict[str, float]:
        self.start("")
        self.durations.pop("", None)
        return self.durations


class IndexRetriever:
    """Adapts a loaded :class:`~scidx.index.index.Index` to the :class:`Retriever` protocol.

    Args:
        index: The open index.
        name: A name for matches and traces (default: the index's file name).
        alpha: Hybrid weight of the vector leg (see :mod:`scidx.index.search`); ``None`` uses the
            request's (by default the index's default).
        snippet_chars: Length of each match's ``snippet``; ``None`` uses the request's (240 by
            default).

    Example:
        >>> retriever = IndexRetriever(scidx.load("docs.scidx"))  # doctest: +SKIP
        >>> retriever.retrieve(RetrievalRequest("configure the cache", k=3))  # doctest: +SKIP
    """

    def __init__(
        self,
        index: SearchableIndex,
        *,
        name: str | None = None,
        alpha: float | None = None,
        snippet_chars: int | None = None,
    ) -> None:
        self.index = index
        self.name = name if name is not None else Path(index.source).name
        self.alpha = alpha
        self.snippet_chars = snippet_chars

    def __repr__(self) -> str:
        return f"IndexRetriever({self.name!r})"

    def _params(self, request: RetrievalRequest, **changes: Any) -> SearchParams:
        """The request's search parameters, without ``min_score`` (applied after the trace)."""
        if self.alpha is not None:
            changes["alpha"] = self.alpha
        if self.snippet_chars is not None:
            changes["snippet_chars"] = self.snippet_chars
        values = {f.name: getattr(request, f.name) for f in _PARAM_FIELDS}
        values.update(changes, min_score=None)
        return SearchParams(**values)

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        """Search the index; see :class:`RetrievalRequest` for ``text_query`` semantics.

        The search runs without ``min_score``; the cut is applied here, so that the
        ``retrieval`` stage event can report how many candidates there were before it.

        Raises:
            QueryError: An invalid request (bad ``k``, mode, filter).
            QueryEmbeddingError: Vector or hybrid search needs a query embedding this index's
                provider cannot make here.
        """
        request.validate()
        legs = request.legs()
        if legs is None:
            return []
        mode, lexical = legs
        clock = StageClock()
        fixed: dict[str, Any] = {}
        if request.rerank is not None and lexical != request.query:
            # The searcher sees the keyword text; the reranker must judge the question.
            fixed["rerank"] = FixedQuery(request.rerank, request.query)
        if mode == "keyword":
            params = self._params(request, **fixed)
            hits = self.index.search_with(lexical, params, on_stage=clock.start)
        elif mode == "hybrid" and lexical != request.query:
            # The two legs get different texts: embed the question ourselves (unless the
            # caller did) and let the index's own fusion combine it with a keyword search of
            # the override.
            changes: dict[str, Any] = dict(fixed)
            if request.query_vector is None:
                clock.start(STAGE_EMBEDDING)
                changes["query_vector"] = self.index.embed_query(request.query)
            params = self._params(request, **changes)
            hits = self.index.search_with(lexical, params, on_stage=clock.start)
        else:
            params = self._params(request, mode=mode)
            hits = self.index.search_with(request.query, params, on_stage=clock.start)
        durations = clock.stop()
        candidates = len(hits)
        for stage in (STAGE_EMBEDDING, STAGE_RETRIEVAL, STAGE_FUSION, STAGE_RERANKING):
            if stage in durations:
                count = candidates if stage != STAGE_EMBEDDING else None
                request.report(StageEvent(stage, durations[stage], count, self.name))
        if request.min_score is not None:
            hits = [h for h in hits if h.score >= request.min_score]
        return [Match.from_hit(h, self.name) for h in hits]


_PARAM_FIELDS = tuple(f for f in fields(SearchParams) if f.init)
