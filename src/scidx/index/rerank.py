"""The reranking stage: a :class:`Reranker` rescores the best retrieval candidates of a query.

Contract:

* A reranker is any object with ``name`` (for traces), ``stamp()`` (its identity: provider,
  model and whatever changes its scores, like an embedder's) and
  ``rerank(query, candidates) -> scores``: one finite float per candidate, higher is better.
  Candidates are :class:`~scidx.index.hits.Hit` objects (``text``, ``title``, ``heading``,
  ``source``...); :func:`passage` is the text the built-in rerankers score.
* Where it runs: ``SearchParams(rerank=..., rerank_top=N)`` makes the searcher select the best
  ``N`` raw chunks (default :data:`DEFAULT_RERANK_TOP`, never fewer than ``k``), rescore them
  with the reranker, order them by the new score (ties keep the retrieval order), and only
  then apply ``mmr`` and ``group``, then cut to ``k``. Hit scores are the reranker's.
* Cost: with ``rerank=None`` (the default) the searcher takes exactly the path it took before
  this stage existed; one attribute test per query.
* Failures: a reranker raises :class:`~scidx.errors.RerankError` (or a
  :class:`~scidx.errors.ConfigError` for bad settings); scores of the wrong count, type or a
  non-finite value are refused here with a :class:`~scidx.errors.RerankError` naming the
  reranker, whatever the plugin returned.

Runtime module: the stdlib only (built-in rerankers live in :mod:`scidx.rerank`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from scidx.errors import RerankError
from scidx.index.hits import Hit

__all__ = [
    "DEFAULT_RERANK_TOP",
    "STAGE_RERANKING",
    "FixedQuery",
    "Reranker",
    "checked_scores",
    "passage",
    "rerank_order",
]

#: The progress stage name of reranking (``on_stage`` and :class:`StageEvent`).
STAGE_RERANKING = "reranking"

#: Candidates a reranker rescores when ``rerank_top`` is not given: enough for a cross-encoder
#: to lift a relevant chunk from the second page, few enough for a CPU budget (docs/rerank.md).
DEFAULT_RERANK_TOP = 20


@runtime_checkable
class Reranker(Protocol):
    """Rescores candidate chunks for a query (see the module docstring for the contract)."""

    name: str

    def stamp(self) -> Mapping[str, object]:
        """The reranker's identity: ``provider``, ``model`` and any setting that changes scores."""
        ...

    def rerank(self, query: str, candidates: Sequence[Hit]) -> Sequence[float]:
        """One score per candidate, in order; higher is more relevant.

        Raises:
            RerankError: The model or service failed.
        """
        ...


def passage(hit: Hit) -> str:
    """The text a built-in reranker scores for ``hit``: its heading path, then its text.

    The heading path carries what the chunk is about when the body does not repeat it (a
    "Configuration" section saying only "set ``x`` to 3"), as a document title does in BEIR.
    """
    heading = hit.heading
    text = hit.text or hit.snippet
    return f"{heading}\n{text}" if heading and not text.startswith(heading) else text


def checked_scores(reranker: Reranker, scores: object, count: int) -> list[float]:
    """``scores`` as ``count`` finite floats, or a :class:`RerankError` naming the reranker."""
    name = getattr(reranker, "name", type(reranker).__name__)
    try:
        values = [float(s) for s in scores]  # type: ignore[attr-defined]  # checked below
    except (TypeError, ValueError):
        raise RerankError(
            f"reranker {name!r} returned {type(scores).__name__}, not a list of numbers; a "
            "reranker must return one float per candidate"
        ) from None
    if len(values) != count:
        raise RerankError(
            f"reranker {name!r} returned {len(values)} scores for {count} candidates; a "
            "reranker must return one score per candidate, in order"
        )
    bad = next((i for i, v in enumerate(values) if not math.isfinite(v)), None)
    if bad is not None:
        raise RerankError(
            f"reranker {name!r} returned a non-finite score ({values[bad]}) for candidate "
            f"{bad}; check the model (a broken export can output NaN)"
        )
    return values


def rerank_order(
    reranker: Reranker, query: str, hits: Sequence[Hit]
) -> tuple[list[int], list[float]]:
    """Positions of ``hits`` in reranked order and their new scores (ties: retrieval order)."""
    if not hits:
        return [], []
    scores = checked_scores(reranker, reranker.rerank(query, hits), len(hits))
    order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
    return order, [scores[i] for i in order]


class FixedQuery:
    """A reranker that always scores against one query (the question, not a lexical override).

    A retriever whose keyword leg searches an override (``text_query``) passes that text to the
    searcher; reranking must still judge relevance to the user's question.
    """

    def __init__(self, inner: Reranker, query: str) -> None:
        self.inner = inner
        self.query = query
        self.name = inner.name

    def stamp(self) -> Mapping[str, object]:
        """The wrapped reranker's stamp."""
        return self.inner.stamp()

    def rerank(self, query: str, candidates: Sequence[Hit]) -> Sequence[float]:
        """Score ``candidates`` against the fixed question, whatever ``query`` is."""
        return self.inner.rerank(self.query, candidates)
