"""Retrieval requests and matches: the :class:`Retriever` protocol and the adapter for one index.

These live in the runtime, beside :class:`~scidx.index.index.Index`, so that an ``Index`` is a
``Retriever`` without importing the RAG layer; :mod:`scidx.rag.pipeline` composes retrievers
(several indexes, traces, prompts) on top of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from scidx.errors import QueryError
from scidx.index.hits import Hit
from scidx.index.search import MODES

if TYPE_CHECKING:
    from scidx.index.index import Index

__all__ = [
    "STAGE_CONTEXT",
    "STAGE_EMBEDDING",
    "STAGE_FUSION",
    "STAGE_RETRIEVAL",
    "IndexRetriever",
    "Match",
    "Progress",
    "RetrievalRequest",
    "Retriever",
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
        stage: ``"embedding"``, ``"retrieval"``, ``"fusion"`` or ``"context"``.
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
class RetrievalRequest:
    """What to retrieve.

    Attributes:
        query: The user's question; embedded for the vector leg, searched by the keyword leg
            unless ``text_query`` is set.
        k: The most matches to return (> 0).
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
    """

    query: str
    k: int = 5
    mode: str = "hybrid"
    text_query: str | None = None
    min_score: float | None = None
    source: str | None = None
    heading: str | None = None
    metadata: Mapping[str, Any] | None = None
    on_progress: Progress | None = field(default=None, compare=False, repr=False)

    def validate(self) -> None:
        """Check the request's fields.

        Raises:
            QueryError: ``query`` is not a string, ``k`` is not a positive integer, or the
                mode is unknown.
        """
        if not isinstance(self.query, str):
            raise QueryError(f"the query must be a str, got {type(self.query).__name__}")
        if self.text_query is not None and not isinstance(self.text_query, str):
            raise QueryError(
                f"text_query must be a str or None, got {type(self.text_query).__name__}"
            )
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k <= 0:
            raise QueryError(f"k must be a positive integer, got {self.k!r}")
        if self.mode not in MODES:
            raise QueryError(f"unknown search mode {self.mode!r}; use one of {', '.join(MODES)}")

    def report(self, event: StageEvent) -> None:
        """Send ``event`` to the progress callback, if any."""
        if self.on_progress is not None:
            self.on_progress(event)


@dataclass(frozen=True)
class Match:
    """One retrieved chunk.

    Attributes:
        id: The chunk id.
        score: The score the list is ordered by: the index's own score for a single index,
            the fused score after ``interleaved`` reciprocal-rank fusion.
        source: Source path of the chunk.
        anchor: Heading anchor ("" for text before the first heading).
        heading_path: Ancestor headings, outermost first.
        title: Document title.
        text: The full chunk body (Markdown).
        snippet: The best-matching passage.
        url: The link made from the index's URL template, if it has one.
        retriever: Name of the retriever (index) the match came from.
        raw_score: The retriever's own score when ``score`` is a fused one, else ``None``.
    """

    id: str
    score: float
    source: str
    anchor: str
    heading_path: tuple[str, ...] = ()
    title: str = ""
    text: str = ""
    snippet: str = ""
    url: str | None = None
    retriever: str = ""
    raw_score: float | None = None

    @classmethod
    def from_hit(cls, hit: Hit, retriever: str = "") -> Match:
        """Convert a search :class:`~scidx.search.Hit`."""
        return cls(
            id=hit.id,
            score=hit.score,
            source=hit.source,
            anchor=hit.anchor,
            heading_path=tuple(hit.heading_path),
            title=hit.title,
            text=hit.text,
            snippet=hit.snippet,
            url=hit.url,
            retriever=retriever,
        )

    @property
    def link(self) -> str:
        """The URL when the index has a URL template, else ``source#anchor`` (or ``source``)."""
        if self.url:
            return self.url
        return f"{self.source}#{self.anchor}" if self.anchor else self.source

    @property
    def heading(self) -> str:
        """The heading path joined with " > " (the title when the chunk has no heading)."""
        parts = list(self.heading_path)
        if self.title and (not parts or parts[0] != self.title):
            parts.insert(0, self.title)
        return " > ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data with camelCase keys."""
        return {
            "id": self.id,
            "score": self.score,
            "source": self.source,
            "anchor": self.anchor,
            "headingPath": list(self.heading_path),
            "title": self.title,
            "text": self.text,
            "snippet": self.snippet,
            "url": self.url,
            "link": self.link,
            "retriever": self.retriever,
            "rawScore": self.raw_score,
        }


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
    """Adapts a loaded :class:`~scidx.load.Index` to the :class:`Retriever` protocol.

    Args:
        index: The open index.
        name: A name for matches and traces (default: the index's file name).
        alpha: Hybrid weight of the vector leg (see :mod:`scidx.index.search`); ``None`` uses the
            index's default.
        snippet_chars: Length of each match's ``snippet``.

    Example:
        >>> retriever = IndexRetriever(scidx.load("docs.scidx"))  # doctest: +SKIP
        >>> retriever.retrieve(RetrievalRequest("configure the cache", k=3))  # doctest: +SKIP
    """

    def __init__(
        self,
        index: Index,
        *,
        name: str | None = None,
        alpha: float | None = None,
        snippet_chars: int = 240,
    ) -> None:
        self.index = index
        self.name = name if name is not None else Path(index.source).name
        self.alpha = alpha
        self.snippet_chars = snippet_chars

    def __repr__(self) -> str:
        return f"IndexRetriever({self.name!r})"

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
        mode = request.mode
        lexical = request.query if request.text_query is None else request.text_query
        if request.text_query == "":
            if mode == "keyword":
                return []
            mode = "vector"
        clock = StageClock()
        options: dict[str, Any] = {
            "k": request.k,
            "source": request.source,
            "heading": request.heading,
            "metadata": request.metadata,
            "snippet_chars": self.snippet_chars,
            "on_stage": clock.start,
        }
        if self.alpha is not None:
            options["alpha"] = self.alpha
        if mode == "hybrid" and lexical != request.query:
            # The two legs get different texts: embed the question ourselves and let the
            # index's own fusion combine it with a keyword search of the override.
            clock.start(STAGE_EMBEDDING)
            vector = self.index.embed_query(request.query)
            hits = self.index.search(lexical, mode="hybrid", query_vector=vector, **options)
        elif mode == "keyword":
            hits = self.index.search(lexical, mode="keyword", **options)
        else:
            hits = self.index.search(request.query, mode=mode, **options)
        durations = clock.stop()
        candidates = len(hits)
        for stage in (STAGE_EMBEDDING, STAGE_RETRIEVAL, STAGE_FUSION):
            if stage in durations:
                count = candidates if stage != STAGE_EMBEDDING else None
                request.report(StageEvent(stage, durations[stage], count, self.name))
        if request.min_score is not None:
            hits = [h for h in hits if h.score >= request.min_score]
        return [Match.from_hit(h, self.name) for h in hits]
