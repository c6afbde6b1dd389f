"""Fusion: hybrid search's default settings, and reciprocal-rank fusion of ranked lists.

A module of its own, below both :mod:`scidx.embed` and :mod:`scidx.index`, so that the runtime
knows the defaults without importing the embedding layer (a keyword search imports no embedder).
:func:`rrf_fuse` merges the lists of several indexes, whose scores are not on one scale (the
RAG layer's ``MultiIndexRetriever`` and the web app's ``GET /search`` both use it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

__all__ = ["DEFAULT_FUSION", "RRF_K", "rrf_fuse"]

_T = TypeVar("_T")

#: The reciprocal-rank-fusion constant (Cormack et al. 2009); 60 is the usual choice.
RRF_K = 60

#: How hybrid search fuses its two legs unless a provider says otherwise (written into every
#: index header as ``meta.fusion``): the max-normalised weighted sum with weight ``alpha`` on the
#: vector leg, whose query is expanded with the ``prfDocs`` best keyword hits at weight
#: ``prfBeta`` (see :mod:`scidx.index.search`). Tuned on SciFact train for the hashing provider.
DEFAULT_FUSION: dict[str, Any] = {
    "method": "weighted-sum",
    "alpha": 0.3,
    "prfDocs": 3,
    "prfBeta": 2.0,
    # No floor: a chunk without a query term is never a hit (the hashing vectors only reorder).
    "vectorFloor": None,
}


def rrf_fuse(lists: Sequence[Sequence[_T]], rrf_k: int = RRF_K) -> list[tuple[float, _T]]:
    """Reciprocal-rank fusion: every item of every list with its fused score, best first.

    The item at (1-based) rank ``r`` of its list scores ``1 / (rrf_k + r)``; only ranks count,
    so lists scored on different scales can be merged. Items are not deduplicated (each list
    is one index's own). Ties go to the earlier list, then the better rank, so the order is
    deterministic.
    """
    scored = [
        (1.0 / (rrf_k + rank), position, rank, item)
        for position, items in enumerate(lists)
        for rank, item in enumerate(items, start=1)
    ]
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    return [(score, item) for score, _, _, item in scored]
