"""The retrieval pipeline on top of one or more indexes: retrievers, tracing and cited prompts.

Contract (see ``docs/pipeline.md`` for the user-facing description):

* A :class:`Retriever` is anything with ``retrieve(request) -> list[Match]``.
  :class:`IndexRetriever` adapts a loaded :class:`~scidx.index.index.Index`;
  :class:`MultiIndexRetriever` combines several retrievers; a custom one (an external search
  service, a reranker wrapping another retriever) only has to implement the same method.
* :class:`RetrievalRequest` carries the question (``query``), an optional lexical override
  (``text_query``: the keyword leg searches this text instead, and ``""`` skips the keyword
  leg), ``k``, ``min_score``, filters and an optional progress callback.
* Progress: the callback receives one :class:`StageEvent` per finished stage, with its
  duration. Stages are :data:`STAGE_EMBEDDING` (absent in keyword mode: no query embedding is
  made), :data:`STAGE_RETRIEVAL`, :data:`STAGE_FUSION` (hybrid and multi-index only) and
  :data:`STAGE_CONTEXT` (prompt building).
* Tracing: :class:`Pipeline` sends one :class:`TraceRecord` per retrieval to its tracer. The
  record holds the query's SHA-256, never its text. A retrieval with fewer than ``min_matches``
  matches left after ``min_score`` is marked ``miss``.
* Multi-index fusion ``interleaved`` is reciprocal-rank fusion by default: scores of different
  indexes (BM25 of different corpora, different embedding models) are not comparable, so only
  ranks are used. ``fusion="score"`` sorts by raw score, for callers that know their scores
  are comparable.
* Prompts: numbered context blocks ``[1]``, ``[2]``... with heading path and ``source#anchor``
  (or URL), bodies cut on a block, sentence or word boundary (never inside a word) to
  ``snippet_chars``, the whole context within ``context_chars``, and a grounding instruction
  (``strict``, ``preferred``, ``permissive``) in the system message.

Homes: :mod:`scidx.rag.multi` (several indexes), :mod:`scidx.rag.trace` (traces),
:mod:`scidx.rag.prompt` (prompts); this module composes them in :class:`Pipeline` and
re-exports their public names, so ``from scidx.rag.pipeline import ...`` keeps working. The
retrieval types (``RetrievalRequest``, ``Match``, ``Retriever``, ``IndexRetriever``,
``StageEvent``) have one import path, :mod:`scidx.index.retrieval`.

Runtime module: numpy, msgpack, xxhash, the stdlib and scidx runtime modules only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from scidx.errors import ConfigError
from scidx.index.rerank import Reranker
from scidx.index.retrieval import (
    STAGE_CONTEXT,
    STAGE_RETRIEVAL,
    Match,
    RetrievalRequest,
    Retriever,
    StageEvent,
)
from scidx.rag.multi import RRF_K, MultiIndexRetriever, _retriever_name
from scidx.rag.prompt import (
    DEFAULT_BLOCK_CHARS,
    DEFAULT_CONTEXT_CHARS,
    DEFAULT_TEMPLATE,
    GROUNDING,
    GROUNDING_MODES,
    NO_CONTEXT,
    ContextBlock,
    Prompt,
    PromptOptions,
    build_context,
    build_prompt,
    cut_text,
)
from scidx.rag.rewrite import STAGE_QUERY_REWRITE, Rewrite, checked_rewrite
from scidx.rag.trace import JsonlTracer, NullTracer, Tracer, TraceRecord, query_hash

__all__ = [
    "DEFAULT_BLOCK_CHARS",
    "DEFAULT_CONTEXT_CHARS",
    "DEFAULT_TEMPLATE",
    "GROUNDING",
    "GROUNDING_MODES",
    "NO_CONTEXT",
    "RRF_K",
    "ContextBlock",
    "JsonlTracer",
    "MultiIndexRetriever",
    "NullTracer",
    "Pipeline",
    "Prepared",
    "Prompt",
    "PromptOptions",
    "TraceRecord",
    "Tracer",
    "build_context",
    "build_prompt",
    "cut_text",
    "query_hash",
]


@dataclass(frozen=True)
class Prepared:
    """The result of :meth:`Pipeline.prepare`: everything but the model's answer.

    Attributes:
        question: The question.
        matches: The retrieved matches.
        prompt: The assembled prompt.
        trace: The trace record that was sent to the tracer.
        rewrite: What the query-rewrite stage made of the question (``None``: no rewriter).
    """

    question: str
    matches: list[Match]
    prompt: Prompt
    trace: TraceRecord
    rewrite: Rewrite | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: matches, prompt and trace (the trace has no question text)."""
        data = {
            "question": self.question,
            "matches": [m.to_dict() for m in self.matches],
            "prompt": self.prompt.to_dict(),
            "trace": self.trace.to_dict(),
        }
        if self.rewrite is not None:
            data["rewrite"] = self.rewrite.to_dict()
        return data


def _reranker_name(reranker: object) -> str:
    if reranker is None:
        return ""
    name = getattr(reranker, "name", None)
    return name if isinstance(name, str) else type(reranker).__name__


class Pipeline:
    """Retrieval with tracing and prompt building on top of any :class:`Retriever`.

    A ``Pipeline`` is itself a :class:`Retriever` (its :meth:`retrieve` traces), so it can be
    nested. :meth:`prepare` is the "direct inspection" call: matches plus the fully assembled
    prompt, without calling any model.

    Args:
        retriever: The retriever (an :class:`IndexRetriever`, a :class:`MultiIndexRetriever`
            or a custom one).
        tracer: Receives one :class:`TraceRecord` per retrieval (default: discard).
        min_matches: A retrieval with fewer matches than this (after ``min_score``) is marked
            a ``miss`` in its trace.
        prompt_options: Defaults for :meth:`prepare`.
        reranker: A :class:`~scidx.index.rerank.Reranker` for every request that names none
            (``request.rerank``): the retriever rescores its best ``rerank_top`` candidates
            with it, reported as the ``reranking`` stage. ``None`` (default): no reranking.
        rerank_top: Candidates the reranker rescores (``None``: the request's, else 20).
        rewriter: A query rewriter run before retrieval, as the ``query_rewrite`` stage (see
            :mod:`scidx.rag.rewrite`): retrieval searches its semantic query (and its lexical
            query in the keyword leg, when it gives one); the prompt keeps the question.
            ``None`` (default): off.

    Example:
        >>> pipe = Pipeline(IndexRetriever(scidx.load("docs.scidx")))  # doctest: +SKIP
        >>> prepared = pipe.prepare("How do I configure the cache?")  # doctest: +SKIP
        >>> print(prepared.prompt.user)  # doctest: +SKIP
    """

    def __init__(
        self,
        retriever: Retriever,
        *,
        tracer: Tracer | None = None,
        min_matches: int = 1,
        prompt_options: PromptOptions | None = None,
        reranker: Reranker | None = None,
        rerank_top: int | None = None,
        rewriter: Any | None = None,
    ) -> None:
        if isinstance(min_matches, bool) or not isinstance(min_matches, int) or min_matches < 0:
            raise ConfigError(f"min_matches must be an integer >= 0, got {min_matches!r}")
        self.retriever = retriever
        self.tracer: Tracer = tracer or NullTracer()
        self.min_matches = min_matches
        self.prompt_options = prompt_options or PromptOptions()
        self.name = _retriever_name(retriever, 0)
        self.reranker = reranker
        self.rerank_top = rerank_top
        self.rewriter = rewriter

    def _run(
        self, request: RetrievalRequest
    ) -> tuple[list[Match], dict[str, float], int | None, float, Rewrite | None]:
        durations: dict[str, float] = {}
        counts: dict[str, int] = {}
        outer = request.on_progress

        def collect(event: StageEvent) -> None:
            durations[event.stage] = durations.get(event.stage, 0.0) + event.seconds
            if event.count is not None and event.stage == STAGE_RETRIEVAL:
                counts[STAGE_RETRIEVAL] = counts.get(STAGE_RETRIEVAL, 0) + event.count
            if outer is not None:
                outer(event)

        changes: dict[str, Any] = {"on_progress": collect}
        if self.reranker is not None and request.rerank is None:
            changes["rerank"] = self.reranker
            changes["rerank_top"] = request.rerank_top or self.rerank_top
        started = time.perf_counter()
        rewrite = None
        if self.rewriter is not None:
            rewrite = checked_rewrite(self.rewriter, request.query)
            collect(StageEvent(STAGE_QUERY_REWRITE, time.perf_counter() - started, None, self.name))
            changes["query"] = rewrite.query
            if rewrite.text_query is not None:
                changes["text_query"] = rewrite.text_query
        matches = self.retriever.retrieve(replace(request, **changes))
        elapsed = time.perf_counter() - started
        return matches, durations, counts.get(STAGE_RETRIEVAL), elapsed, rewrite

    def _trace(
        self,
        request: RetrievalRequest,
        matches: Sequence[Match],
        durations: Mapping[str, float],
        candidates: int | None,
        seconds: float,
    ) -> TraceRecord:
        trace = TraceRecord(
            query_sha256=query_hash(request.query),
            query_chars=len(request.query),
            mode=request.mode,
            k=request.k,
            candidates=max(candidates if candidates is not None else 0, len(matches)),
            results=len(matches),
            top_score=max((m.score for m in matches), default=None),
            miss=len(matches) < self.min_matches,
            min_matches=self.min_matches,
            min_score=request.min_score,
            latency_ms={s: round(v * 1000.0, 3) for s, v in durations.items()},
            total_ms=round(seconds * 1000.0, 3),
            retriever=self.name,
            reranker=_reranker_name(request.rerank or self.reranker),
            time_utc=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        self.tracer.record(trace)
        return trace

    def retrieve(self, request: RetrievalRequest) -> list[Match]:
        """Retrieve through the wrapped retriever and trace the retrieval."""
        matches, durations, candidates, seconds, _ = self._run(request)
        self._trace(request, matches, durations, candidates, seconds)
        return matches

    def prepare(
        self,
        question: str | RetrievalRequest,
        *,
        k: int = 5,
        mode: str = "hybrid",
        options: PromptOptions | None = None,
    ) -> Prepared:
        """Retrieve for ``question`` and assemble the prompt; no model is called.

        Args:
            question: The question, or a full :class:`RetrievalRequest` (then ``k`` and
                ``mode`` are ignored).
            k: Matches to retrieve.
            mode: Search mode.
            options: Prompt options (default: the pipeline's).

        Returns:
            Matches, prompt and the trace record (which includes the ``context`` stage).
        """
        request = (
            question
            if isinstance(question, RetrievalRequest)
            else RetrievalRequest(question, k=k, mode=mode)
        )
        matches, durations, candidates, seconds, rewrite = self._run(request)
        started = time.perf_counter()
        prompt = build_prompt(request.query, matches, options or self.prompt_options)
        spent = time.perf_counter() - started
        durations[STAGE_CONTEXT] = spent
        request.report(StageEvent(STAGE_CONTEXT, spent, len(prompt.blocks), self.name))
        trace = self._trace(request, matches, durations, candidates, seconds + spent)
        return Prepared(request.query, matches, prompt, trace, rewrite)
